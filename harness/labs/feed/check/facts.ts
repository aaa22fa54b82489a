// What the harness saw, regrouped for the checker: per connection of each stream (its owner,
// its subscribe and the durable state read at that moment, every frame the publisher sent,
// pings and pongs, how it ended) and per process (its fault plan, its reads, its exit, the
// end-of-run SIGTERM). Read from the journal alone, so the checker runs without any process.

import { type ServerFrame, type SubscribeFrame, FrameError, parseServerFrame } from '../../../../protocol/feed/frames.js';
import { rawTopLevelMember } from '../../../../protocol/feed/raw-json.js';
import type { JournalEntry, Role, StoreReadWhen } from '../../../record/journal.js';
import type { ProcessRef } from '../../../findings/verdict.js';
import { frameBreak } from './grammar.js';
import type { FeedStoreSnapshot } from './store-reader.js';

/** `store-read.when` values of this lab's reads (see READ_AT in run.ts). */
export type ReadWhen = StoreReadWhen;

/** The contract: exit 0 within 2 s of SIGTERM. */
export const SIGTERM_EXIT_MS = 2000;

/** The `fault` entry names the run writes when it sends the end-of-run SIGTERM. */
export const SIGTERM_FAULT = { consumer: 'end-of-run-consumer', control: 'end-of-run-control' } as const;

export interface SentFrame {
  t: number;
  line: string;
  note?: string;
  /** The frame as a consumer parses it; `invalid` when it must refuse it, `unknownOp` when it must ignore it. */
  frame?: ServerFrame;
  invalid?: string;
  unknownOp?: string;
  /** Characters the journal cut from the line (harness/record/wire-journal.ts). */
  cut?: number;
}

export interface ConnFacts {
  stream: string;
  role: Role;
  conn: number;
  owner?: ProcessRef;
  openedAt: number;
  closedAt?: number;
  closedBy?: string;
  closeReason?: string;
  subscribe?: { t: number; line: string; frame?: SubscribeFrame; topics?: unknown; error?: string };
  /** The consumer's store as read when its subscribe arrived (before anything was answered). */
  atSubscribe?: { t: number; store: FeedStoreSnapshot };
  sent: SentFrame[];
  /** Pings the publisher sent (id as written) and the pongs it got back. */
  pings: { id: string; t: number }[];
  pongs: Map<string, number>;
  /** Lines from the consumer that broke the grammar. */
  recvErrors: { t: number; line: string; error: string }[];
  notes: { t: number; text: string }[];
}

/** A process's exit as the checks read it, from its journal entry. */
export function exitFacts(e: Extract<JournalEntry, { type: 'process-exit' }>): NonNullable<ProcessFacts['exit']> {
  return { t: e.t, code: e.code, signal: e.signal, ...(e.killedBy ? { killedBy: e.killedBy } : {}), durationMs: e.durationMs, stderrTail: e.stderrTail };
}

/** The last non-empty line of a process's output (at most 200 characters): what it said last. */
export const lastLine = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1)
    ?.slice(0, 200) ?? '';

export interface ProcessFacts {
  role: Role;
  incarnation: number;
  fault?: string;
  pid?: number;
  startedAt?: number;
  env?: Record<string, string>;
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string; durationMs: number; stderrTail: string };
  /** When the harness sent the end-of-run SIGTERM. */
  sigtermAt?: number;
  reads: { t: number; when: ReadWhen; store: FeedStoreSnapshot }[];
  conns: ConnFacts[];
}

export interface RunFacts {
  streams: Record<Role, { stream: string; db: string } | undefined>;
  consumers: ProcessFacts[];
  control: ProcessFacts;
  /** Connections of each role's stream, in order. */
  conns: Record<Role, ConnFacts[]>;
  /** Network faults: when each was in force (journal time). */
  faultWindows: { name: string; kind: string; detail: string; from: number; to?: number }[];
}

const stripLf = (line: string): string => (line.endsWith('\n') ? line.slice(0, -1) : line);

/** A sent line as the consumer must read it. */
export function parseSent(t: number, line: string, chainId: number, note?: string, cut = 0): SentFrame {
  const base = { t, line, ...(note === undefined ? {} : { note }), ...(cut > 0 ? { cut } : {}) };
  // A cut line is judged by its length: its kept head is never JSON, whether the whole line was or not.
  const tooLong = cut > 0 ? frameBreak(line, 'send', cut) : undefined;
  if (tooLong !== undefined) return { ...base, invalid: tooLong };
  try {
    const parsed = parseServerFrame(stripLf(line), { chainId });
    return parsed.kind === 'frame' ? { ...base, frame: parsed.frame } : { ...base, unknownOp: parsed.op };
  } catch (error) {
    if (error instanceof FrameError) return { ...base, invalid: error.reason };
    throw error;
  }
}

function subscribeOf(t: number, line: string, error: string | undefined): NonNullable<ConnFacts['subscribe']> {
  const text = stripLf(line);
  let raw: Record<string, unknown> | undefined;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    raw = undefined;
  }
  if (error || !raw) return { t, line, error: error ?? 'not JSON' };
  const frame: SubscribeFrame = {
    op: 'subscribe',
    client: raw.client as string,
    topics: raw.topics as string[],
    cursor: (raw.cursor ?? null) as string | null,
    blockHash: (raw.blockHash ?? null) as string | null,
  };
  return { t, line, frame, topics: raw.topics };
}

type WireEntry = Extract<JournalEntry, { type: 'wire' }>;

/** A connection as it opened: nothing sent or received yet. */
function openedConn(e: Extract<WireEntry, { kind: 'open' }>, role: Role): ConnFacts {
  return {
    stream: e.stream,
    role,
    conn: e.conn,
    ...(e.owner ? { owner: e.owner } : {}),
    openedAt: e.t,
    sent: [],
    pings: [],
    pongs: new Map(),
    recvErrors: [],
    notes: [],
  };
}

/** One more wire entry of an open connection: its close, a note, a line sent (pings kept) or received (its subscribe, pongs, broken lines). */
function followLine(c: ConnFacts, e: WireEntry, chainId: number): void {
  if (e.kind === 'close') {
    if (c.closedAt === undefined) Object.assign(c, { closedAt: e.t, closedBy: e.by, closeReason: e.reason });
  } else if (e.kind === 'note') c.notes.push({ t: e.t, text: e.text });
  else if (e.kind === 'send') {
    const sent = parseSent(e.t, e.line, chainId, e.note, e.truncated);
    c.sent.push(sent);
    if (sent.frame?.op === 'ping') c.pings.push({ id: rawTopLevelMember(stripLf(e.line), 'id') ?? String(sent.frame.id), t: e.t });
  } else if (e.kind === 'recv') {
    if (e.error) {
      c.recvErrors.push({ t: e.t, line: e.line, error: e.error });
      if (!c.subscribe) c.subscribe = subscribeOf(e.t, e.line, e.error);
      return;
    }
    const text = stripLf(e.line);
    const op = opOf(text);
    if (op === 'subscribe' && !c.subscribe) c.subscribe = subscribeOf(e.t, e.line, undefined);
    else if (op === 'pong') {
      const id = rawTopLevelMember(text, 'id');
      if (id !== undefined && !c.pongs.has(id)) c.pongs.set(id, e.t);
    }
  }
}

/** A fault applied opens its window; lifted, it closes the window of that name still open. */
function trackFaultWindow(windows: RunFacts['faultWindows'], e: Extract<JournalEntry, { type: 'fault' }>): void {
  if (e.action === 'apply') {
    windows.push({ name: e.name, kind: e.kind, detail: e.detail, from: e.t });
    return;
  }
  const open = windows.find((w) => w.name === e.name && w.to === undefined);
  if (open) open.to = e.t;
}

export function factsOf(journal: readonly JournalEntry[], chainId: number): RunFacts {
  const streams: RunFacts['streams'] = { consumer: undefined, control: undefined };
  const roleOfStream = new Map<string, Role>();
  const conns: RunFacts['conns'] = { consumer: [], control: [] };
  const byKey = new Map<string, ConnFacts>();
  const consumers: ProcessFacts[] = [];
  const control: ProcessFacts = { role: 'control', incarnation: 1, reads: [], conns: [] };
  const processOf = (role: Role, n: number | undefined): ProcessFacts => {
    if (role === 'control') return control;
    const i = (n ?? 1) - 1;
    consumers[i] ??= { role: 'consumer', incarnation: i + 1, reads: [], conns: [] };
    return consumers[i]!;
  };
  const faultWindows: RunFacts['faultWindows'] = [];
  /** The connection each at-subscribe read goes with. */
  for (const e of journal) {
    switch (e.type) {
      case 'stream':
        streams[e.role] = { stream: e.stream, db: e.db };
        roleOfStream.set(e.stream, e.role);
        break;
      case 'process-start': {
        if (e.role === 'server') break; // the server under test: judged by server/, not here
        const p = processOf(e.role, e.incarnation);
        Object.assign(p, { pid: e.pid, startedAt: e.t, env: e.env });
        if (e.env.CHAOSLAB_FAULT !== undefined) p.fault = e.env.CHAOSLAB_FAULT;
        break;
      }
      case 'process-exit':
        if (e.role === 'server') break;
        processOf(e.role, e.incarnation).exit = exitFacts(e);
        break;
      case 'store-read': {
        const store = e.store as FeedStoreSnapshot;
        const when = e.when as ReadWhen;
        if (when === 'final') break;
        processOf(e.role, e.incarnation).reads.push({ t: e.t, when, store });
        if (when === 'at-subscribe' && store.conn !== undefined) {
          const stream = streams[e.role]?.stream;
          const c = stream === undefined ? undefined : byKey.get(`${stream}#${store.conn}`);
          if (c) c.atSubscribe = { t: e.t, store };
        }
        break;
      }
      case 'fault':
        if (e.name === SIGTERM_FAULT.consumer && e.incarnation !== undefined) processOf('consumer', e.incarnation).sigtermAt = e.t;
        else if (e.name === SIGTERM_FAULT.control) control.sigtermAt = e.t;
        else if (e.kind !== 'signal') trackFaultWindow(faultWindows, e);
        break;
      case 'wire': {
        const role = roleOfStream.get(e.stream);
        if (!role) break;
        const key = `${e.stream}#${e.conn}`;
        if (e.kind === 'open') {
          const c = openedConn(e, role);
          byKey.set(key, c);
          conns[role].push(c);
          if (e.owner && e.owner.role !== 'server') processOf(e.owner.role, e.owner.incarnation).conns.push(c);
          break;
        }
        const c = byKey.get(key);
        if (c) followLine(c, e, chainId);
        break;
      }
      default:
        break;
    }
  }
  return { streams, consumers: consumers.filter(Boolean), control, conns, faultWindows };
}

function opOf(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as { op?: unknown };
    return typeof value?.op === 'string' ? value.op : undefined;
  } catch {
    return undefined;
  }
}

/** Toxics that lose bytes in flight or end connections early; latency, bandwidth and slicing only delay them. */
const LOSSY_TOXICS = new Set(['reset_peer', 'timeout', 'limit_data']);

/** A network fault that can lose bytes in flight (a cut, a reset, a timeout, a data limit), in force between `from` and `to`. */
export function lossyFaultBetween(facts: RunFacts, from: number, to: number): string | undefined {
  const lossy = (w: RunFacts['faultWindows'][number]) => w.kind === 'proxy-down' || (w.kind === 'toxic' && LOSSY_TOXICS.has(w.detail.split(' ')[0] ?? ''));
  return facts.faultWindows.find((w) => lossy(w) && w.from <= to && (w.to ?? Number.POSITIVE_INFINITY) >= from)?.name;
}
