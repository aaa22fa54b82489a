// Where a server chaos schedule's steps land (./server-chaos.ts draws them): each becomes scene
// steps (server/scene/scene.ts) just before blocks of the script, while both probes are subscribed
// and every block brings them events, so that a fault lands where it takes effect. Instance 1 is
// the one the faults hit (probe 1 follows it); instance 2 is steady (probe 2 and the harness's
// clients follow it), so a client is never judged across a kill it did not ask for. Steps are
// placed in the order drawn; a step whose window overlaps an earlier one's on the same instance or
// probe is left out (and said nowhere: it is not in the schedule as it runs); a cut of probe 1
// counts as instance 1's too, since a kill or pause while probe 1 is away meets no probe.

import type { ClientKind } from '../server/clients/schema.js';

export type ServerStep =
  /** SIGKILL instance 1, started again `down` spans later. */
  | { layer: 'kill'; at: number; down: number }
  /** SIGSTOP instance 1, SIGCONT `span` spans later. */
  | { layer: 'pause'; at: number; span: number }
  /** Probe 1 repointed to instance 2, instance 1 killed for good. */
  | { layer: 'handover'; at: number }
  /** A probe's proxy down for `span` spans. */
  | { layer: 'cut'; at: number; probe: number; span: number }
  /** A reorganisation of `depth` blocks; with `away`, probe 2 is cut off across it (it resumes from an abandoned block). */
  | { layer: 'reorg'; at: number; depth: number; away: boolean }
  /** A client of the harness joining instance 2 for the whole script: `which` of the pace's CLIENT_KINDS. */
  | { layer: 'client'; which: number };

export interface ServerSchedule {
  kind: 'server';
  /** The chain's seed. */
  seed: number;
  /** Blocks the script mines after the initial ones (normal pace; dense multiplies them by SPAN). */
  blocks: number;
  /** Dense blocks and 4 KiB socket buffers (sealed runs only): a client that reads slowly or not at all overflows its queue. */
  dense: boolean;
  steps: ServerStep[];
}

/** The two paces: a block every 250 ms of real time (as feed-server-restart), or every 48 ms with 3–7 events (as feed-server-bad-clients). */
export const PACE = {
  normal: { timeScale: 0.1, blockIntervalMs: 2500, logs: { min: 1, max: 3 }, confirmations: 4, span: 1 },
  dense: { timeScale: 0.004, blockIntervalMs: 12_000, logs: { min: 3, max: 7 }, confirmations: 0, span: 5 },
} as const;
export const INITIAL_BLOCKS = 10;
/**
 * Spans after a step's window on an instance or probe before the next may start there: the probe
 * must be back (a restarted instance listening, the probe's backoff, its resume answered: 0.2 to
 * 0.7 s seen at the normal pace) or a kill, pause or cut right after meets no live stream.
 */
export const SETTLE_SPANS = 3;
/** A dense script's blocks: this many times a normal one's, so that a span is about as long in real time. */
export const DENSE_FACTOR = 5;

export type SceneStepFile = { before_block: number } & Record<string, number>;

export interface PlacedStep {
  layer: ServerStep['layer'];
  words: string;
  sceneSteps: SceneStepFile[];
}

export interface Placement {
  pace: (typeof PACE)['normal'] | (typeof PACE)['dense'];
  dense: boolean;
  lastBlock: number;
  placed: PlacedStep[];
  reorg?: { afterBlock: number; depth: number };
  clients: { name: string; kind: ClientKind }[];
}

/** Windows taken so far, by what they hold (instance 1, probe n). */
type Taken = Map<string, { from: number; to: number }[]>;

function free(taken: Taken, key: string, from: number, to: number): boolean {
  return !(taken.get(key) ?? []).some((w) => from <= w.to && w.from <= to);
}

function take(taken: Taken, key: string, from: number, to: number): void {
  taken.set(key, [...(taken.get(key) ?? []), { from, to }]);
}

/**
 * The clients of each pace, as the scenes that prove them: a dense run's overflow a slow or
 * never-reading client (feed-server-bad-clients), a normal one's heartbeats the half-open client
 * and the pinger (feed-server-heartbeats); bad frames at either.
 */
export const CLIENT_KINDS = {
  dense: ['slow-reader', 'never-reads', 'garbage', 'oversized'],
  normal: ['garbage', 'oversized', 'half-open', 'pinger'],
} as const satisfies Record<string, readonly ClientKind[]>;

export function placeServer(s: ServerSchedule): Placement {
  const dense = s.dense;
  const pace = dense ? PACE.dense : PACE.normal;
  const span = pace.span;
  const lastBlock = INITIAL_BLOCKS + s.blocks * (dense ? DENSE_FACTOR : 1);
  // From the second block of the script: the probes hold their snapshots and events flow.
  const first = INITIAL_BLOCKS + 2;
  const at = (n: number, width: number): number | undefined => {
    const room = lastBlock - width - first + 1;
    return room < 1 ? undefined : first + (n % room);
  };
  const settle = SETTLE_SPANS * span;
  const taken: Taken = new Map();
  const placed: PlacedStep[] = [];
  const clients: Placement['clients'] = [];
  let reorg: Placement['reorg'];
  for (const x of s.steps) {
    if (x.layer === 'client') {
      const kinds = CLIENT_KINDS[dense ? 'dense' : 'normal'];
      const kind = kinds[x.which % kinds.length]!;
      const name = `${kind}-${clients.length + 1}`;
      clients.push({ name, kind });
      placed.push({ layer: 'client', words: `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} client (${name}) on instance 2`, sceneSteps: [] });
      continue;
    }
    if (x.layer === 'reorg') {
      if (dense || reorg) continue;
      // Cut off before block `after` (the reorganisation comes half a block after it), probe 2 holds
      // block after-1: 3 or 4 blocks deep, its cursor's block is above the first abandoned one, so
      // a revoke from the cursor's own block differs from one at the fork point.
      const depth = x.away ? 3 + (x.depth % 2) : 1 + ((x.depth - 1) % pace.confirmations);
      const after = at(x.at, 3);
      if (after === undefined || (x.away && !free(taken, 'probe 2', after, after + 2 + settle))) continue;
      reorg = { afterBlock: after, depth };
      if (x.away) take(taken, 'probe 2', after, after + 2 + settle);
      placed.push({
        layer: 'reorg',
        words: `a reorganisation of ${depth} block${depth === 1 ? '' : 's'} after block ${after}${x.away ? `, probe 2 cut off from before block ${after} until before block ${after + 2}` : ''}`,
        sceneSteps: x.away
          ? [
              { before_block: after, away: 2 },
              { before_block: after + 2, back: 2 },
            ]
          : [],
      });
      continue;
    }
    const width = x.layer === 'handover' ? 0 : (x.layer === 'kill' ? x.down : x.span) * span;
    const from = at(x.at, width);
    if (from === undefined) continue;
    const to = x.layer === 'handover' ? lastBlock : from + width;
    // Probe 1 follows instance 1: its cut holds instance 1 too, so that no kill or pause falls while it is away (nor it while the instance is down), each with nothing to hit.
    const keys = x.layer === 'cut' ? [`probe ${x.probe}`, ...(x.probe === 1 ? ['instance 1'] : [])] : ['instance 1'];
    if (!keys.every((key) => free(taken, key, from, to + settle))) continue;
    for (const key of keys) take(taken, key, from, to + settle);
    placed.push(placedStep(x, from, to));
  }
  return { pace, dense, lastBlock, placed, ...(reorg ? { reorg } : {}), clients };
}

function placedStep(x: Exclude<ServerStep, { layer: 'client' | 'reorg' }>, from: number, to: number): PlacedStep {
  switch (x.layer) {
    case 'kill':
      return {
        layer: 'kill',
        words: `SIGKILL to instance 1 before block ${from}, started again before block ${to}`,
        sceneSteps: [
          { before_block: from, kill: 1 },
          { before_block: to, start: 1 },
        ],
      };
    case 'pause':
      return {
        layer: 'pause',
        words: `SIGSTOP to instance 1 before block ${from}, SIGCONT before block ${to}`,
        sceneSteps: [
          { before_block: from, stop: 1 },
          { before_block: to, cont: 1 },
        ],
      };
    case 'handover':
      return {
        layer: 'handover',
        words: `before block ${from}: probe 1 repointed to instance 2, instance 1 killed (SIGKILL) for good`,
        sceneSteps: [
          { before_block: from, repoint: 1, to: 2 },
          { before_block: from, kill: 1 },
        ],
      };
    case 'cut':
      return {
        layer: 'cut',
        words: `probe ${x.probe}'s proxy down before block ${from} until before block ${to}`,
        sceneSteps: [
          { before_block: from, away: x.probe },
          { before_block: to, back: x.probe },
        ],
      };
  }
}
