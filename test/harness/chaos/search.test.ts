// The chaos search's rules, in process, with a toy model and trials that judge a schedule at once
// (no process, no proxy): a failure counts only when it fails twice, in the search and in the
// shrink; the shrink keeps to its run cap and ends with the smallest schedule confirmed; a
// failure that does not fail again is reported as not confirmed and the search goes on; the
// budget, an interrupt and --keep-going stop (or not) where they should; and the overview, the
// closing line and chaos.json say what happened.
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import type { ChaosModel } from '../../../harness/lab-api/chaos-model.js';
import { chaosJson, closingLine, finishBatch, sectionsOf } from '../../../harness/chaos/overview.js';
import { type ChaosOptions, sameKind, scheduleAt, searchChaos } from '../../../harness/chaos/search.js';
import type { Trial, TrialRequest } from '../../../harness/chaos/trial.js';
import { ledgerChaos } from '../../../harness/labs/ledger/chaos/chaos.js';
import type { LedgerSchedule } from '../../../harness/labs/ledger/chaos/scenario.js';
import { ledgerLab } from '../../../harness/labs/ledger/index.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import type { RunStatus, RunView } from '../../../harness/report/view.js';
import { golden, writeRunFolder } from '../../helpers/journals.js';

interface Toy {
  steps: number[];
}

/** Steps are numbers; a schedule "fails" when a step is 15 or more. */
const toy: ChaosModel<Toy> = {
  layers: [{ name: 'n', what: 'a number' }],
  // As the ledger model draws its steps: minLength 0, filtered (with minLength 1 fast-check never drops the last item).
  schedules: () => fc.record({ steps: fc.array(fc.nat({ max: 20 }), { maxLength: 6 }).filter((steps) => steps.length > 0) }),
  scenario: () => ({}),
  steps: (s) => s.steps.map((n) => `step ${n}`),
  layersOf: () => ['n'],
};
const failing = (s: Toy) => s.steps.some((n) => n >= 15);

/** Real views for the overview (a passing and a failing golden run), made once. */
const dir = t.testdir();
const views = {
  pass: renderRunFolder(writeRunFolder(join(dir, 'pass'), golden('ack-crash-pass')), { entries: golden('ack-crash-pass') }).view,
  fail: renderRunFolder(writeRunFolder(join(dir, 'fail'), golden('ack-crash-ack-before-commit')), { entries: golden('ack-crash-ack-before-commit') }).view,
};

/** Trials judged by `judge` (the n-th call for a name), with the finding codes `codesOf` gives, recorded in order. */
function trials(judge: (s: Toy, name: string, again: number) => RunStatus, codesOf?: (s: Toy) => string[]) {
  const seen = new Map<string, number>();
  const calls: string[] = [];
  const trial = async (req: TrialRequest): Promise<Trial> => {
    const schedule = req.schedule as Toy;
    const key = JSON.stringify(schedule);
    const again = seen.get(key) ?? 0;
    seen.set(key, again + 1);
    const status = judge(schedule, req.name, again);
    calls.push(`${req.name} ${status}`);
    const view: RunView = status === 'pass' ? views.pass : views.fail;
    // Each trial points at a real run folder (a golden run), as the overview reads their journals.
    const runDir = join(dir, status === 'pass' ? 'pass' : 'fail');
    return {
      name: req.name,
      status,
      headline: status === 'pass' ? 'fine' : `failed: ${JSON.stringify(schedule.steps)}`,
      reasons: [],
      runDir,
      file: join(dir, `${req.name}.yaml`),
      durationMs: 1,
      coverage: [],
      untested: false,
      view,
      ...(codesOf && status === 'fail' ? { codes: codesOf(schedule) } : {}),
    };
  };
  return { trial, calls };
}

const options = (over: Partial<ChaosOptions>): ChaosOptions => ({
  lab: ledgerLab,
  model: toy as ChaosModel,
  where: { sealed: false },
  consumerCommand: 'x',
  seed: 5,
  runs: 40,
  budgetMs: 60_000,
  keepGoing: false,
  shrinkRuns: 30,
  steadyRuns: 0,
  batchDir: dir,
  cwd: dir,
  log: () => {},
  onFailure: () => join(dir, 'repro.yaml'),
  ...over,
});

const firstFailing = (seed: number) => fc.sample(toy.schedules(), { seed, numRuns: 40 }).findIndex(failing);

t.test('found, confirmed, shrunk to the smallest schedule that fails twice, within the cap', async (t) => {
  const { trial, calls } = trials((s) => (failing(s) ? 'fail' : 'pass'));
  const repros: unknown[] = [];
  const onFailure = (f: unknown) => {
    repros.push(f);
    return 'repro.yaml';
  };
  const o = await searchChaos(options({ trial, onFailure }));
  const index = firstFailing(5);
  t.ok(index >= 0, 'seed 5 draws a failing schedule');
  t.equal(o.stoppedBy, 'failure');
  t.equal(o.runsDone, index + 1);
  t.equal(o.failures.length, 1);
  const [f] = o.failures;
  t.equal(f!.index, index);
  t.same(f!.schedule, { steps: [15] }, 'the smallest: one step, the smallest failing number');
  t.same(f!.steps, ['step 15']);
  t.ok(f!.shrinkRuns <= 30);
  t.match(f!.path, new RegExp(`^${index}(:\\d+)+$`), 'the path starts at the search run');
  t.same(
    f!.smallest.map((x) => x.status),
    ['fail', 'fail'],
  );
  t.equal(f!.failedRuns, 2);
  t.equal(repros.length, 1);
  t.same(
    calls.slice(0, index + 2).map((c) => c.split(' ')[1]),
    [...Array(index).fill('pass'), 'fail', 'fail'],
    'every run once, the failure twice',
  );
});

t.test('the shrink keeps to its cap, and a candidate that fails once only does not count', async (t) => {
  for (const cap of [1, 2, 5]) {
    const { trial, calls } = trials((s) => (failing(s) ? 'fail' : 'pass'));
    const o = await searchChaos(options({ trial, shrinkRuns: cap }));
    t.ok(o.failures[0]!.shrinkRuns <= cap, `cap ${cap}: ${o.failures[0]!.shrinkRuns} runs`);
    t.ok(calls.filter((c) => c.includes('shrink')).length <= cap);
  }
  // Shrink candidates pass their second run: none is confirmed, the found schedule stays.
  const { trial } = trials((s, name, again) => (failing(s) && (!name.includes('shrink') || again === 0) ? 'fail' : 'pass'));
  const o = await searchChaos(options({ trial }));
  const found = fc.sample(toy.schedules(), { seed: 5, numRuns: 40 })[firstFailing(5)];
  t.same(o.failures[0]!.schedule, found, 'no candidate failed twice: the schedule found is the smallest confirmed');
  t.equal(o.failures[0]!.path, String(firstFailing(5)));
});

t.test('a failure that passes its second run is not confirmed, and the search goes on', async (t) => {
  const { trial } = trials((s, _name, again) => (failing(s) && again === 0 ? 'fail' : 'pass'));
  const o = await searchChaos(options({ trial, runs: 40 }));
  t.equal(o.failures.length, 0);
  t.ok(o.unconfirmed.length >= 1);
  t.same(
    o.unconfirmed[0]!.trials.map((x) => x.status),
    ['fail', 'pass'],
  );
  t.equal(o.stoppedBy, 'runs');
  t.equal(o.runsDone, 40);
  t.match(closingLine(o), /^no failure found \(40 schedules tried, \d+ failed once but not again\)$/);
});

t.test('--keep-going, the budget, an interrupt, harness errors', async (t) => {
  const judge = (s: Toy): RunStatus => (failing(s) ? 'fail' : 'pass');
  const all = await searchChaos(options({ trial: trials(judge).trial, keepGoing: true, shrinkRuns: 2 }));
  const expected = fc.sample(toy.schedules(), { seed: 5, numRuns: 40 }).filter(failing).length;
  t.equal(all.failures.length, expected, 'every failing schedule of the 40, each shrunk');
  t.equal(all.stoppedBy, 'runs');
  const none = await searchChaos(options({ trial: trials(judge).trial, budgetMs: 0 }));
  t.equal(none.stoppedBy, 'budget');
  t.equal(none.runsDone, 0);
  const stop = new AbortController();
  const { trial } = trials((s) => {
    stop.abort('SIGINT');
    return judge(s);
  });
  const cut = await searchChaos(options({ trial, signal: stop.signal }));
  t.equal(cut.stoppedBy, 'interrupted');
  t.equal(cut.runsDone, 1);
  const errors = await searchChaos(options({ trial: trials(() => 'error').trial, runs: 3 }));
  t.equal(errors.harnessErrors.length, 3);
  t.equal(errors.failures.length, 0);
  t.match(closingLine(errors), /3 harness errors/);
});

t.test('an error inside the shrink is the harness’s, not a failing candidate', async (t) => {
  const boom = async (req: TrialRequest): Promise<Trial> => {
    if (req.name.includes('shrink')) throw new Error('the scenario did not load');
    return trials((s) => (failing(s) ? 'fail' : 'pass')).trial(req);
  };
  await t.rejects(searchChaos(options({ trial: boom })), /the scenario did not load/);
});

t.test('the overview and chaos.json say what the search found', async (t) => {
  const { trial } = trials((s, _name, again) => (failing(s) && (again === 0 || s.steps.length < 3) ? 'fail' : 'pass'));
  const o = await searchChaos(options({ trial, keepGoing: true, runs: 40, onFailure: () => join(dir, 'repro.yaml') }));
  const sections = sectionsOf(o, dir, dir);
  t.match(sections[0], {
    title: 'Chaos',
    lines: [{ text: new RegExp(`^seed 5: 40 of 40 schedules tried \\(all runs done\\); ${o.failures.length} confirmed failure`) }],
  });
  if (o.failures.length) {
    const confirmed = sections.find((s) => s.title.startsWith('Confirmed failures'))!;
    t.match(confirmed.lines[0]!.text, /^run \d+: shrunk from \d+ to \d+ fault steps in \d+ runs \(path [\d:]+\), failed 2 of 2 runs: failed: /);
    t.equal(confirmed.lines[1]!.href, 'repro.yaml', 'the repro, relative to the folder');
  }
  if (o.unconfirmed.length) t.ok(sections.some((s) => s.title.startsWith('Not confirmed')));
  const json = chaosJson(o, 'ledger', 'x', dir);
  t.equal(json.schema, 1);
  t.equal(json.failures.length, o.failures.length);
  t.equal(json.unconfirmed.length, o.unconfirmed.length);
  t.same(
    json.failures[0]?.smallest.map((s) => s.status),
    o.failures[0] ? ['fail', 'fail'] : undefined,
  );
  const batch = join(dir, 'chaos-batch');
  mkdirSync(batch);
  const index = finishBatch(batch, dir, '2026-12-01T00:00:00', o.trials, sections, 'chaoslab chaos --seed 5');
  t.equal(index, join(batch, 'index.html'));
  t.equal(realpathSync(join(dir, 'latest')), realpathSync(batch), 'latest points at the chaos folder');
  t.match(readFileSync(join(batch, 'summary.md'), 'utf8'), /^# ❌ chaoslab chaos: .*\n\n`chaoslab chaos --seed 5` · \d+ runs/);
});

t.test('a run whose drawn fault took no effect is untested: counted apart from harness errors, and in the coverage table', async (t) => {
  // Odd steps are cuts that meet the consumer, even ones reorganisations that never reach it.
  const coverageOf = (s: Toy) =>
    s.steps.map((n, i) => ({ fault: `f${i}`, kind: n % 2 ? 'cut' : 'reorganisation', took: n % 2 === 1, how: n % 2 ? 'met' : 'reached no consumer' }));
  const trial = async (req: TrialRequest): Promise<Trial> => {
    const base = await trials(() => 'pass').trial(req);
    const coverage = coverageOf(req.schedule as Toy);
    const untested = coverage.some((c) => !c.took);
    return { ...base, status: untested ? 'error' : 'pass', untested, coverage, headline: untested ? 'untested: reached no consumer' : 'fine' };
  };
  const o = await searchChaos(options({ trial, runs: 12 }));
  const draws = fc.sample(toy.schedules(), { seed: 5, numRuns: 12 });
  const withEven = draws.filter((d) => d.steps.some((n) => n % 2 === 0)).length;
  t.ok(withEven > 0 && withEven < 12, 'the seed draws both kinds of run');
  t.equal(o.untested.length, withEven, 'every run with an unmet fault is untested');
  t.equal(o.harnessErrors.length, 0, 'and none is a harness error');
  t.equal(o.searchRuns.length, 12);
  const section = sectionsOf(o, dir, dir).find((s) => s.title.startsWith('Coverage'))!;
  const reorg = section.lines.find((l) => l.text.startsWith('reorganisation'))!;
  t.match(
    reorg.text,
    new RegExp(
      `^reorganisation: met in 0 of ${withEven} runs that drew it \\(0 %\\); \\d+ drawn, 0 took effect — below 90 %: the generator draws reorganisation faults that test nothing$`,
    ),
  );
  t.match(section.lines.find((l) => l.text.startsWith('cut'))!.text, /^cut: met in (\d+) of \1 runs that drew it \(100 %\)/);
  t.ok(sectionsOf(o, dir, dir).some((s) => s.title === `Untested (${withEven}): passed, but a drawn fault took no effect`));
  t.match(closingLine(o), new RegExp(`${withEven} untested \\(a fault took no effect\\)`));
  const json = chaosJson(o, 'ledger', 'x', dir);
  t.equal(json.untested.length, withEven);
  t.match(json.coverage, [{ kind: String }]);
  t.equal(json.coverage.find((c) => c.kind === 'reorganisation')!.runsMet, 0);
});

t.test('sameKind: a candidate must fail with the found failure’s leading finding code', async (t) => {
  const trial = (status: RunStatus, codes?: string[]) => ({ status, codes }) as Trial;
  t.ok(sameKind(trial('fail', ['lost', 'slow']), trial('fail', ['slow', 'lost'])), 'the leading code among its own');
  t.notOk(sameKind(trial('fail', ['lost', 'slow']), trial('fail', ['slow'])), 'another bug: not the same kind');
  t.notOk(sameKind(trial('fail', ['lost']), trial('pass', ['lost'])), 'a pass never is');
  t.notOk(sameKind(trial('fail', ['lost']), trial('error', ['lost'])), 'nor an error');
  t.ok(sameKind(trial('fail'), trial('fail', ['x'])), 'no code to match: a fail is enough');
  t.ok(sameKind(trial('fail', ['lost']), trial('fail')), 'a trial without codes: its status alone');
});

t.test('the shrink keeps the kind of the failure it found: it does not slide to another bug', async (t) => {
  // Any step of 15 or more fails; one of 18 or more is a second bug, listed first.
  const codesOf = (s: Toy) => (s.steps.some((n) => n >= 18) ? ['lost', 'slow'] : ['slow']);
  const draws = (seed: number) => fc.sample(toy.schedules(), { seed, numRuns: 40 });
  const seed = [...Array(50).keys()].find((s) => Math.max(...(draws(s).find(failing)?.steps ?? [0])) >= 18);
  t.ok(seed !== undefined, 'a seed whose first failing schedule has a step of 18 or more');
  const { trial } = trials((s) => (failing(s) ? 'fail' : 'pass'), codesOf);
  const o = await searchChaos(options({ trial, seed: seed!, shrinkRuns: 60 }));
  t.equal(o.failures.length, 1);
  t.same(o.failures[0]!.schedule, { steps: [18] }, 'the smallest that still fails with `lost`, not [15], which fails with `slow` only');
});

t.test('a shrink candidate with more fault steps than the smallest so far is not run', async (t) => {
  // A chained arbitrary draws its part anew when its source shrinks: fast-check's "smaller"
  // schedule may then hold more steps (the ledger model's patient flag did this: 1 step → 5).
  const chained: ChaosModel<Toy & { patient: boolean }> = {
    ...toy,
    schedules: () =>
      fc.boolean().chain((patient) => fc.record({ patient: fc.constant(patient), steps: fc.array(fc.nat({ max: 20 }), { minLength: 1, maxLength: 6 }) })),
  };
  let patientStarts = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { trial, calls } = trials(() => 'fail');
    const sizes: number[] = [];
    const counting = async (req: TrialRequest) => {
      sizes.push((req.schedule as Toy).steps.length);
      return trial(req);
    };
    const o = await searchChaos(options({ model: chained as ChaosModel, trial: counting, seed, shrinkRuns: 4 }));
    const [f] = o.failures;
    // Runs in order: the search run, its confirmation, then each candidate run (twice when it fails).
    let smallest = sizes[0]!;
    for (const [i, call] of calls.entries()) {
      if (!call.includes('shrink')) continue;
      t.ok(sizes[i]! <= smallest, `seed ${seed}: ${call} has ${sizes[i]} steps, the smallest so far ${smallest}`);
      if (call.includes('again')) smallest = sizes[i]!;
    }
    t.ok(f!.steps.length <= f!.originalSteps.length, `seed ${seed}: shrunk ${f!.originalSteps.length} → ${f!.steps.length}`);
    if (fc.sample(chained.schedules(), { seed, numRuns: 1 })[0]!.patient) patientStarts++;
  }
  t.ok(patientStarts > 0, 'some seeds start from a patient schedule, whose first candidate is drawn anew');
});

t.test('the shrunk schedule runs again; a racy smallest gives way to a larger one that fails every time', async (t) => {
  // Steady: every run of a failing schedule fails, so the smallest is written after its 2 more runs.
  const steady = trials((s) => (failing(s) ? 'fail' : 'pass'));
  const [f] = (await searchChaos(options({ trial: steady.trial, steadyRuns: 2 }))).failures;
  t.same(f!.schedule, { steps: [15] });
  t.equal(f!.failedRuns, 4);
  t.same(
    f!.smallest.map((x) => x.name.replace(/^run-\d+-shrink-\d+/, 'S')),
    ['S', 'S-again', 'S-steady-1', 'S-steady-2'],
  );
  t.equal(f!.steadyRuns, 2);

  // Racy: the smallest schedule fails only on its first two runs (as a SIGKILL that wins a race
  // under load, then loses it), any other failing one always. The written schedule is a larger
  // confirmed one that failed all its runs, and its path draws exactly it again.
  const smallest = (s: Toy) => s.steps.length === 1 && s.steps[0] === 15;
  const racy = trials((s, _name, again) => (failing(s) && (!smallest(s) || again < 2) ? 'fail' : 'pass'));
  const lines: string[] = [];
  const o = await searchChaos(options({ trial: racy.trial, steadyRuns: 2, log: (l) => lines.push(l) }));
  const [g] = o.failures;
  t.notSame(g!.schedule, { steps: [15] }, `written: ${JSON.stringify(g!.schedule)}`);
  t.equal(g!.failedRuns, g!.smallest.length, 'it failed every run');
  t.same(await scheduleAt(toy.schedules(), 5, g!.path), g!.schedule, `path ${g!.path} draws the written schedule`);
  t.ok(g!.steadyRuns === 4, 'the smallest and the next one got 2 runs each');
  t.ok(lines.some((l) => /failed more steadily than the smallest; it is the one written/.test(l)));

  // Always racy: the ladder stops after 3 schedules, and the best rate wins (the smaller on a tie).
  const flaky = trials((s, _name, again) => (failing(s) && again < 2 ? 'fail' : 'pass'));
  const [h] = (await searchChaos(options({ trial: flaky.trial, steadyRuns: 2 }))).failures;
  t.ok(h!.steadyRuns <= 6, `${h!.steadyRuns} steadiness runs`);
  t.equal(h!.failedRuns, 2);
  t.same(h!.schedule, { steps: [15] }, 'no schedule steadier: the smallest');
});

t.test('the shrink drops fault steps before it makes their numbers smaller', async (t) => {
  // fast-check alone tries shorter suffixes, then smaller numbers in every item, and drops an
  // item from the middle only after that: within a small cap, a single pass that runs those
  // number shrinks (each fails, and costs two runs) keeps a failing step's neighbours.
  let fromMiddle = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { trial } = trials((s) => (failing(s) ? 'fail' : 'pass'));
    const o = await searchChaos(options({ trial, seed, shrinkRuns: 12 }));
    const [f] = o.failures;
    if (!f) continue;
    if ((fc.sample(toy.schedules(), { seed, numRuns: 40 })[f.index] as Toy).steps.at(-1)! < 15) fromMiddle++;
    t.equal(f.steps.length, 1, `seed ${seed}: ${f.originalSteps.length} → ${f.steps.length} steps (${f.steps.join(', ')}) in ${f.shrinkRuns} runs`);
    t.same(await scheduleAt(toy.schedules(), seed, f.path), f.schedule, `seed ${seed}: path ${f.path} draws the written schedule`);
  }
  t.ok(fromMiddle >= 5, `${fromMiddle} failures whose last step passes (a failing step before it)`);
});

t.test('a ledger schedule shrinks to the one step its failure needs, the first or the last', async (t) => {
  // The ledger model's steps: with minLength 1, fast-check never dropped the last one.
  const model = ledgerChaos as ChaosModel;
  const where = { sealed: false };
  let tried = 0;
  for (let seed = 1; tried < 12 && seed < 200; seed++) {
    const [drawn] = fc.sample(model.schedules(), { seed, numRuns: 1 }) as LedgerSchedule[];
    if (drawn!.kind !== 'stream' || drawn!.steps.length < 3) continue;
    const needed = tried++ % 2 === 0 ? drawn!.steps[0]! : drawn!.steps.at(-1)!;
    const has = (s: LedgerSchedule) => s.kind === 'stream' && s.steps.some((step) => isDeepStrictEqual(step, needed));
    const { trial } = trials((s) => (has(s as unknown as LedgerSchedule) ? 'fail' : 'pass'));
    const [f] = (await searchChaos(options({ model, where, trial, seed, runs: 1 }))).failures;
    const written = f!.schedule as LedgerSchedule & { kind: 'stream' };
    t.same(written.steps, [needed], `seed ${seed}: ${drawn!.steps.length} steps → ${f!.steps.join('; ')}`);
  }
  t.equal(tried, 12, 'twelve seeds draw a ledger stream schedule of 3 steps or more first');
});

t.test('no shrink candidate runs twice, in either pass', async (t) => {
  let secondPasses = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { trial } = trials((s) => (failing(s) ? 'fail' : 'pass'));
    const runs = new Map<string, number>();
    const counting = async (req: TrialRequest) => {
      const key = JSON.stringify(req.schedule);
      if (/shrink-\d+$/.test(req.name)) runs.set(key, (runs.get(key) ?? 0) + 1);
      return trial(req);
    };
    const [f] = (await searchChaos(options({ trial: counting, seed }))).failures;
    if (!f) continue;
    const twice = [...runs].filter(([, n]) => n > 1).map(([key]) => key);
    t.same(twice, [], `seed ${seed}: ${runs.size} candidates in ${f.shrinkRuns} runs`);
    // A second pass ran candidates when the shrink ended with numbers smaller than the first pass's.
    if (f.shrinkRuns < 30) secondPasses++;
  }
  t.ok(secondPasses > 0, `${secondPasses} shrinks ended within the cap, both passes done`);
});
