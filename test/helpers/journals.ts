// Journals for the report tests. Golden journals were recorded from real runs of this harness
// (test/fixtures/journals/, see its README), so a report test sees exactly what a user's run
// writes, verdict included. For the few cases a real run cannot give on demand — a run cut short,
// entry types this harness does not know, a flood of entries, hostile bytes — a small builder
// derives journals from them. Everything here is typed against JournalEntry/JournalEvent, so a
// fixture cannot drift from the schema the harness writes; the one deliberate exception,
// `foreignEvent`, refuses any type the schema knows.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JOURNAL_SCHEMA, type JournalEntry, type JournalEvent, readJournal } from '../../harness/record/journal.js';
import type { Verdict } from '../../harness/findings/verdict.js';

/** The golden journals: scenario, then the consumer (the reference client unless a mutant is named). */
export const GOLDEN_NAMES = [
  'ack-crash-pass',
  'ack-crash-ack-before-commit',
  'resync-required-pass',
  'cuts-pass',
  'malformed-plus-sign-lenient',
  'mid-transaction-split-commit',
  'duplicate-delivery-no-dedupe',
] as const;

/** The feed lab's golden journals (reference consumer): kept apart, so the ledger's report tests keep their own set. */
export const FEED_GOLDEN_NAMES = ['feed-happy-path-pass', 'feed-acceptance-pass', 'feed-crash-apply-pass', 'feed-cut-30s-pass'] as const;

/** The feed lab's server runs (the TypeScript reference server): kept apart, their reports speak of the server and its probes. */
export const SERVER_GOLDEN_NAMES = ['feed-server-slow-reader', 'feed-server-two-instances-pass'] as const;

export type GoldenName = (typeof GOLDEN_NAMES)[number] | (typeof FEED_GOLDEN_NAMES)[number] | (typeof SERVER_GOLDEN_NAMES)[number];

export const fixturesDir = fileURLToPath(new URL('../fixtures/journals/', import.meta.url));

/** A golden journal, as `readJournal` gives it: a fresh copy on every call, so a test may change it. */
export function golden(name: GoldenName): JournalEntry[] {
  return readJournal(join(fixturesDir, `${name}.jsonl`));
}

export type EntryOf<T extends JournalEntry['type']> = Extract<JournalEntry, { type: T }>;

/** Every entry type of the schema: a compile error here when journal.ts gains or loses one. */
const SCHEMA_TYPES: Record<JournalEntry['type'], true> = {
  'run-start': true,
  'outbox-locked': true,
  toxiproxy: true,
  seal: true,
  room: true,
  leftovers: true,
  scenario: true,
  stream: true,
  proxy: true,
  'process-start': true,
  'process-stopped': true,
  'process-continued': true,
  'process-exit': true,
  wire: true,
  'store-read': true,
  fault: true,
  loss: true,
  memory: true,
  party: true,
  'outbox-commit': true,
  'crowd-client': true,
  verdict: true,
  'harness-error': true,
  'run-end': true,
};

/** An event at a time, as the journal writer stamps it (milliseconds, three decimals). */
export const at = (t: number, event: JournalEvent): JournalEntry => ({ t: Math.round(t * 1000) / 1000, ...event });

/**
 * An event of a type this harness does not know (as a newer harness would write): the only event
 * here outside the schema, on purpose. A type the schema knows is refused — build those as
 * typed JournalEvents.
 */
export function foreignEvent(type: string, fields: Record<string, unknown> = {}): JournalEvent {
  if (Object.hasOwn(SCHEMA_TYPES, type)) throw new Error(`foreignEvent: '${type}' is a schema type; write it as a typed JournalEvent`);
  return { type, ...fields } as unknown as JournalEvent;
}

/** The first entry of `type` that `match` accepts; throws (naming it) when a fixture has none. */
export function find<T extends JournalEntry['type']>(journal: readonly JournalEntry[], type: T, match: (e: EntryOf<T>) => boolean = () => true): EntryOf<T> {
  const found = journal.find((e): e is EntryOf<T> => e.type === type && match(e as EntryOf<T>));
  if (!found) throw new Error(`no ${type} entry of that kind in the journal`);
  return found;
}

function indexOf(journal: readonly JournalEntry[], entry: JournalEntry): number {
  const i = journal.indexOf(entry);
  if (i < 0) throw new Error('that entry is not in this journal');
  return i;
}

/** The journal of a run interrupted right after `entry` (no verdict, no run-end). */
export function cutAfter(journal: readonly JournalEntry[], entry: JournalEntry): JournalEntry[] {
  return journal.slice(0, indexOf(journal, entry) + 1);
}

/** The journal with `events` inserted right after `entry`, timed between it and the next entry. */
export function insertAfter(journal: readonly JournalEntry[], entry: JournalEntry, ...events: JournalEvent[]): JournalEntry[] {
  const i = indexOf(journal, entry);
  const t0 = entry.t;
  const t1 = journal[i + 1]?.t ?? t0 + events.length + 1;
  const step = (t1 - t0) / (events.length + 1);
  return [...journal.slice(0, i + 1), ...events.map((e, k) => at(t0 + step * (k + 1), e)), ...journal.slice(i + 1)];
}

/** The journal with `events` appended, a millisecond apart. */
export function append(journal: readonly JournalEntry[], ...events: JournalEvent[]): JournalEntry[] {
  const last = journal[journal.length - 1]?.t ?? 0;
  return [...journal, ...events.map((e, k) => at(last + k + 1, e))];
}

/** The journal with `entry` replaced (typed: the replacement is a JournalEntry too). */
export function replace<E extends JournalEntry>(journal: readonly JournalEntry[], entry: E, change: (e: E) => JournalEntry): JournalEntry[] {
  const i = indexOf(journal, entry);
  return journal.map((e, k) => (k === i ? change(entry) : e));
}

/** The journal with its verdict changed: for renderers fed text a real checker would not write. */
export function withVerdict(journal: readonly JournalEntry[], change: (v: Verdict) => Verdict): JournalEntry[] {
  return replace(journal, find(journal, 'verdict'), (e) => ({ ...e, verdict: change(e.verdict) }));
}

/** The journal with what a consumer incarnation printed replaced (its exit entry's tails and byte counts). */
export function withOutput(journal: readonly JournalEntry[], incarnation: number, output: { stdout?: string; stderr?: string }): JournalEntry[] {
  const exit = find(journal, 'process-exit', (e) => e.role === 'consumer' && e.incarnation === incarnation);
  return replace(journal, exit, (e) => ({
    ...e,
    ...(output.stdout === undefined ? {} : { stdoutTail: output.stdout, stdoutBytes: Buffer.byteLength(output.stdout) }),
    ...(output.stderr === undefined ? {} : { stderrTail: output.stderr, stderrBytes: Buffer.byteLength(output.stderr) }),
  }));
}

/** A run whose harness failed: the journal up to `entry`, then the harness error and an `error` run-end (as runner.ts writes them). */
export function harnessFailed(journal: readonly JournalEntry[], entry: JournalEntry, message: string): JournalEntry[] {
  return append(cutAfter(journal, entry), { type: 'harness-error', message }, { type: 'run-end', status: 'error' });
}

/** Output no report may pass through raw: markup, quotes, control bytes. */
export const HOSTILE = {
  stdout: '<script>alert("x")</script>\n',
  stderr: "</pre><img src=x onerror=alert(1)> & 'quoted' \u0000\u001b[31m",
  wireLine: 'EVENT <b>1</b> \u0007\n',
} as const;

/**
 * A flood: one consumer process whose one connection carries `n` in-order EVENT/ACK pairs
 * (EVENT s at 10 + s ms, its ACK half a millisecond later), then the publisher closes it.
 */
export function inOrderRun(n: number, name = 'in-order'): JournalEntry[] {
  const events: [number, JournalEvent][] = [
    [
      0,
      {
        type: 'run-start',
        schema: JOURNAL_SCHEMA,
        runId: `20260101-000000-${name}-test`,
        scenario: { name, file: `/lab/scenarios/ledger/${name}.yaml`, description: `${n} events in order` },
        harnessVersion: '0.1.0',
        node: 'v20.0.0',
        platform: 'linux-x64',
        cwd: '/lab',
        protocol: 'ledger',
        consumerCommand: 'node client.js',
        controlCommand: 'node client.js',
      },
    ],
    [1, { type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 1, db: 'consumer.db' }],
    [2, { type: 'process-start', role: 'consumer', incarnation: 1, pid: 100, command: 'node client.js', env: {} }],
    [3, { type: 'wire', stream: 'consumer', conn: 1, kind: 'open', tag: 'incarnation 1', owner: { role: 'consumer', incarnation: 1 } }],
    [4, { type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' }],
  ];
  for (let s = 0; s < n; s++) {
    events.push([10 + s, { type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${s} 1\n` }]);
    events.push([10.5 + s, { type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `ACK ${s}\n` }]);
  }
  events.push([20 + n, { type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'publisher', reason: 'all events acknowledged' }]);
  return events.map(([t, e]) => at(t, e));
}

/** How many lines went over the wire (send and recv): what the diagram draws as arrows or counts in bands. */
export const wireLines = (journal: readonly JournalEntry[]): number =>
  journal.filter((e) => e.type === 'wire' && (e.kind === 'send' || e.kind === 'recv')).length;

/** A journal as the writer puts it on disk: one JSON line per entry. */
export const jsonl = (journal: readonly JournalEntry[]): string => journal.map((e) => `${JSON.stringify(e)}\n`).join('');

/** A run folder holding `journal` as journal.jsonl (plus `tail`, e.g. a last line cut mid-write). */
export function writeRunFolder(runDir: string, journal: readonly JournalEntry[], tail = ''): string {
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'journal.jsonl'), jsonl(journal) + tail);
  return runDir;
}
