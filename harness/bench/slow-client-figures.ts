// make bench §8's figures (bench/slow-client.mjs measures, this only summarises and judges): what
// one client that never reads costs a reference server, against the contract's bound, "one slow
// client costs the server at most its queue" (CHAOSLAB_QUEUE_LIMIT frames). The cost is the
// server's peak RSS with the slow client over its peak with the readers alone (medians of runs
// in turns), counted in frames of the size the readers received. RSS is coarse (a garbage
// collector's heap grows in steps), so the figure states the baseline's own spread beside it.
import { type FanOutClientResult, type FanOutRun, incompleteOf, troubles } from './fanout-figures.js';
import { type Figure, summarize } from './figures.js';

/** What the slow connection of a run saw, from bench/fanout-client.mjs's `stalled`. */
export interface StalledResult {
  events: number;
  reset?: string;
  closed: boolean;
}

export interface SlowClientSamples {
  server: string;
  readers: number;
  queueLimit: number;
  /** Events pushed to every connection, live. */
  events: number;
  /** The run's tcp_rmem/tcp_wmem, fixed in a namespace of its own; absent: the kernel's. */
  socketBufferBytes?: number;
  withSlow: readonly FanOutRun[];
  without: readonly FanOutRun[];
}

type Measured = Extract<FanOutRun, { client: unknown }>;
type WithStalled = Measured & { client: FanOutClientResult & { eventBytes?: number; stalled?: StalledResult[] } };
const measured = (runs: readonly FanOutRun[]): WithStalled[] => runs.filter((r): r is WithStalled => 'client' in r && r.client.incomplete === undefined);

export interface SlowClientVerdict {
  /** CHAOSLAB_QUEUE_LIMIT × the frame size, in bytes. */
  limitBytes: number;
  growthBytes: number;
  /** The growth in frames of the readers' mean size. */
  growthFrames: number;
  /** Whether the bound holds; undefined: not judged (too little, or too noisy, to say either way). */
  holds: boolean | undefined;
  /** Why, in a few words. */
  words: string;
}

/**
 * Does one slow client cost the server at most its queue limit of frames? It must have been
 * reset `slow-consumer` in every run (a server that never resets it holds it for ever, whatever
 * RSS says), no reader may have been reset, and the RSS growth it caused must be at most
 * `queueLimit` frames of `frameBytes`, with no run left out as incomplete.
 */
export function slowClientVerdict(input: {
  queueLimit: number;
  frameBytes: number;
  growthBytes: number;
  /** The slow connection's reset reason in each run (undefined: none came). */
  resets: readonly (string | undefined)[];
  readerResets: number;
  /** Runs left out as incomplete (a reader reset or closed, a timeout), either side. */
  incompleteRuns?: number;
  /** How far apart the baseline's own peaks were (max − min): a growth nearer its limit than this says nothing either way. */
  baselineSpreadBytes?: number;
}): SlowClientVerdict {
  const { queueLimit, frameBytes, growthBytes, resets, readerResets, incompleteRuns = 0, baselineSpreadBytes = 0 } = input;
  if (!(queueLimit >= 1 && frameBytes > 0)) throw new RangeError(`slowClientVerdict: queueLimit ${queueLimit} and frameBytes ${frameBytes} must be positive`);
  const limitBytes = queueLimit * frameBytes;
  const growthFrames = growthBytes / frameBytes;
  const base = { limitBytes, growthBytes, growthFrames };
  const unreset = resets.filter((r) => r !== 'slow-consumer').length;
  if (resets.length === 0) return { ...base, holds: undefined, words: 'no run to judge' };
  if (unreset > 0) return { ...base, holds: false, words: `the slow client was not reset slow-consumer in ${unreset} of ${resets.length} runs` };
  if (readerResets > 0) return { ...base, holds: false, words: `${readerResets} reader resets: the slow client cost the others` };
  // Medians of what is left after incomplete runs are dropped are not the runs asked for: no memory verdict on them.
  if (incompleteRuns > 0)
    return {
      ...base,
      holds: undefined,
      words: `${incompleteRuns} incomplete run${incompleteRuns === 1 ? '' : 's'} left out, the rest too few to vouch for it`,
    };
  // RSS moves in the garbage collector's steps: with its runs that far apart, the side of the limit it fell on is chance.
  if (Math.abs(growthBytes - limitBytes) < baselineSpreadBytes)
    return {
      ...base,
      holds: undefined,
      words: `grew ${Math.max(0, Math.round(growthFrames))} frames' worth against its queue limit of ${queueLimit}, nearer to it than the baseline's own spread`,
    };
  if (growthBytes > limitBytes)
    return { ...base, holds: false, words: `grew ${Math.round(growthFrames)} frames' worth, over its queue limit of ${queueLimit}` };
  return { ...base, holds: true, words: `grew ${Math.max(0, Math.round(growthFrames))} frames' worth, within its queue limit of ${queueLimit}` };
}

/** The note's first word, in capitals as the goal column's MISSED: a figure not judged says so, never DOES NOT HOLD. */
const verdictWord = (holds: boolean | undefined): string => (holds === undefined ? 'NOT JUDGED' : holds ? 'HOLDS' : 'DOES NOT HOLD');

const MiB = 2 ** 20;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(2)} MiB`;

/** §8's figure for one server: the RSS the slow client cost it, its limit as the goal, the verdict in the note. */
export function slowClientFigures(samples: SlowClientSamples, section = '8 slow client'): Figure[] {
  const slow = measured(samples.withSlow);
  const alone = measured(samples.without);
  const name = `${samples.server}: RSS one never-reading client costs beside ${samples.readers} readers (queue limit ${samples.queueLimit}, ${samples.events} events)`;
  const problems = [...troubles(samples.withSlow), ...troubles(samples.without).map((t) => `without it: ${t}`)];
  if (slow.length === 0 || alone.length === 0) return [{ section, name, unit: 'MiB', note: problems.join('; ') || 'no complete run' }];
  const peakWith = summarize(slow.map((r) => r.publisher.maxRssMiB));
  const peakWithout = summarize(alone.map((r) => r.publisher.maxRssMiB));
  const frameBytes = summarize(alone.map((r) => r.client.eventBytes ?? 0)).median;
  const growthBytes = (peakWith.median - peakWithout.median) * MiB;
  const baselineSpreadBytes = (peakWithout.max - peakWithout.min) * MiB;
  const stalled = slow.map((r) => r.client.stalled?.[0]);
  const verdict = slowClientVerdict({
    queueLimit: samples.queueLimit,
    frameBytes,
    growthBytes,
    resets: stalled.map((s) => s?.reset),
    readerResets: slow.reduce((sum, r) => sum + Object.values(r.client.resets).reduce((a, b) => a + b, 0), 0),
    incompleteRuns: incompleteOf([...samples.withSlow, ...samples.without]).length,
    baselineSpreadBytes,
  });
  const buffers = samples.socketBufferBytes
    ? `socket buffers fixed at ${samples.socketBufferBytes} B in a namespace of its own`
    : "the kernel's own socket buffers (no namespace could be made): part of the backlog waited in the kernel, not in the queue";
  const read = summarize(stalled.map((s) => s?.events ?? 0));
  return [
    {
      section,
      name,
      unit: 'MiB',
      value: peakWith,
      floor: { name: 'peak RSS with the readers alone', value: peakWithout },
      note: [
        `${verdictWord(verdict.holds)}: ${verdict.words}`,
        `growth ${mib(growthBytes)} (baseline spread ${mib(baselineSpreadBytes)}) against ${samples.queueLimit} × ${frameBytes.toFixed(0)} B = ${mib(verdict.limitBytes)}`,
        `the slow client read ${read.median} events before its reset`,
        buffers,
        ...problems,
      ].join('; '),
    },
  ];
}
