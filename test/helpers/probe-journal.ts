// Hand-made journals of a server run for coverage tests: a probe's connection (its open with the
// instance tag, its subscribe, then frames, `due:` notes and a close, 10 ms apart), the scene's
// fault entries, outbox commits. Not a test file itself.

import type { JournalEntry } from '../../harness/record/journal.js';
import { instanceTag } from '../../harness/labs/feed/server/wire/names.js';
import { cursor, event, eventLine } from './feed-events.js';

export const HASH = `0x${'ab'.repeat(32)}`;
export const ev = (block: number, log = 0): string => eventLine(event(block, log));
export const revoke = (block: number): string => `{"op":"revoke","fromCursor":"${cursor(block, 0)}"}\n`;
export const snapshot = (block: number): string => `{"op":"snapshot","cursor":"${cursor(block, 0)}","blockHash":"${HASH}","state":{"balances":{}}}\n`;

export type Part = string | { note: string } | 'close';

/** Probe `probe`'s connection `conn` to `instance`, from `t0`: its subscribe (cursor null unless given), then `parts`, 10 ms apart. */
export function probeConn(conn: number, t0: number, parts: Part[], opts: { probe?: number; instance?: number; cursor?: string | null } = {}): JournalEntry[] {
  const probe = opts.probe ?? 1;
  const base = { type: 'wire' as const, stream: probe === 1 ? 'probe' : `probe-${probe}`, conn };
  const at = opts.cursor ?? null;
  let t = t0;
  const out: JournalEntry[] = [
    { ...base, t: t, kind: 'open', tag: instanceTag(opts.instance ?? 1), owner: { role: 'control', incarnation: probe } },
    {
      ...base,
      t: (t += 10),
      kind: 'recv',
      line: `{"op":"subscribe","client":"p","topics":["0x${'1'.repeat(40)}"],"cursor":${at === null ? 'null' : `"${at}"`},"blockHash":${at === null ? 'null' : `"${HASH}"`}}\n`,
    },
  ];
  for (const p of parts) {
    t += 10;
    if (p === 'close') out.push({ ...base, t, kind: 'close', by: 'publisher', reason: 'closed' });
    else if (typeof p === 'string') out.push({ ...base, t, kind: 'send', line: p });
    else out.push({ ...base, t, kind: 'note', text: p.note });
  }
  return out;
}

export const fault = (t: number, name: string, action: 'apply' | 'lift' = 'apply'): JournalEntry => ({
  t,
  type: 'fault',
  action,
  name,
  kind: name.startsWith('away-') ? 'proxy-down' : 'signal',
  detail: name,
});

export const commit = (t: number, ...blocks: number[]): JournalEntry => ({ t, type: 'outbox-commit', blocks, logs: blocks.length });

/** Entries sorted by time, as a run journals them. */
export const byTime = (...parts: JournalEntry[][]): JournalEntry[] => parts.flat().sort((a, b) => a.t - b.t);

/** One more frame sent on probe `probe`'s connection `conn` at `t`. */
export const send = (t: number, line: string, conn = 1, probe = 1): JournalEntry => ({
  t,
  type: 'wire',
  stream: probe === 1 ? 'probe' : `probe-${probe}`,
  conn,
  kind: 'send',
  line,
});
