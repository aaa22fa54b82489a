// Every lab's chaos model: each schedule it draws — and each a shrink reaches — makes a valid
// scenario of its lab (loaded as any scenario file is), the same seed draws the same schedules,
// every layer is drawn, and a repro's seed and path draw its schedule again.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import type { ChaosModel } from '../harness/chaos/model.js';
import { scheduleAt } from '../harness/chaos/search.js';
import { scenarioText } from '../harness/chaos/trial.js';
import { allLabs } from '../harness/labs/registry.js';
import { loadScenario } from '../harness/scenario/load.js';

const labs = await Promise.all(
  allLabs()
    .filter((lab) => lab.chaos)
    .map(async (lab) => ({ lab, model: (await lab.chaos!()) as ChaosModel })),
);

t.test('the labs with a chaos model', async (t) => {
  t.same(
    labs.map((l) => l.lab.name),
    ['ledger', 'feed'],
  );
});

for (const { lab, model } of labs) {
  t.test(`${lab.name}: every schedule drawn, sealed or not, is a valid scenario`, async (t) => {
    const dir = t.testdir();
    let n = 0;
    for (const sealed of [true, false])
      fc.assert(
        fc.property(model.schedules({ sealed }), (schedule) => {
          const name = `s-${++n}`;
          const file = join(dir, `${name}.yaml`);
          writeFileSync(file, scenarioText(model, schedule, { name, description: 'x', lab: lab.name }));
          const scenario = loadScenario(file);
          return scenario.protocol === lab.name && model.steps(schedule).every((s) => typeof s === 'string' && s.length > 0);
        }),
        { seed: 7, numRuns: 300 },
      );
    t.pass(`${n} schedules loaded`);
  });

  t.test(`${lab.name}: the same seed draws the same schedules; a seed and path draw one again`, async (t) => {
    const arb = model.schedules({ sealed: true });
    const a = fc.sample(arb, { seed: 42, numRuns: 20 });
    t.same(fc.sample(arb, { seed: 42, numRuns: 20 }), a);
    t.notSame(fc.sample(arb, { seed: 43, numRuns: 20 }), a);
    t.same(await scheduleAt(arb, 42, '7'), a[7]);
  });

  t.test(`${lab.name}: every layer is drawn; sealed-only layers only where sealed`, async (t) => {
    const seen = (sealed: boolean) => new Set(fc.sample(model.schedules({ sealed }), { seed: 3, numRuns: 2000 }).flatMap((s) => model.layersOf(s)));
    const sealed = seen(true);
    t.same(
      [...sealed].filter((name) => !model.layers.some((l) => l.name === name)),
      [],
      'every layer a schedule names is listed',
    );
    for (const layer of model.layers) t.ok(sealed.has(layer.name), `${layer.name} is drawn`);
    const unsealed = seen(false);
    for (const layer of model.layers.filter((l) => l.sealedOnly)) t.notOk(unsealed.has(layer.name), `${layer.name} is not drawn unsealed`);
  });
}
