// A server scene: `server.under_test.instances`, `probes` and `steps`. Several server processes
// on one outbox, several probes (each through a relay and proxies of its own), and what the
// harness does to them as the script runs: kill, SIGTERM, stop (SIGSTOP/SIGCONT) and start instances again, cut a probe
// off and let it back, lead its next connections to another instance. Its plan, and the checks
// the schema cannot make: one action per step, each naming an instance or probe that exists and
// can take it at that point, in block order, within the script.

import type { RawProblem } from '../../../../scenario/problems.js';
import type { ChainPlan, SceneAction, ScenePlan, SceneStep } from '../../scenario/plan.js';
import type { FeedFile } from '../../scenario/schema.js';

type UnderTest = NonNullable<NonNullable<FeedFile['server']>['under_test']>;
type RawStep = NonNullable<UnderTest['steps']>[number];

const ACTIONS = ['kill', 'sigterm', 'start', 'stop', 'cont', 'away', 'back', 'repoint'] as const;

function actionOf(step: RawStep): SceneAction | undefined {
  const given = ACTIONS.filter((key) => step[key] !== undefined);
  if (given.length !== 1) return undefined;
  const key = given[0]!;
  if (key === 'repoint') return step.to === undefined ? undefined : { kind: 'repoint', probe: step.repoint!, to: step.to };
  if (key === 'away' || key === 'back') return { kind: key, probe: step[key]! };
  return { kind: key, instance: step[key]! };
}

/** The scene, when the file has one (any of instances, probes, steps). */
export function scenePlanOf(u: UnderTest | undefined): ScenePlan | undefined {
  if (!u || (u.instances === undefined && u.probes === undefined && u.steps === undefined)) return undefined;
  return {
    instances: u.instances ?? 1,
    probes: (u.probes ?? [{}]).map((p) => ({ instance: p.instance ?? 1, store: p.store ?? 'empty' })),
    steps: (u.steps ?? []).flatMap((s): SceneStep[] => {
      const action = actionOf(s);
      return action ? [{ beforeBlock: s.before_block, action }] : [];
    }),
  };
}

/** A step's own form: one action, `to` only with `repoint`. */
function stepFormProblems(step: RawStep, at: (string | number)[]): RawProblem[] {
  const given = ACTIONS.filter((key) => step[key] !== undefined);
  if (given.length === 0) return [{ segments: at, at: 'key', message: `a step needs one action: ${ACTIONS.join(', ')} (with \`to\` for repoint)` }];
  if (given.length > 1)
    return [{ segments: [...at, given[1]!], at: 'key', message: `one action per step (this one has ${given.join(' and ')}): make it two steps` }];
  if (given[0] === 'repoint' && step.to === undefined) return [{ segments: [...at, 'repoint'], at: 'key', message: '`repoint` needs `to`: the instance' }];
  if (given[0] !== 'repoint' && step.to !== undefined) return [{ segments: [...at, 'to'], at: 'key', message: '`to` goes only with `repoint`' }];
  return [];
}

interface SceneState {
  running: boolean[];
  stopped: boolean[];
  away: boolean[];
}

/** What an action needs of the scene at its point: an instance or probe that exists, in the right state. */
function actionProblem(action: SceneAction, plan: ScenePlan, state: SceneState): { key: string; message: string } | undefined {
  const instance = (n: number, key: string) =>
    n > plan.instances
      ? { key, message: `there ${plan.instances === 1 ? 'is 1 instance' : `are ${plan.instances} instances`} (instances: ${plan.instances}); got ${n}` }
      : undefined;
  const probe = (n: number, key: string) =>
    n > plan.probes.length ? { key, message: `there are ${plan.probes.length} probes (1..${plan.probes.length}); got ${n}` } : undefined;
  switch (action.kind) {
    case 'kill':
    case 'sigterm':
      return (
        instance(action.instance, action.kind) ??
        (state.running[action.instance] ? undefined : { key: action.kind, message: `instance ${action.instance} is not running at this point: start it first` })
      );
    case 'start':
      return (
        instance(action.instance, 'start') ??
        (state.running[action.instance] ? { key: 'start', message: `instance ${action.instance} is already running at this point` } : undefined)
      );
    case 'stop':
      return (
        instance(action.instance, 'stop') ??
        (!state.running[action.instance]
          ? { key: 'stop', message: `instance ${action.instance} is not running at this point: start it first` }
          : state.stopped[action.instance]
            ? { key: 'stop', message: `instance ${action.instance} is already stopped at this point: \`cont\` it first` }
            : undefined)
      );
    case 'cont':
      return (
        instance(action.instance, 'cont') ??
        (state.running[action.instance] && state.stopped[action.instance]
          ? undefined
          : { key: 'cont', message: `instance ${action.instance} is not stopped at this point: \`stop\` it first` })
      );
    case 'away':
      return (
        probe(action.probe, 'away') ?? (state.away[action.probe] ? { key: 'away', message: `probe ${action.probe} is already away at this point` } : undefined)
      );
    case 'back':
      return (
        probe(action.probe, 'back') ?? (state.away[action.probe] ? undefined : { key: 'back', message: `probe ${action.probe} is not away at this point` })
      );
    case 'repoint':
      return probe(action.probe, 'repoint') ?? instance(action.to, 'to');
  }
}

function apply(action: SceneAction, state: SceneState): void {
  if (action.kind === 'kill' || action.kind === 'sigterm') {
    state.running[action.instance] = false;
    state.stopped[action.instance] = false;
  } else if (action.kind === 'start') state.running[action.instance] = true;
  else if (action.kind === 'stop') state.stopped[action.instance] = true;
  else if (action.kind === 'cont') state.stopped[action.instance] = false;
  else if (action.kind === 'away') state.away[action.probe] = true;
  else if (action.kind === 'back') state.away[action.probe] = false;
}

export function sceneProblems(u: UnderTest | undefined, chain: ChainPlan): RawProblem[] {
  const plan = scenePlanOf(u);
  if (!u || !plan) return [];
  const base = ['server', 'under_test'];
  const out: RawProblem[] = [];
  if (u.fault !== undefined) out.push({ segments: [...base, 'fault'], at: 'key', message: 'a scene (instances, probes, steps) takes no `fault` hook yet' });
  plan.probes.forEach((p, i) => {
    if (p.instance > plan.instances)
      out.push({
        segments: [...base, 'probes', i, 'instance'],
        at: 'value',
        message: `there ${plan.instances === 1 ? 'is 1 instance' : `are ${plan.instances} instances`}; got ${p.instance}`,
      });
  });
  const state: SceneState = { running: [false, ...Array.from({ length: plan.instances }, () => true)], stopped: [], away: [] };
  let previous = 0;
  for (const [i, step] of (u.steps ?? []).entries()) {
    const at = [...base, 'steps', i];
    const form = stepFormProblems(step, at);
    if (form.length) {
      out.push(...form);
      continue;
    }
    const block = step.before_block;
    if (block <= chain.initialBlocks || block > chain.lastBlock)
      out.push({
        segments: [...at, 'before_block'],
        at: 'value',
        message: `the script mines blocks ${chain.initialBlocks + 1}..${chain.lastBlock}; got ${block}`,
      });
    else if (block < previous)
      out.push({
        segments: [...at, 'before_block'],
        at: 'value',
        message: `steps go in block order: this one is before block ${block}, the one above before block ${previous}`,
      });
    previous = Math.max(previous, block);
    const action = actionOf(step)!;
    const problem = actionProblem(action, plan, state);
    if (problem) out.push({ segments: [...at, problem.key], at: 'value', message: problem.message });
    else apply(action, state);
  }
  return out;
}
