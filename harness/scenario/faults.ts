// The `faults` layer of a scenario file, which every lab shares: the checks its schema cannot
// express, and its resolution into plan entries (durations scaled, random points drawn).

import type { FaultPointSpec } from './fault-points.js';
import { mulberry32, uniformInt } from './generate.js';
import type { RawProblem, Segment } from './problems.js';
import type { FaultFile, RandomEventsFile, TriggerFile } from './schema.js';
import type { FaultEffect, FaultPlan, Trigger } from './types.js';

/** Problems of the file's faults; `positions` is the size of the lab's script. */
export function faultProblems(faults: readonly FaultFile[], points: Record<string, FaultPointSpec>, positions: number): RawProblem[] {
  const out: RawProblem[] = [];
  const scriptWords = `the script has seqs 0..${positions - 1}`;
  const inScript = (seq: number, segments: Segment[]) => {
    if (seq >= positions) out.push({ segments, at: 'value', message: `seq ${seq} is beyond the script (${scriptWords})` });
  };
  const names = new Set<string>();
  for (const [i, fault] of faults.entries()) {
    if (names.has(fault.name)) out.push({ segments: ['faults', i, 'name'], at: 'value', message: `fault name "${fault.name}" is used twice` });
    names.add(fault.name);
    for (const role of ['start', 'end'] as const) {
      const trigger = fault[role];
      if (!trigger) continue;
      for (const [key, spec] of Object.entries(points)) {
        const value = trigger[key];
        if (spec.value === 'seq' && typeof value === 'number') inScript(value, ['faults', i, role, key]);
      }
      const r = trigger.random_events as RandomEventsFile | undefined;
      if (r) {
        inScript(r.max, ['faults', i, role, 'random_events', 'max']);
        if (r.min > r.max || r.count > r.max - r.min + 1)
          out.push({
            segments: ['faults', i, role, 'random_events'],
            at: 'key',
            message: `needs min <= max and count <= max - min + 1 (got count ${r.count}, min ${r.min}, max ${r.max})`,
          });
      }
    }
    if (fault.loss && faults.slice(0, i).some((f) => f.loss))
      out.push({ segments: ['faults', i, 'loss'], at: 'key', message: 'one loss fault per scenario: the run namespace has one loss chain' });
    if (fault.loss && fault.start.random_events)
      out.push({ segments: ['faults', i, 'start', 'random_events'], at: 'key', message: 'a loss fault starts once: random_events would start several' });
    const signal = fault.process?.signal;
    if (signal === 'SIGSTOP' && !fault.end) out.push({ segments: ['faults', i], at: 'key', message: 'a SIGSTOP fault needs an `end` (when SIGCONT is sent)' });
    if ((signal === 'SIGKILL' || signal === 'SIGTERM') && fault.end)
      out.push({ segments: ['faults', i, 'end'], at: 'key', message: `${signal} is instantaneous: it takes no \`end\`` });
  }
  return out;
}

/** Whether a plan needs packet loss, hence a sealed run. */
export const lossFaultOf = (faults: readonly FaultPlan[]): FaultPlan | undefined => faults.find((f) => f.effect.kind === 'loss');

/** One fault of the file as plan entries: `random_events` expands into one fault per drawn point. */
export function resolveFault(fault: FaultFile, points: Record<string, FaultPointSpec>, timeScale: number): FaultPlan[] {
  const network = fault.network;
  const effect: FaultEffect = fault.process
    ? { kind: 'signal', signal: fault.process.signal }
    : fault.loss
      ? { kind: 'loss', percent: fault.loss.percent }
      : network?.down
        ? { kind: 'proxy-down' }
        : { kind: 'toxic', toxic: network!.toxic!, stream: network!.stream ?? 'downstream', attributes: { ...network!.attributes } };
  const end = fault.end ? { end: resolveTrigger(fault.end, points, timeScale) } : {};
  const r = fault.start.random_events as RandomEventsFile | undefined;
  if (!r) return [{ name: fault.name, effect, start: resolveTrigger(fault.start, points, timeScale), ...end }];
  const point = Object.keys(points).find((key) => points[key]!.random)!;
  return drawDistinct(r).map((value, i) => ({ name: `${fault.name}-${i + 1}`, effect, start: { kind: 'point', point, value }, ...end }));
}

function resolveTrigger(t: TriggerFile, points: Record<string, FaultPointSpec>, timeScale: number): Trigger {
  const scaled = (ms: number) => Math.round(ms * timeScale);
  const point = Object.keys(points).find((key) => typeof t[key] === 'number');
  if (point) return { kind: 'point', point, value: t[point] as number };
  if (typeof t.incarnation === 'number') return { kind: 'incarnation', n: t.incarnation };
  if (typeof t.at_ms === 'number') return { kind: 'at', ms: scaled(t.at_ms) };
  if (typeof t.after_ms === 'number') return { kind: 'after', ms: scaled(t.after_ms) };
  return { kind: 'incarnation-exit' };
}

/** `count` distinct positions in min..max, ascending, drawn with the scenario generator's PRNG. */
function drawDistinct(r: RandomEventsFile): number[] {
  const next = mulberry32(r.seed);
  const picked = new Set<number>();
  while (picked.size < r.count) picked.add(uniformInt(next, r.min, r.max));
  return [...picked].sort((a, b) => a - b);
}
