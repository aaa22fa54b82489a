// The probes' wire record against the server contract (findings as data): the first frame after
// every `subscribe` is the one it was due (the `due:` notes the run wrote as the frames passed),
// revokes come from a fork point of the chain, events go in cursor order, a `reset` comes only
// when due (stale-cursor when retention deleted what was not sent, shutdown after a SIGTERM), and
// every probe connected to an instance that got SIGTERM hears `reset shutdown` before the close.

import { compareCursors, parseCursor } from '../../../../../protocol/feed/cursor.js';
import type { ServerFrame } from '../../../../../protocol/feed/frames.js';
import type { Finding } from '../../../../findings/verdict.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { parseSent } from '../../check/facts.js';
import { cursorSubject } from '../../report/words.js';
import { type DueKind, parseDueNote } from './wire-due.js';
import { SERVER_SIGNAL, SIGNAL_NAME, TAG } from './names.js';

type Due = { kind: DueKind; cursor?: string; text: string };
type Item = { t: number; frame?: ServerFrame; line: string } | { t: number; due: Due };

export interface ProbeConn {
  stream: string;
  conn: number;
  probe: number;
  instance?: number;
  openedAt: number;
  closedAt?: number;
  subscribe?: { t: number; cursor: string | null };
  /** The `due:` notes written between the subscribe and the first answer. */
  dues: Due[];
  /** Frames sent and later `due:` notes, in order. */
  items: Item[];
}

const isProbeStream = (stream: string): boolean => stream === 'probe' || /^probe-\d+$/.test(stream);

function subscribeCursor(line: string): { cursor: string | null } | undefined {
  try {
    const f = JSON.parse(line) as { op?: unknown; cursor?: unknown };
    return f.op === 'subscribe' ? { cursor: typeof f.cursor === 'string' ? f.cursor : null } : undefined;
  } catch {
    return undefined;
  }
}

/** The probes' connections, from the journal's wire entries. */
export function probeConnsOf(journal: readonly JournalEntry[], chainId: number): ProbeConn[] {
  const byKey = new Map<string, ProbeConn>();
  const all: ProbeConn[] = [];
  for (const e of journal) {
    if (e.type !== 'wire' || !isProbeStream(e.stream)) continue;
    const key = `${e.stream}#${e.conn}`;
    if (e.kind === 'open') {
      const tag = e.tag === undefined ? undefined : TAG.exec(e.tag);
      const c: ProbeConn = { stream: e.stream, conn: e.conn, probe: e.owner?.incarnation ?? 1, openedAt: e.t, dues: [], items: [] };
      if (tag) c.instance = Number(tag[1]);
      byKey.set(key, c);
      all.push(c);
      continue;
    }
    const c = byKey.get(key);
    if (!c) continue;
    if (e.kind === 'close') c.closedAt ??= e.t;
    else if (e.kind === 'recv' && !c.subscribe) {
      const sub = subscribeCursor(e.line);
      if (sub) c.subscribe = { t: e.t, ...sub };
    } else if (e.kind === 'note') {
      const due = parseDueNote(e.text);
      if (due && c.subscribe && !c.items.some((i) => 'frame' in i && answers(i.frame))) c.dues.push(due);
      else if (due) c.items.push({ t: e.t, due });
    } else if (e.kind === 'send' && c.subscribe) {
      const sent = parseSent(e.t, e.line, chainId);
      c.items.push({ t: e.t, line: e.line, ...(sent.frame ? { frame: sent.frame } : {}) });
    }
  }
  return all;
}

/** A frame that answers a subscribe (heartbeats do not). */
const answers = (f: ServerFrame | undefined): boolean => f !== undefined && f.op !== 'ping' && f.op !== 'pong';

const after = (a: string, b: string): boolean => compareCursors(parseCursor(a), parseCursor(b)) > 0;

function describe(f: ServerFrame): string {
  if (f.op === 'event') return `event ${f.cursor}`;
  if (f.op === 'revoke') return `revoke from ${f.fromCursor}`;
  if (f.op === 'reset') return `reset ${f.reason}`;
  if (f.op === 'snapshot') return `a snapshot at ${f.cursor}`;
  return f.op;
}

function matches(due: Due, f: ServerFrame, subscribed: string | null): boolean {
  switch (due.kind) {
    case 'snapshot':
      return f.op === 'snapshot';
    case 'stale':
      return f.op === 'reset' && f.reason === 'stale-cursor';
    case 'revoke':
      return f.op === 'revoke' && f.fromCursor === due.cursor;
    case 'replay':
      return f.op === 'event' && (due.cursor ? f.cursor === due.cursor : subscribed !== null && after(f.cursor, subscribed));
    default:
      return false;
  }
}

const who = (c: ProbeConn): string => `probe ${c.probe} (connection ${c.conn}${c.instance ? ` to instance ${c.instance}` : ''})`;

/** The first answer against what its subscribe was due. */
function firstAnswerProblem(c: ProbeConn): Finding | undefined {
  const first = c.items.find((i): i is Extract<Item, { frame?: ServerFrame }> => 'line' in i && answers(i.frame));
  const due = c.dues[0];
  if (!c.subscribe || !first?.frame || !due || c.dues.some((d) => matches(d, first.frame!, c.subscribe!.cursor))) return undefined;
  const f = first.frame;
  const cursor = c.subscribe.cursor ?? 'null';
  const subject = { process: { role: 'control' as const, incarnation: c.probe }, t: first.t };
  const why = due.text.replace(/^due: \S+(?: \S+)? — /, '');
  if (due.kind === 'stale' && f.op !== 'snapshot' && f.op !== 'reset')
    return {
      code: 'partial-history',
      text: `a partial history served as complete: ${who(c)}: its subscribe with cursor ${cursor} was due \`reset stale-cursor\` (${why}), but the server sent ${describe(f)} (server contract §3: never serve a partial history as if it were complete)`,
      subject,
    };
  if (due.kind === 'revoke' && f.op === 'revoke')
    return {
      code: 'revoke-wrong-point',
      text: `${who(c)}: revoke from ${f.fromCursor} is not the fork point: ${why}, so the revoke must be from ${due.cursor} (server contract §3)`,
      subject: { ...subject, ...cursorSubject([f.fromCursor, due.cursor!]) },
    };
  if (due.kind === 'replay' && due.cursor && f.op === 'event' && after(f.cursor, due.cursor))
    return {
      code: 'replay-gap',
      text: `a resume not served from the outbox (state kept in memory?): ${who(c)}: resumed after ${cursor}, the server skipped ${due.cursor} and what follows: its first event was ${f.cursor}, though the outbox held ${due.cursor} above the cursor (server contract §1: a client resumes from its cursor alone, on this process or a restarted one; the server keeps no state a restart could lose)`,
      subject: { ...subject, ...cursorSubject([due.cursor, f.cursor]) },
    };
  if (due.kind === 'replay' && f.op === 'reset')
    return { code: 'reset-not-due', text: `${who(c)}: its subscribe with cursor ${cursor} got reset ${f.reason}, but nothing made it due: ${why}`, subject };
  const wanted = due.kind === 'invalid' ? 'nothing (an invalid subscribe is closed without a word)' : due.text.replace(/^due: /, '');
  return {
    code: 'wrong-first-frame',
    text: `${who(c)}: the first frame after its subscribe (cursor ${cursor}) was ${describe(f)}; due: ${wanted} (server contract §3)`,
    subject,
  };
}

export interface WireCheckInput {
  journal: readonly JournalEntry[];
  chainId: number;
  /** Every fork point of the chain's reorganisations (block numbers). */
  forkPoints: readonly number[];
}

/** When each instance of a scene got SIGTERM from the harness (a step, or the end of the run); a lone server's: resetDueSigterms. */
function sigtermsOf(journal: readonly JournalEntry[]): { instance: number; t: number }[] {
  return journal.flatMap((e) => {
    if (e.type !== 'fault' || e.action !== 'apply') return [];
    const m = SIGNAL_NAME.exec(e.name);
    return m && m[1] !== 'kill' ? [{ instance: Number(m[2]), t: e.t }] : [];
  });
}

/**
 * The SIGTERMs that make `reset shutdown` due: a scene's, and a lone server's at the end of the
 * run (its connections are tagged instance 1). Under load the server can still hold a probe's
 * connection when it gets that SIGTERM (the probe has exited, its close not yet through the
 * proxy), and the reset it then sends is due. Which connections are owed one stays a scene's
 * question (shutdownProblems): a lone server's exit is judged in server-problems.ts.
 */
function resetDueSigterms(journal: readonly JournalEntry[], scene: { instance: number; t: number }[]): { instance: number; t: number }[] {
  const lone = journal.filter((e) => e.type === 'fault' && e.action === 'apply' && e.name === SERVER_SIGNAL.sigterm);
  return [...scene, ...lone.map((e) => ({ instance: 1, t: e.t }))];
}

type Floor = { block: number; logIndex: number; text: string };
const floorOf = (cursor: string): Floor => {
  const c = parseCursor(cursor);
  return { block: c.blockNumber, logIndex: c.logIndex, text: cursor };
};
const above = (cursor: string, floor: Floor): boolean => {
  const c = parseCursor(cursor);
  return c.blockNumber > floor.block || (c.blockNumber === floor.block && c.logIndex > floor.logIndex);
};

/** Revokes from a fork point, events in cursor order, resets when due: the first finding of each kind per connection. */
function streamProblems(c: ProbeConn, forkPoints: readonly number[], sigterms: { instance: number; t: number }[]): Finding[] {
  const out = new Map<string, Finding>();
  const add = (f: Finding) => out.has(f.code) || out.set(f.code, f);
  const subject = (t: number, cursors: string[] = []) => ({ process: { role: 'control' as const, incarnation: c.probe }, t, ...cursorSubject(cursors) });
  let floor = c.subscribe?.cursor ? floorOf(c.subscribe.cursor) : undefined;
  let lastDue: Due | undefined;
  let answered = false;
  for (const item of c.items) {
    if ('due' in item) {
      lastDue = item.due;
      continue;
    }
    const f = item.frame;
    if (!f) continue;
    const first = !answered && answers(f);
    answered ||= answers(f);
    if (f.op === 'snapshot') floor = floorOf(f.cursor);
    else if (f.op === 'event') {
      if (floor !== undefined && !above(f.cursor, floor))
        add({
          code: 'event-order',
          text: `${who(c)}: the server sent ${f.cursor} after ${floor.text}: out of cursor order (server contract §3: rows go in cursor order, by block and log index, not in the order they were inserted)`,
          subject: subject(item.t, [f.cursor]),
        });
      floor = floorOf(f.cursor);
    } else if (f.op === 'revoke') {
      const fork = parseCursor(f.fromCursor);
      if (!first && (fork.logIndex !== 0 || !forkPoints.includes(fork.blockNumber)))
        add({
          code: 'revoke-wrong-point',
          text: `${who(c)}: revoke from ${f.fromCursor} is not the fork point of any reorganisation of the chain (fork points: ${forkPoints.length ? forkPoints.map((b) => `block ${b}`).join(', ') : 'none'}); a revoke starts at position 0000 of the fork block (server contract §3)`,
          subject: subject(item.t, [f.fromCursor]),
        });
      // Everything from the fork block on may come again.
      floor = { block: fork.blockNumber, logIndex: -1, text: `the revoke from ${f.fromCursor}` };
    } else if (f.op === 'reset' && f.reason === 'stale-cursor' && !first && lastDue?.kind === 'nothing')
      add({
        code: 'reset-not-due',
        text: `${who(c)}: reset stale-cursor in mid-stream, but ${lastDue.text.replace(/^due: nothing — /, '')}`,
        subject: subject(item.t),
      });
    else if (f.op === 'reset' && f.reason === 'shutdown' && !sigterms.some((s) => s.instance === c.instance && s.t <= item.t))
      add({
        code: 'reset-not-due',
        text: `${who(c)}: reset shutdown, but the harness had not sent SIGTERM to instance ${c.instance ?? '?'}`,
        subject: subject(item.t),
      });
  }
  return [...out.values()];
}

/** When each probe's process ended (probe n is the control role's incarnation n). */
function probeExits(journal: readonly JournalEntry[]): Map<number, number> {
  const exits = new Map<number, number>();
  for (const e of journal) if (e.type === 'process-exit' && e.role === 'control') exits.set(e.incarnation, e.t);
  return exits;
}

/**
 * Every connection open to an instance when it got SIGTERM, and already served, must hear
 * `reset shutdown` — unless its probe had already ended: the relay can see a probe's close late
 * (it stops reading a probe whose server side is backed up), after the server's SIGTERM.
 */
function shutdownProblems(conns: readonly ProbeConn[], sigterms: { instance: number; t: number }[], exits: Map<number, number>): Finding[] {
  return sigterms.flatMap((s) =>
    conns.flatMap((c) => {
      if (c.instance !== s.instance || c.openedAt > s.t || (c.closedAt ?? Infinity) < s.t) return [];
      if ((exits.get(c.probe) ?? Infinity) <= s.t) return [];
      const served = c.items.some((i) => 'frame' in i && i.frame && i.t <= s.t);
      const reset = c.items.some((i) => 'frame' in i && i.frame?.op === 'reset' && i.frame.reason === 'shutdown' && i.t >= s.t);
      if (!served || reset) return [];
      return [
        {
          code: 'no-shutdown-reset',
          text: `${who(c)}: it was connected when instance ${s.instance} got SIGTERM, but no \`reset shutdown\` came before the connection closed (server contract §1)`,
          subject: { process: { role: 'control', incarnation: c.probe }, t: s.t },
        },
      ];
    }),
  );
}

export function probeWireProblems({ journal, chainId, forkPoints }: WireCheckInput): Finding[] {
  const conns = probeConnsOf(journal, chainId);
  const sigterms = sigtermsOf(journal);
  const due = resetDueSigterms(journal, sigterms);
  const first = conns.flatMap((c) => firstAnswerProblem(c) ?? []);
  const rest = conns.flatMap((c) => streamProblems(c, forkPoints, due).filter((f) => !first.some((g) => g.code === f.code && g.subject?.t === f.subject?.t)));
  return [...first, ...rest, ...shutdownProblems(conns, sigterms, probeExits(journal))];
}
