// What the live console knows of a running scenario, followed from the journal entries as they
// are written: the step it is at, the faults active now, the consumer's progress. The console
// (console.ts) draws it; this module only keeps it up to date and says which milestones to print.

import type { JournalEntry } from '../record/journal.js';
import { Cast } from '../record/cast.js';
import type { Vocabulary } from '../lab-api/lab.js';
import { seconds, showLine } from '../text/format.js';
import { vocabularyFor } from './vocabulary.js';

export interface Live {
  name: string;
  startedAt: number;
  step: string;
  faults: Set<string>;
  consumerStreams: Set<string>;
  /** The consumer's progress: the distinct keys (or positions) of the lab's progress lines. */
  committed: Set<string | number>;
  vocabulary?: Vocabulary;
  events?: number;
  unknownShown: Map<string, number>;
  /** The run's names for its processes (a server run's probes and instances), from its `party` entries. */
  cast: Cast;
}

/** Prints one milestone line of the scenario (the console decides whether it is shown). */
type Milestone = (text: string) => void;

export const newLive = (name: string, startedAt: number): Live => ({
  name,
  startedAt,
  step: 'starting',
  faults: new Set(),
  consumerStreams: new Set(),
  committed: new Set(),
  unknownShown: new Map(),
  cast: new Cast(),
});

/** The status line's words: the step, the active faults, the consumer's progress. */
export function statusText(live: Live): string {
  const parts = [live.step];
  if (live.faults.size) parts.push(`fault${live.faults.size > 1 ? 's' : ''} ${[...live.faults].join(', ')} active`);
  // The lab's word for its progress: ledger consumers commit (and acknowledge), feed consumers are delivered events.
  if (live.committed.size || live.consumerStreams.size)
    parts.push(`${live.committed.size}${live.events ? `/${live.events}` : ''} ${live.vocabulary?.progress.word ?? 'committed'}`);
  return parts.join(' · ');
}

/** A process in the console's words: the run's own name for it, if it gave one. */
const whoIn =
  (cast: Cast) =>
  (e: { role?: string; incarnation?: number }): string =>
    cast.nameOf(e.role, e.incarnation) ?? (e.role === 'control' ? 'control' : e.role === 'server' ? 'server' : `consumer #${e.incarnation ?? '?'}`);

/** Moves `live` on by one journal entry, and prints the milestone it is, if any. */
export function followEntry(s: Live, entry: JournalEntry, milestone: Milestone): void {
  switch (entry.type) {
    case 'run-start':
      s.step = 'loading the scenario';
      s.vocabulary = vocabularyFor(entry.protocol);
      break;
    case 'scenario': {
      const events = (entry.plan as { lab?: { events?: unknown[] } } | undefined)?.lab?.events;
      if (Array.isArray(events)) s.events = events.length;
      s.step = 'starting Toxiproxy';
      break;
    }
    case 'toxiproxy':
      s.step = 'starting the publisher';
      milestone(`toxiproxy ${entry.version} at ${entry.url}${entry.owned ? '' : ' (already running)'}`);
      break;
    case 'stream':
      if (entry.role === 'consumer') s.consumerStreams.add(entry.stream);
      break;
    case 'proxy':
      if (entry.action !== 'create') break;
      if (s.cast.empty) s.step = 'starting the consumers';
      // A server run's clients get their proxies while its probes run: a probe running says more.
      else if (!s.step.endsWith(' running')) s.step = 'starting the probes';
      break;
    case 'party':
      s.cast.add(entry);
      break;
    case 'process-start':
    case 'process-stopped':
    case 'process-continued':
    case 'process-exit':
      followProcess(s, entry, milestone);
      break;
    case 'store-read':
      followStoreRead(s, entry, milestone);
      break;
    case 'wire':
      followWire(s, entry, milestone);
      break;
    case 'verdict':
      s.step = 'writing the reports';
      break;
    case 'harness-error':
      milestone(`harness error: ${entry.message}`);
      break;
    case 'seal':
    case 'room':
    case 'leftovers':
    case 'memory':
    case 'outbox-commit':
    case 'crowd-client':
      // The firewall's counters, a room's disk use, the uid's leftovers, memory samples, a server run's commits and crowd: the verdict says it when they matter.
      break;
    case 'run-end':
      s.step = 'done';
      break;
    default:
      followOther(s, entry as JournalEntry & Record<string, unknown>, milestone);
  }
}

type EntryOf<T extends JournalEntry['type']> = Extract<JournalEntry, { type: T }>;

function followProcess(s: Live, entry: EntryOf<'process-start' | 'process-stopped' | 'process-continued' | 'process-exit'>, milestone: Milestone): void {
  const who = whoIn(s.cast);
  switch (entry.type) {
    case 'process-start': {
      if (entry.role === 'consumer') s.step = `consumer #${entry.incarnation} running`;
      else if (s.cast.ofProcess(entry.role, entry.incarnation)?.side === 'client') s.step = `${who(entry)} running`;
      const fault = entry.env?.CHAOSLAB_FAULT;
      milestone(`${who(entry)} started (pid ${entry.pid}${fault ? `, fault ${fault}` : ''})`);
      break;
    }
    case 'process-stopped':
      s.step = `${who(entry)} stopped itself; reading its file`;
      milestone(`${who(entry)} stopped itself (SIGSTOP)`);
      break;
    case 'process-continued':
      s.step = `${who(entry)} running`;
      milestone(`${who(entry)} continued`);
      break;
    case 'process-exit': {
      const how = entry.killedBy
        ? entry.killedBy === 'deadline'
          ? 'killed at the deadline'
          : `killed by the ${entry.killedBy}`
        : entry.signal
          ? `killed by ${entry.signal}`
          : `exited ${entry.code}`;
      if (entry.role === 'consumer') s.step = `consumer #${entry.incarnation} ended; reading its file`;
      milestone(`${who(entry)} ${how} after ${seconds(entry.durationMs)}`);
      break;
    }
  }
}

function followStoreRead(s: Live, entry: EntryOf<'store-read'>, milestone: Milestone): void {
  if (entry.when === 'final') {
    s.step = 'checking the result';
    return;
  }
  const what = s.vocabulary?.describeStore(entry.store) ?? 'read';
  // A lab's own moments (the feed's read at each subscribe) in its words.
  const moment =
    entry.when === 'while-stopped' ? ' while stopped' : entry.when === 'after-exit' ? '' : ` (${s.vocabulary?.readMoments?.[entry.when] ?? entry.when})`;
  milestone(`${whoIn(s.cast)(entry)}'s file${moment}: ${what}`);
}

function followWire(s: Live, entry: EntryOf<'wire'>, milestone: Milestone): void {
  const progress = s.vocabulary?.progress;
  if (progress && entry.kind === (progress.direction ?? 'recv') && !('error' in entry && entry.error) && s.consumerStreams.has(entry.stream)) {
    const { cls, position, key } = s.vocabulary!.classify(entry.line);
    if (cls === progress.cls && (key ?? position) !== undefined) s.committed.add(key ?? position!);
  }
  if (entry.kind === 'recv' && entry.error) {
    milestone(`${entry.stream} sent a line that breaks the grammar: ${showLine(entry.line).slice(0, 60)} (${entry.error})`);
  }
}

/** Faults (any kind the engine adds) and entry types this console does not know: shown by name, a few times each. */
function followOther(s: Live, e: JournalEntry & Record<string, unknown>, milestone: Milestone): void {
  const type = String(e.type);
  if (type === 'fault') {
    const name = String(e.name ?? e.kind ?? 'fault');
    const label = `${name}${e.kind && e.kind !== name ? ` (${String(e.kind)})` : ''}`;
    const detail = typeof e.detail === 'string' ? ` ${e.detail}` : e.detail !== undefined ? ` ${JSON.stringify(e.detail)}` : '';
    if (e.kind === 'signal') {
      milestone(`fault ${label}:${detail}`);
    } else if (e.action === 'lift') {
      s.faults.delete(name);
      milestone(`fault ${label} lifted`);
    } else {
      s.faults.add(name);
      milestone(`fault ${label} applied${detail}`);
    }
    return;
  }
  const step = typeof e.step === 'string' ? e.step : typeof e.name === 'string' ? e.name : undefined;
  if (step) s.step = `${type} ${step}`;
  const shown = s.unknownShown.get(type) ?? 0;
  s.unknownShown.set(type, shown + 1);
  if (shown < 3) milestone(`${type}${step ? ` ${step}` : ''}`);
}
