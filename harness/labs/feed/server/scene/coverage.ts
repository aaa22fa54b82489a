// Whether each step of a server scene took effect (coverage as data, findings/coverage.ts),
// decided from the journal: a SIGKILL or SIGTERM must end an instance while a probe is
// subscribed to it, and that probe resume from its cursor afterwards (a handover: on the instance
// it was repointed to); a SIGSTOP must freeze an instance while a probe is subscribed to it; a
// cut must close a probe's live subscription. A cut across a reorganisation is the
// reorganisation's (`reorg-away`, wire/coverage.ts). A probe given another chain's cursor must
// have subscribed with it.

import type { FaultCoverage } from '../../../../findings/coverage.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { seconds, shortCursor } from '../../report/words.js';
import type { SimulatedChain } from '../../scenario/chain-script.js';
import type { ScenePlan, SceneStep } from '../../scenario/plan.js';
import { heldWords, liveAt, reorgCommits, resumedAfter } from '../wire/coverage.js';
import type { ProbeConn } from '../wire/wire-checks.js';

/** How long after its proxy comes up again a cut connection's close may still be journaled (the relay sees it through the proxy). */
const CUT_SLACK_MS = 1000;

type Fault = Extract<JournalEntry, { type: 'fault' }>;

/** The journal's fault entries of the scene, each taken once, in order, by the step that wrote it. */
class Faults {
  private readonly used = new Set<Fault>();
  constructor(private readonly entries: readonly Fault[]) {}
  next(name: string, action: 'apply' | 'lift' = 'apply'): Fault | undefined {
    const f = this.entries.find((e) => e.name === name && e.action === action && !this.used.has(e));
    if (f) this.used.add(f);
    return f;
  }
}

interface Ctx {
  conns: readonly ProbeConn[];
  faults: Faults;
  steps: readonly SceneStep[];
  /** Each probe's instance before each step (repoints move it). */
  instanceBefore: number[][];
  commits: readonly { t: number; blocks: number[] }[];
  reorgTimes: readonly number[];
}

const SIGNAL = { kill: 'SIGKILL', sigterm: 'SIGTERM', stop: 'SIGSTOP' } as const;
const probesWord = (ps: readonly number[]) => `probe${ps.length > 1 ? 's' : ''} ${ps.join(' and ')}`;

/** A SIGKILL or SIGTERM step (a handover when probes were repointed away from the instance before the same block). */
function endRow(x: Ctx, i: number, action: { kind: 'kill' | 'sigterm'; instance: number }): FaultCoverage {
  const step = x.steps[i]!;
  const n = action.instance;
  const repoints = x.steps.flatMap((s, j) =>
    s.beforeBlock === step.beforeBlock && s.action.kind === 'repoint' && x.instanceBefore[j]![s.action.probe - 1] === n ? [s.action] : [],
  );
  const handover = action.kind === 'kill' && repoints.length > 0;
  const restart = x.steps.slice(i + 1).find((s) => s.action.kind === 'start' && s.action.instance === n);
  const fault = handover
    ? `before block ${step.beforeBlock}: ${probesWord(repoints.map((r) => r.probe))} repointed to instance ${repoints[0]!.to}, instance ${n} killed (SIGKILL)`
    : `${SIGNAL[action.kind]} to instance ${n} before block ${step.beforeBlock}${restart ? `, started again before block ${restart.beforeBlock}` : ''}`;
  const base = { fault, kind: handover ? 'handover' : action.kind };
  const sent = x.faults.next(`${action.kind}-instance-${n}`);
  if (!sent)
    return {
      ...base,
      took: false,
      how: `the ${SIGNAL[action.kind]} to instance ${n} before block ${step.beforeBlock} was never sent: the instance was not running then`,
    };
  const live = liveAt(x.conns, sent.t, { instance: n }).filter((c) => !handover || repoints.some((r) => r.probe === c.probe));
  if (live.length === 0)
    return {
      ...base,
      took: false,
      how: `the ${SIGNAL[action.kind]} at ${seconds(sent.t)} ended server instance ${n} while no probe held a live subscription to it`,
    };
  for (const c of live) {
    const to = handover ? repoints.find((r) => r.probe === c.probe)!.to : undefined;
    const back = resumedAfter(x.conns, c.probe, sent.t, to);
    if (back)
      return {
        ...base,
        took: true,
        how: `the ${SIGNAL[action.kind]} at ${seconds(sent.t)} ended server instance ${n} while probe ${c.probe} was subscribed to it (${heldWords(c, sent.t)}); probe ${c.probe} resumed from ${shortCursor(back.conn.subscribe!.cursor)}${back.conn.instance ? ` on instance ${back.conn.instance}` : ''}, answered at ${seconds(back.at)}`,
      };
  }
  return {
    ...base,
    took: false,
    how: `the ${SIGNAL[action.kind]} at ${seconds(sent.t)} ended server instance ${n} while ${probesWord([...new Set(live.map((c) => c.probe))])} was subscribed to it, but no resume from its cursor${handover ? ` on instance ${repoints[0]!.to}` : ''} was answered afterwards`,
  };
}

function pauseRow(x: Ctx, i: number, n: number): FaultCoverage {
  const step = x.steps[i]!;
  const cont = x.steps.slice(i + 1).find((s) => s.action.kind === 'cont' && s.action.instance === n);
  const base = { fault: `SIGSTOP to instance ${n} before block ${step.beforeBlock}${cont ? `, SIGCONT before block ${cont.beforeBlock}` : ''}`, kind: 'pause' };
  const stop = x.faults.next(`stop-instance-${n}`);
  if (!stop)
    return { ...base, took: false, how: `the SIGSTOP to instance ${n} before block ${step.beforeBlock} was never sent: the instance was not running then` };
  const until = x.faults.next(`cont-instance-${n}`, 'lift')?.t ?? Infinity;
  const live = liveAt(x.conns, stop.t, { instance: n });
  const commits = x.commits.filter((c) => c.t >= stop.t && c.t < until).length;
  const span = `; ${commits} commit${commits === 1 ? '' : 's'} to the outbox came before its SIGCONT${until === Infinity ? '' : ` at ${seconds(until)}`}`;
  if (live.length === 0)
    return { ...base, took: false, how: `the SIGSTOP at ${seconds(stop.t)} froze server instance ${n} while no probe held a live subscription to it${span}` };
  const c = live[0]!;
  return {
    ...base,
    took: true,
    how: `the SIGSTOP at ${seconds(stop.t)} froze server instance ${n} while probe ${c.probe} was subscribed to it (${heldWords(c, stop.t)})${span}`,
  };
}

function cutRow(x: Ctx, i: number, p: number): FaultCoverage | undefined {
  const step = x.steps[i]!;
  const back = x.steps.slice(i + 1).find((s) => s.action.kind === 'back' && s.action.probe === p);
  const base = { fault: `probe ${p}'s proxy down before block ${step.beforeBlock}${back ? ` until before block ${back.beforeBlock}` : ''}`, kind: 'cut' };
  const down = x.faults.next(`away-probe-${p}`);
  if (!down) return { ...base, took: false, how: `probe ${p}'s proxy was never taken down: the run ended before block ${step.beforeBlock}` };
  const up = x.faults.next(`away-probe-${p}`, 'lift')?.t ?? Infinity;
  // Cut off across a reorganisation: the reorganisation's row says whether it met the probe.
  if (x.reorgTimes.some((t) => t >= down.t && t < up)) return undefined;
  // The fault is journaled once Toxiproxy has taken the proxy down, and the relay may have seen the close first: the cut began after the last commit before it.
  const began = x.commits.filter((c) => c.t <= down.t).at(-1)?.t ?? down.t;
  const live = liveAt(x.conns, began, { probe: p });
  const cut = live.find((c) => c.closedAt !== undefined && c.closedAt <= up + CUT_SLACK_MS);
  if (cut)
    return {
      ...base,
      took: true,
      how: `probe ${p}'s proxy went down at ${seconds(down.t)} and its live subscription (${heldWords(cut, began)}) closed at ${seconds(cut.closedAt!)}${up === Infinity ? '' : `; the proxy came up again at ${seconds(up)}`}`,
    };
  return {
    ...base,
    took: false,
    how: live.length
      ? `probe ${p}'s proxy went down at ${seconds(down.t)}, but its subscription (${heldWords(live[0]!, began)}) was not closed while it was down`
      : `probe ${p}'s proxy went down at ${seconds(down.t)} while it held no live subscription (none since the last commit before, at ${seconds(began)}): there was no stream to cut`,
  };
}

/** Probes given a store of another chain: each must have subscribed with that chain's cursor. */
function otherChainRows(plan: ScenePlan, conns: readonly ProbeConn[], chainId: number): FaultCoverage[] {
  return plan.probes.flatMap((spec, i): FaultCoverage[] => {
    if (spec.store !== 'other-chain') return [];
    const n = i + 1;
    const c = conns.find((x) => x.probe === n && x.subscribe?.cursor && !x.subscribe.cursor.startsWith(`${chainId}:`));
    const base = { fault: `probe ${n}'s store of another chain`, kind: 'other-chain' };
    return c
      ? [
          {
            ...base,
            took: true,
            how: `probe ${n} subscribed with ${c.subscribe!.cursor}, a cursor of another chain, at ${seconds(c.subscribe!.t)} (connection ${c.conn})`,
          },
        ]
      : [{ ...base, took: false, how: `probe ${n} never subscribed with the cursor of another chain its store was seeded with` }];
  });
}

/** One row per fault of the scene's steps (the `start`, `cont`, `back` and `repoint` that belong to them are in their rows). */
export function sceneCoverage(
  journal: readonly JournalEntry[],
  plan: ScenePlan,
  conns: readonly ProbeConn[],
  reorgs: SimulatedChain['reorgs'],
  chainId: number,
): FaultCoverage[] {
  const instances = plan.probes.map((p) => p.instance);
  const instanceBefore = plan.steps.map((s) => {
    const before = [...instances];
    if (s.action.kind === 'repoint') instances[s.action.probe - 1] = s.action.to;
    return before;
  });
  const x: Ctx = {
    conns,
    faults: new Faults(journal.filter((e): e is Fault => e.type === 'fault')),
    steps: plan.steps,
    instanceBefore,
    commits: journal.flatMap((e) => (e.type === 'outbox-commit' ? [{ t: e.t, blocks: e.blocks }] : [])),
    reorgTimes: reorgCommits(journal, reorgs).flatMap((r) => (r.t === undefined ? [] : [r.t])),
  };
  const rows = plan.steps.flatMap((s, i): FaultCoverage[] => {
    const a = s.action;
    if (a.kind === 'kill' || a.kind === 'sigterm') return [endRow(x, i, { kind: a.kind, instance: a.instance })];
    if (a.kind === 'stop') return [pauseRow(x, i, a.instance)];
    if (a.kind === 'away') return [cutRow(x, i, a.probe) ?? []].flat();
    return [];
  });
  return [...rows, ...otherChainRows(plan, conns, chainId)];
}
