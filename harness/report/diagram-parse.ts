// The journal read into the sequence diagram's model (diagram-model.ts): lanes, and items in
// journal order. Items are handed to `emit` one at a time (not kept), so a 400 000-entry journal
// never holds 400 000 items at once. The lab's vocabulary says what each wire line is and how
// telling; the findings' positions, keys and times say which lines are the culprits.

import type { JournalEntry } from '../record/journal.js';
import { type Cast, castOf } from '../record/cast.js';
import type { Vocabulary } from '../lab-api/lab.js';
import { describeUnknown } from '../text/format.js';
import {
  ESSENTIAL,
  gapWords,
  IRREGULAR,
  type Item,
  KNOWN_TYPES,
  LANDMARK,
  type Lane,
  type LaneKind,
  type Loose,
  PLAIN,
  READ_MOMENTS,
  UNKNOWN_FLOOD,
} from './diagram-model.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** What the findings name: positions (or exact keys, a cursor) and times. */
interface Focus {
  seqs: Set<number>;
  times: Set<number>;
  keys: ReadonlySet<string>;
}

/**
 * Parses the journal into lanes and items, in journal order. The lab's vocabulary says what each
 * wire line is and how telling; `focus` and `focusTimes` are the positions and times the
 * findings name.
 */
export function model(
  journal: readonly JournalEntry[],
  vocabulary: Vocabulary,
  focus: Set<number>,
  focusTimes: Set<number>,
  emit: (item: Item) => void,
  focusKeys: ReadonlySet<string> = new Set(),
): Lane[] {
  const reader = new JournalReader(vocabulary, { seqs: focus, times: focusTimes, keys: focusKeys }, emit, unknownCounts(journal), castOf(journal));
  for (const raw of journal) reader.read(raw as unknown as Loose);
  return reader.lanesInOrder();
}

/** How often each entry type the diagram does not know occurs: a flood of one is traffic, not landmarks. */
function unknownCounts(journal: readonly JournalEntry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const raw of journal) {
    const type = (raw as { type: string }).type;
    if (!KNOWN_TYPES.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Crash, kill or clean exit, in the words of a mark. */
function exitWords(e: Loose): [cls: string, text: string] {
  const killedBy = str(e.killedBy);
  const signal = str(e.signal);
  const code = num(e.code);
  if (killedBy) {
    const who = killedBy === 'deadline' ? 'killed at the deadline' : killedBy === 'harness' ? 'killed by the harness' : `killed (${killedBy})`;
    return ['kill', `${who}${signal ? ` (${signal})` : ''}`];
  }
  if (signal) return ['kill', `killed by ${signal}`];
  return code === 0 ? ['exit', 'exit 0'] : ['crash', `crash: exit ${code ?? '?'}`];
}

class JournalReader {
  private readonly lanes = new Map<string, Lane>();
  private readonly roleOfStream = new Map<string, string>();
  private readonly connState = new Map<string, Map<number, string>>();
  /** The lane at the other end of each connection: the publisher, or the server party its open leads to. */
  private readonly peerOfConn = new Map<string, string>();
  private readonly rank: ReturnType<Vocabulary['newRanker']>;
  private readonly label: ReturnType<NonNullable<Vocabulary['newLabeller']>> | undefined;
  private readonly moments: Record<string, string>;
  /** When a process of each role last lost its connection: an open after it is a reconnect, and says how long the gap was. */
  private readonly lastClose = new Map<string, number>();
  private runningConsumer: number | undefined;
  private lastConsumer: number | undefined;
  private readonly started = new Set<string>();

  constructor(
    private readonly vocabulary: Vocabulary,
    private readonly focus: Focus,
    private readonly emit: (item: Item) => void,
    private readonly unknownCounts: Map<string, number>,
    private readonly cast: Cast,
  ) {
    this.rank = vocabulary.newRanker();
    this.label = vocabulary.newLabeller?.();
    this.moments = { ...READ_MOMENTS, ...vocabulary.readMoments };
    if (cast.empty) {
      this.lane('publisher', 'publisher', 'publisher');
      this.lane('control', 'control', 'control');
    }
    // A run that names its parties has a lane per party, the server side first, in the order it named them.
    for (const side of ['server', 'client'] as const)
      for (const p of cast.parties.filter((q) => q.side === side)) this.lane(`party:${p.id}`, side, p.name).subtitle = p.about ?? '';
  }

  private lane(id: string, kind: LaneKind, title: string): Lane {
    let l = this.lanes.get(id);
    if (!l) this.lanes.set(id, (l = { id, kind, title, subtitle: '' }));
    return l;
  }

  private consumerLane(n: number): Lane {
    return this.lane(`consumer#${n}`, 'consumer', `consumer #${n}`);
  }

  private laneOfRole(role: unknown, incarnation: unknown): string {
    const party = this.cast.ofProcess(role, incarnation);
    if (party) return `party:${party.id}`;
    // What concerns the server side as a whole (its firewall's counters): its first lane.
    const server = role === 'server' && incarnation === undefined ? this.cast.serverOf(undefined) : undefined;
    if (server) return `party:${server.id}`;
    if (role === 'control') return 'control';
    if (role === 'server') return this.lane('server', 'publisher', 'server under test').id;
    return this.consumerLane(num(incarnation) ?? this.lastConsumer ?? 1).id;
  }

  read(e: Loose): void {
    const t = num(e.t) ?? 0;
    if (e.type === 'wire') {
      this.wire(e, t);
      return;
    }
    switch (e.type) {
      case 'run-start':
      case 'scenario':
      case 'toxiproxy':
      case 'proxy':
      case 'verdict':
      case 'run-end':
      case 'party':
      case 'memory':
        break;
      case 'stream':
        if (str(e.stream) && str(e.role)) this.roleOfStream.set(e.stream as string, e.role as string);
        break;
      case 'process-start':
        this.processStart(e, t);
        break;
      case 'process-exit': {
        const id = this.laneOfRole(e.role, e.incarnation);
        if (e.role !== 'control' && e.incarnation === this.runningConsumer) this.runningConsumer = undefined;
        const [cls, text] = exitWords(e);
        this.emit({ kind: 'mark', t, lane: id, cls, text, level: ESSENTIAL });
        break;
      }
      case 'process-stopped':
        this.emit({ kind: 'mark', t, lane: this.laneOfRole(e.role, e.incarnation), cls: 'stop', text: 'stopped itself (SIGSTOP)', level: ESSENTIAL });
        break;
      case 'process-continued':
        this.emit({ kind: 'mark', t, lane: this.laneOfRole(e.role, e.incarnation), cls: 'cont', text: 'continued (SIGCONT)', level: ESSENTIAL });
        break;
      case 'store-read': {
        const what = this.vocabulary.describeStore(e.store);
        const when = this.moments[str(e.when) ?? ''] ?? `read (${str(e.when) ?? '?'})`;
        const level = e.when === 'final' ? LANDMARK : ESSENTIAL;
        this.emit({ kind: 'mark', t, lane: this.laneOfRole(e.role, e.incarnation), cls: 'read', text: `${when}: ${what}`, level });
        break;
      }
      case 'harness-error':
        this.emit({ kind: 'note', t, cls: 'harness-error', text: `harness error: ${str(e.message) ?? ''}`, level: ESSENTIAL });
        break;
      case 'fault':
        this.fault(e, t);
        break;
      default:
        this.unknown(e, t);
    }
  }

  private processStart(e: Loose, t: number): void {
    const id = this.laneOfRole(e.role, e.incarnation);
    this.started.add(id);
    // The contract's fault hooks travel in the environment, whatever the lab.
    const fault = str((e.env as Record<string, unknown> | undefined)?.CHAOSLAB_FAULT);
    const lane = this.lanes.get(id)!;
    // A party's lane keeps the run's words for it, unless a fault hook says more.
    if (lane.kind === 'server' || lane.kind === 'client') {
      if (fault) lane.subtitle = `fault ${fault}`;
    } else if (e.role !== 'control') lane.subtitle = fault ? `fault ${fault}` : 'no fault';
    if (e.role === 'consumer' && num(e.incarnation) !== undefined) this.runningConsumer = this.lastConsumer = e.incarnation as number;
    this.emit({ kind: 'mark', t, lane: id, cls: 'start', text: `start, pid ${num(e.pid) ?? '?'}`, level: ESSENTIAL });
  }

  private fault(e: Loose, t: number): void {
    const action = e.action === 'lift' ? 'lift' : 'apply';
    const name = str(e.name) ?? str(e.kind) ?? 'fault';
    const detail = e.detail === undefined ? '' : typeof e.detail === 'string' ? e.detail : describeUnknown({ type: '', ...(e.detail as object) }, 60);
    const label = `${name}${str(e.kind) && e.kind !== name ? ` (${e.kind as string})` : ''}${detail ? ` ${detail}` : ''}`;
    if (e.kind === 'signal') {
      // A signal is an instant, not an interval: a mark on the process it hit.
      this.emit({ kind: 'mark', t, lane: this.laneOfRole(e.role ?? 'consumer', e.incarnation), cls: 'signal', text: label, level: ESSENTIAL });
      return;
    }
    // The band's own label carries the detail; the note names the fault and, for a lift, why.
    const text = action === 'apply' ? `fault applied: ${name}` : `fault lifted: ${name}${detail ? ` — ${detail}` : ''}`;
    this.emit({ kind: 'note', t, cls: `fault-${action}`, text, level: ESSENTIAL, fault: { name, action, label } });
  }

  private unknown(e: Loose, t: number): void {
    const flood = (this.unknownCounts.get(e.type) ?? 0) > UNKNOWN_FLOOD;
    const level = flood ? PLAIN : LANDMARK;
    const lane = e.role === 'control' || e.role === 'consumer' || e.role === 'server' ? this.laneOfRole(e.role, e.incarnation) : undefined;
    if (lane) this.emit({ kind: 'mark', t, lane, cls: 'unknown', text: describeUnknown(e, 60), level, groupAs: e.type });
    else this.emit({ kind: 'note', t, cls: 'unknown', text: describeUnknown(e), level, groupAs: e.type });
  }

  /** The lane of a connection: the process the journal names as its owner (older entries: the stream's role). */
  private laneOfConn(e: Loose, stream: string, conn: number): string {
    let conns = this.connState.get(stream);
    if (!conns) this.connState.set(stream, (conns = new Map()));
    let id = conns.get(conn);
    if (id) return id;
    const owner = e.owner as { role?: string; incarnation?: number } | undefined;
    const role = owner?.role ?? this.roleOfStream.get(stream);
    const party = this.cast.ofStream(stream) ?? (owner ? this.cast.ofProcess(owner.role, owner.incarnation) : undefined);
    if (!this.cast.empty) {
      const server = this.cast.serverOf(str(e.tag));
      if (server) this.peerOfConn.set(`${stream}#${conn}`, `party:${server.id}`);
    }
    if (party) id = `party:${party.id}`;
    else if (role === 'control') id = 'control';
    else if (role === 'consumer' && num(owner?.incarnation) !== undefined) id = this.consumerLane(owner!.incarnation!).id;
    else if (role === 'consumer' && this.runningConsumer !== undefined) id = this.consumerLane(this.runningConsumer).id;
    else id = this.lane(`other:${stream}#${conn}`, 'other', `${stream} conn ${conn}`).id;
    conns.set(conn, id);
    return id;
  }

  /** The hot path: ~all entries of a long run are wire lines. */
  private wire(e: Loose, t: number): void {
    const stream = str(e.stream) ?? '?';
    const conn = num(e.conn) ?? 0;
    const id = this.laneOfConn(e, stream, conn);
    const roleOfLane = id === 'control' ? 'control' : id.startsWith('consumer#') ? 'consumer' : id;
    if (e.kind === 'open') {
      const closed = this.lastClose.get(roleOfLane);
      const text = closed === undefined ? `connected (conn ${conn})` : `reconnected after ${gapWords(t - closed)} (conn ${conn})`;
      this.emit({ kind: 'mark', t, lane: id, cls: 'open', text, level: LANDMARK });
    } else if (e.kind === 'close') {
      this.lastClose.set(roleOfLane, t);
      const by = str(e.by) ?? '?';
      const reason = str(e.reason);
      const text = `closed by ${by}${reason ? `: ${reason}` : ''}`;
      this.emit({ kind: 'mark', t, lane: id, cls: by === 'reset' ? 'reset' : 'close', text, level: by === 'reset' ? ESSENTIAL : LANDMARK });
    } else if (e.kind === 'send' || e.kind === 'recv') {
      this.line(e, t, stream, conn, id);
    } else if (e.kind === 'note' && str(e.text) !== undefined) {
      // What the publisher did on this connection (e.g. moved its retention): its words, not the raw entry.
      // A run with parties tests a server: the notes on its connections are the harness's own (what was due).
      this.emit({ kind: 'mark', t, lane: id, cls: 'note', text: `${this.cast.empty ? 'publisher' : 'harness'}: ${str(e.text)}`, level: LANDMARK });
    } else {
      this.emit({ kind: 'mark', t, lane: id, cls: 'other', text: describeUnknown(e, 60), level: LANDMARK });
    }
  }

  /** A line sent or received: an arrow, as telling as the lab ranks it, essential when a finding names it. */
  private line(e: Loose, t: number, stream: string, conn: number, id: string): void {
    const line = str(e.line) ?? '';
    const send = e.kind === 'send';
    // The publisher journals what it refused; the lab says which other lines break its grammar
    // (a line the publisher was told to send on purpose, say), told how much of it the journal cut.
    const error = str(e.error) ?? this.vocabulary.broken?.(line, send ? 'send' : 'recv', num(e.truncated));
    const { cls: word, position: seq, key } = this.vocabulary.classify(line);
    const cls = error ? 'error' : word;
    const direction = send ? 'send' : 'recv';
    const rank = error ? undefined : this.rank({ stream, conn, direction, cls, ...(seq === undefined ? {} : { position: seq }) });
    const label = this.label?.({ stream, direction, line, cls: word });
    let level = error ? ESSENTIAL : rank === 'landmark' ? LANDMARK : rank === 'irregular' ? IRREGULAR : PLAIN;
    // A line with an exact identity (a cursor) is named by it, not by its coarser position (its block).
    const { keys, seqs, times } = this.focus;
    const named = key !== undefined && keys.size > 0 ? keys.has(key) : seq !== undefined && seqs.has(seq);
    if (named && level < ESSENTIAL) level = ESSENTIAL;
    const culprit = named && times.has(t);
    const peer = this.peerOfConn.get(`${stream}#${conn}`) ?? 'publisher';
    const from = send ? peer : id;
    const to = send ? id : peer;
    this.emit({ kind: 'msg', t, from, to, cls, line, error, seq, level, culprit, ...(label === undefined ? {} : { label }) });
  }

  /**
   * Lane order: control | publisher | consumer #1 … #n | anything else. Control arrows go left,
   * consumer arrows go right, so no arrow crosses another lane's lifeline.
   */
  lanesInOrder(): Lane[] {
    const order = (l: Lane): [number, number] =>
      l.kind === 'control'
        ? [0, 0]
        : l.kind === 'publisher' || l.kind === 'server'
          ? [1, 0]
          : l.kind === 'consumer'
            ? [2, Number(l.id.split('#')[1])]
            : l.kind === 'client'
              ? [3, 0]
              : [4, 0];
    const sorted = [...this.lanes.values()].sort((a, b) => {
      const [x, y] = order(a);
      const [u, v] = order(b);
      return x - u || y - v;
    });
    for (const l of sorted) {
      if (l.kind !== 'consumer') continue;
      if (!l.subtitle) l.subtitle = 'no fault';
      if (!this.started.has(l.id)) l.subtitle += ' · never started';
    }
    return sorted;
  }
}
