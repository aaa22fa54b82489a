// A feed chaos schedule in words, one per fault step as it takes effect (its size, and what a
// repro's header lists), and the layers it draws on, by the names of FEED_CHAOS_LAYERS.

import { type Placed, place } from './place.js';
import { BAD_ENVIRONMENT, CHAIN, type FeedSchedule, type RuleConnection, SLOW, STORM } from './steps.js';

const dir = (up: boolean) => (up ? 'upstream' : 'downstream');
const short = (cursor: string) => {
  const [, block, log] = cursor.split(':');
  return `${Number(block)}:${Number(log)}`;
};

function words(x: Placed): string {
  const on = (c: RuleConnection) => (typeof c === 'number' ? `on connection ${c}` : `on the first connection from ${c.from} on that sends it`);
  const ev = (n: number, cursor: string) => `event #${n} (${short(cursor)})`;
  switch (x.layer) {
    case 'cut':
      return `proxy down before block ${x.from} until before block ${x.to}`;
    case 'latency':
      return `${x.latency} ms latency (±${x.jitter}) ${dir(x.up)} from block ${x.from} for ${x.ms} ms`;
    case 'slicer':
      return `${dir(x.up)} sliced into ${x.size}-byte pieces from block ${x.from} for ${x.ms} ms`;
    case 'bandwidth':
      return `downstream limited to ${x.rate} KB/s from block ${x.from} for ${x.ms} ms`;
    case 'byte-limit':
      return `every connection cut after ${x.bytes} bytes ${dir(x.up)} (limit_data) from block ${x.from} for ${x.ms} ms`;
    case 'reset':
      return `connections reset on their first ${dir(x.up)} data (reset_peer) from block ${x.from} for ${x.ms} ms`;
    case 'half-open':
      return `half-open link (timeout toxic both ways) from block ${x.from} for ${x.ms} ms`;
    case 'kill':
      return `SIGKILL before block ${x.at}`;
    case 'pause':
      return `SIGSTOP before block ${x.from} for ${x.ms} ms, then SIGCONT`;
    case 'hook':
      return `process 1's hook ${x.item}${x.madeStop ? ' (an exit here might never fire: a stop)' : ''}`;
    case 'resend':
      return `the ${x.count} events before ${ev(x.event, x.cursor)} resent ${on(x.connection)}`;
    case 'malformed':
      return `a malformed frame (${x.form}) instead of ${ev(x.event, x.cursor)} ${on(x.connection)}`;
    case 'number-amount':
      return `${ev(x.event, x.cursor)} with its amount as a JSON number ${on(x.connection)}`;
    case 'unknown-op':
      return `a frame of unknown op before ${ev(x.event, x.cursor)} on connection 1`;
    case 'stall':
      return `the server silent from ${ev(x.event, x.cursor)} ${x.ms === undefined ? 'for good' : `for ${x.ms} ms`} ${on(x.connection)}`;
    case 'reorg': {
      const what = `reorganisation after block ${x.after}: blocks ${x.after - x.depth + 1}..${x.after} abandoned, ${x.length} new`;
      return x.away ? `${what}, while away (proxy down before block ${x.away.from} until before block ${x.away.to})` : what;
    }
    case 'deep-reorg':
      return `deep reorganisation after block ${x.after}: blocks ${x.after - x.depth + 1}..${x.after} abandoned (at or below the first snapshots), ${x.length} new`;
    case 'stale-cursor':
      return (
        `retention ${x.retentionBlocks * (CHAIN.blockIntervalMs / 1000)} s of virtual time, proxy down before block ${x.from} until before block ${x.to}: ` +
        (x.quiet === undefined ? 'a stale cursor' : `following quiet account ${x.quiet}, which has no event then`)
      );
    case 'loss':
      return `packet loss ${x.percent} % both ways${x.from === undefined ? '' : ` from block ${x.from} on`}`;
    case 'slow-reader':
      return `a slow reader (CHAOSLAB_APPLY_DELAY_MS ${SLOW.applyDelayMs}, queue limit ${SLOW.queueLimit}, 4 KiB socket buffers, ${SLOW.logs.min}–${SLOW.logs.max} logs a block) that reads nothing for ${x.ms} ms before block ${x.from} (SIGSTOP)`;
  }
}

export function feedChaosSteps(schedule: FeedSchedule): string[] {
  if (schedule.kind === 'bad-environment') {
    const { env } = BAD_ENVIRONMENT[schedule.which % BAD_ENVIRONMENT.length]!;
    return [
      `bad environment: ${Object.entries(env)
        .map(([k, v]) => (v === null ? `${k} left out` : `${k}=${JSON.stringify(v)}`))
        .join(', ')}`,
    ];
  }
  if (schedule.kind === 'storm')
    return [
      `restart storm: ${STORM.processes} processes, ${STORM.rounds} restarts of at least ${STORM.roundMs / 1000} s each, BASE ${STORM.baseMs} ms, CAP ${STORM.capMs} ms`,
    ];
  return place(schedule).steps.map(words);
}

export function feedChaosLayers(schedule: FeedSchedule): string[] {
  if (schedule.kind === 'bad-environment') return ['bad-environment'];
  if (schedule.kind === 'storm') return ['restart-storm'];
  const layers: string[] = place(schedule).steps.map((x) =>
    x.layer === 'reorg' && x.away ? 'reorg-away' : x.layer === 'stale-cursor' && x.quiet !== undefined ? 'quiet-account' : x.layer,
  );
  if (schedule.bigAmounts) layers.push('big-amounts');
  if (schedule.quietPing) layers.push('quiet-ping');
  return [...new Set(layers)];
}
