// What the journal recorded of one harness-driven client (its wire stream `client:<name>`): the
// lines it read from the server in order, with their parsed op, the lines it sent, when the
// script was over and how many lines it had read by then (a subscriber: the outbox's head at its
// subscribe), and how its connection ended.

import type { JournalEntry } from '../../../../record/journal.js';
import type { CloseParty } from '../../../../../publisher/transcript.js';
import { clientStream, SCENE_OVER_NOTE } from './streams.js';
import { SUBSCRIBED_NOTE } from './crowds/subscribers.js';

export interface ReadLine {
  t: number;
  line: string;
  op?: string;
  frame?: Record<string, unknown>;
}

export interface ClientFacts {
  name: string;
  openedAt?: number;
  read: ReadLine[];
  sent: { t: number; line: string }[];
  /** A subscriber's note: the outbox's head (a block number) when it sent its subscribe. */
  subscribedAtHead?: number;
  /** Lines read when the script was over. */
  sceneOver?: { t: number; linesRead: number };
  close?: { t: number; by: CloseParty; reason: string };
}

function parsed(line: string): Pick<ReadLine, 'op' | 'frame'> {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    const frame = value as Record<string, unknown>;
    return { frame, ...(typeof frame.op === 'string' ? { op: frame.op } : {}) };
  } catch {
    return {};
  }
}

export function clientFactsOf(journal: readonly JournalEntry[], name: string): ClientFacts {
  const stream = clientStream(name);
  const facts: ClientFacts = { name, read: [], sent: [] };
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'open') facts.openedAt = e.t;
    else if (e.kind === 'send') facts.read.push({ t: e.t, line: e.line, ...parsed(e.line) });
    else if (e.kind === 'recv') facts.sent.push({ t: e.t, line: e.line });
    else if (e.kind === 'note' && e.text.startsWith(SCENE_OVER_NOTE))
      facts.sceneOver = { t: e.t, linesRead: Number(/(\d+) lines read/.exec(e.text)?.[1] ?? 0) };
    else if (e.kind === 'note' && e.text.startsWith(SUBSCRIBED_NOTE)) facts.subscribedAtHead = Number(e.text.slice(SUBSCRIBED_NOTE.length));
    else if (e.kind === 'close' && !facts.close) facts.close = { t: e.t, by: e.by, reason: e.reason };
  }
  return facts;
}

/** Who ended it, in words. */
export function endWords(f: ClientFacts): string {
  const c = f.close;
  if (!c) return 'still open';
  if (c.by === 'consumer') return `closed by the client (${c.reason})`;
  return c.by === 'reset' ? 'reset by the server (TCP RST)' : 'closed by the server';
}
