// Every lab's chaos model: each schedule it draws — and each a shrink reaches — makes a valid
// scenario of its lab (loaded as any scenario file is), the same seed draws the same schedules,
// every layer is drawn, and a repro's seed and path draw its schedule again.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import type { ChaosModel } from '../../../harness/lab-api/chaos-model.js';
import { writeRepro } from '../../../harness/chaos/repro.js';
import { scheduleAt } from '../../../harness/chaos/search.js';
import { scenarioText } from '../../../harness/chaos/trial.js';
import { allLabs } from '../../../harness/labs/registry.js';
import { loadScenario } from '../../../harness/catalogue/load.js';

// Every lab's consumer model, then every server model (`chaos --server`), each checked alike.
const labs = [
  ...(await Promise.all(
    allLabs()
      .filter((lab) => lab.chaos)
      .map(async (lab) => ({ lab, title: lab.name, model: (await lab.chaos!()) as ChaosModel })),
  )),
  ...(await Promise.all(
    allLabs()
      .filter((lab) => lab.server?.chaos)
      .map(async (lab) => ({ lab, title: `${lab.name} --server`, model: (await lab.server!.chaos!()) as ChaosModel })),
  )),
];

t.test('the labs with a chaos model', async (t) => {
  // Not a closed list: a new lab with a chaos model joins the checks below by its folder alone.
  const names = labs.map((l) => l.title);
  for (const name of ['ledger', 'feed', 'feed --server']) t.ok(names.includes(name), `${name} has one (${names.join(', ')})`);
});

for (const { lab, title, model } of labs) {
  t.test(`${title}: every schedule drawn, sealed or not, is a valid scenario`, async (t) => {
    const dir = t.testdir();
    let n = 0;
    for (const sealed of [true, false])
      fc.assert(
        fc.property(model.schedules(), (schedule) => {
          const name = `s-${++n}`;
          const file = join(dir, `${name}.yaml`);
          writeFileSync(file, scenarioText(model, schedule, { sealed }, { name, description: 'x', lab: lab.name }));
          const scenario = loadScenario(file);
          return scenario.protocol === lab.name && model.steps(schedule, { sealed }).every((s) => typeof s === 'string' && s.length > 0);
        }),
        // fast-check's default run count, each way: 300 cost this file 9 of its 18 s of CPU (the
        // 600 draws below still show every layer drawn).
        { seed: 7, numRuns: 100 },
      );
    t.pass(`${n} schedules loaded`);
  });

  t.test(`${title}: the same seed draws the same schedules; a seed and path draw one again`, async (t) => {
    const arb = model.schedules();
    const a = fc.sample(arb, { seed: 42, numRuns: 20 });
    t.same(fc.sample(arb, { seed: 42, numRuns: 20 }), a);
    t.notSame(fc.sample(arb, { seed: 43, numRuns: 20 }), a);
    t.same(await scheduleAt(arb, 42, '7'), a[7]);
  });

  t.test(`${title}: every layer is drawn; sealed-only layers run only where sealed`, async (t) => {
    // 600 draws: with seed 3 the last layer first appears at draw 29 (ledger), 107 (feed --server)
    // and 294 (feed). Each feed draw places its faults on a chain (about 5 ms), so 2 000 draws
    // took some 20 s; a new, rarer layer that fails "is drawn" here needs more.
    const drawn = fc.sample(model.schedules(), { seed: 3, numRuns: 600 });
    const seen = (sealed: boolean) => new Set(drawn.flatMap((s) => model.layersOf(s, { sealed })));
    const sealed = seen(true);
    t.same(
      [...sealed].filter((name) => !model.layers.some((l) => l.name === name)),
      [],
      'every layer a schedule names is listed',
    );
    for (const layer of model.layers) t.ok(sealed.has(layer.name), `${layer.name} is drawn`);
    const unsealed = seen(false);
    for (const layer of model.layers.filter((l) => l.sealedOnly)) t.notOk(unsealed.has(layer.name), `${layer.name} is left out unsealed`);
  });
}

t.test('a repro: an ordinary scenario named repro, its chaos key, its header; the next one repro-2', async (t) => {
  const { model } = labs.find((l) => l.lab.name === 'ledger')!;
  const dir = t.testdir();
  const [schedule] = fc.sample(model.schedules(), { seed: 181, numRuns: 1 });
  const trial = {
    name: 'run-1',
    status: 'fail' as const,
    headline: 'seq 3 applied twice',
    reasons: [],
    runDir: dir,
    file: join(dir, 'x.yaml'),
    durationMs: 1,
    coverage: [],
    untested: false,
    view: {} as never,
  };
  const failure = {
    index: 0,
    found: [trial, trial] as [typeof trial, typeof trial],
    schedule,
    path: '0:1',
    steps: model.steps(schedule, { sealed: false }),
    originalSteps: ['a', 'b', 'c', 'd', 'e'],
    smallest: [trial, trial, trial, trial],
    failedRuns: 4,
    shrinkRuns: 7,
    steadyRuns: 2,
  };
  const context = {
    lab: 'ledger',
    model,
    where: { sealed: false },
    batchDir: dir,
    consumerCommand: "node 'my consumer.js'",
    seed: 181,
    runsAsked: 100,
    cwd: dir,
    written: 0,
  };
  const shown = writeRepro(failure, context);
  t.equal(shown, 'repro.yaml', 'relative to where chaos ran');
  const text = readFileSync(join(dir, 'repro.yaml'), 'utf8');
  t.match(
    text,
    /^# chaoslab chaos repro \(ledger lab\): a schedule shrunk from 5 fault steps to \d+ fault steps? in 7 shrink runs, which failed 4 of 4 runs\.\n/,
  );
  t.notMatch(text, /--repeat/, 'a steady failure needs no repeat to show');
  t.match(
    text,
    `# Seed 181, path 0:1 (fast-check): found at run 1 of \`chaoslab chaos --lab ledger --seed 181 --runs 100 --consumer 'node '\\''my consumer.js'\\'''\``,
  );
  t.match(text, '# It failed with: seq 3 applied twice');
  const scenario = loadScenario(join(dir, 'repro.yaml'));
  t.same(scenario.chaos, { consumer: "node 'my consumer.js'", seed: 181, path: '0:1' });
  t.equal(scenario.name, 'repro');
  t.equal(writeRepro({ ...failure, failedRuns: 3 }, { ...context, written: 1 }), 'repro-2.yaml');
  t.equal(loadScenario(join(dir, 'repro-2.yaml')).name, 'repro-2');
  const racy = readFileSync(join(dir, 'repro-2.yaml'), 'utf8');
  t.match(racy, 'which failed 3 of 4 runs (it turns on timing: a replay may pass).', 'a racy repro says so');
  t.match(racy, '; to see it fail: chaoslab run repro-2.yaml --repeat 10');
  t.notMatch(racy, 'What each fault did', 'a run without coverage rows says nothing of them');
  // What each remaining fault did in the failing run, from its coverage rows, inert.
  const met = {
    ...trial,
    coverage: [
      { fault: 'kill-7', kind: 'kill', took: true, how: 'SIGKILL to consumer incarnation 1 at 0.80 s' },
      { fault: 'cut-2', kind: 'cut', took: false, how: 'the cut met no connection\u001b[2J' },
    ],
  };
  writeRepro({ ...failure, smallest: [met, met] }, { ...context, written: 2 });
  const speaking = readFileSync(join(dir, 'repro-3.yaml'), 'utf8');
  t.match(
    speaking,
    '# What each fault did in the run that failed:\n#   - kill-7 (kill): SIGKILL to consumer incarnation 1 at 0.80 s\n#   - cut-2 (cut): no effect: the cut met no connection',
  );
  t.notMatch(speaking, '\u001b', 'no escape sequence reaches the file');
});
