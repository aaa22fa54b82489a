// The generated (ajv standalone) scenario validators accept and reject exactly as the schema
// compiled at run time does, with the same errors, on the whole catalogue and on bad files made
// from it; a missing or stale generated file is never used.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { allLabs } from '../../../harness/labs/registry.js';
import { projectRoot, scenariosDir } from '../../../harness/base/paths.js';
import { compileValidator, precompiledValidator, schemaOfLab, standaloneSource, type Validator, validatorOf } from '../../../harness/catalogue/validator.js';

const requireHere = createRequire(import.meta.url);
/** A generated file's validator, evaluated as the CommonJS module it is. */
function evaluate(source: string): Validator {
  const module = { exports: {} as Validator };
  new Function('module', 'exports', 'require', source)(module, module.exports, requireHere);
  return module.exports;
}

const catalogue = readdirSync(scenariosDir).flatMap((lab) =>
  readdirSync(join(scenariosDir, lab))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ name: `${lab}/${f}`, data: parse(readFileSync(join(scenariosDir, lab, f), 'utf8')) as Record<string, unknown> })),
);

/** Bad files made from a good one: each breaks the schema a different way. */
const spoilers: [string, (d: Record<string, unknown>) => Record<string, unknown>][] = [
  ['unknown key', (d) => ({ ...d, timeout_msec: 5 })],
  ['bad name', (d) => ({ ...d, name: 'Bad Name' })],
  ['no description', ({ description: _, ...d }) => d],
  ['description of the wrong type', (d) => ({ ...d, description: 3 })],
  ['blank description', (d) => ({ ...d, description: '   ' })],
  ['unknown protocol', (d) => ({ ...d, protocol: 'nope' })],
  ['timeout out of range', (d) => ({ ...d, timeout_ms: 1 })],
  ['time_scale 0', (d) => ({ ...d, time_scale: 0 })],
  ['fault with neither layer and an empty start', (d) => ({ ...d, faults: [{ name: 'x', start: {} }] })],
  [
    'fault with both layers',
    (d) => ({ ...d, faults: [{ name: 'x', network: { toxic: 'latency', down: true }, process: { signal: 'SIGHUP' }, start: { at_ms: -1 } }] }),
  ],
  ['events of the wrong type', (d) => ({ ...d, events: 'x' })],
  ['consumer of the wrong shape', (d) => ({ ...d, consumer: { incarnations: 'x', extra: 1 } })],
  ['not a mapping', () => [] as unknown as Record<string, unknown>],
];

t.test('standalone and run-time validators agree on the catalogue and on bad files', async (t) => {
  t.ok(catalogue.length > 10, 'the catalogue is there');
  for (const lab of allLabs()) {
    const schema = schemaOfLab(lab);
    const standalone = evaluate(standaloneSource(schema));
    const runtime = compileValidator(schema);
    let accepted = 0;
    let rejected = 0;
    // One assertion per lab, listing every input they disagree on: some 2 000 assertions a lab
    // with their messages cost tap 25 s, the validators themselves 0.2 s.
    const disagreements: { input: string; standalone: unknown; runtime: unknown }[] = [];
    for (const { name, data } of catalogue) {
      for (const [what, spoil] of [['as written', (d: Record<string, unknown>) => d] as const, ...spoilers]) {
        const input = spoil(structuredClone(data));
        const a = { valid: standalone(input), errors: standalone.errors ?? null };
        const b = { valid: runtime(input), errors: runtime.errors ?? null };
        if (JSON.stringify(a) !== JSON.stringify(b)) disagreements.push({ input: `${name}, ${what}`, standalone: a, runtime: b });
        if (a.valid) accepted++;
        else rejected++;
      }
    }
    t.same(
      disagreements.map((d) => d.input),
      [],
      `${lab.name}: the same verdict and the same errors on ${accepted + rejected} inputs`,
    );
    const [first] = disagreements;
    if (first) t.same(first.standalone, first.runtime, `${lab.name}: the first of them, ${first.input}`);
    t.ok(accepted > 0 && rejected > 0, `${lab.name}: some accepted (${accepted}), some rejected (${rejected})`);
  }
});

t.test('a generated file is used only when it was made from the schema in hand', async (t) => {
  const dir = join(projectRoot, '.tap', `validators-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [lab] = allLabs();
  const schema = schemaOfLab(lab!);
  t.equal(precompiledValidator(lab!.name, schema, dir), undefined, 'none there: none used');
  writeFileSync(join(dir, `${lab!.name}.cjs`), standaloneSource(schema));
  const generated = precompiledValidator(lab!.name, schema, dir);
  t.type(generated, 'function', 'a current one is used');
  t.equal(generated!({ name: 'x' }), false, 'and it validates');
  writeFileSync(join(dir, 'stale.cjs'), standaloneSource({ ...schema, title: 'an older schema' }));
  t.equal(precompiledValidator('stale', schema, dir), undefined, 'a stale one (another hash) is not');
  t.equal(precompiledValidator(lab!.name, schema, join(dir, 'nowhere')), undefined, 'a missing folder: none used');
});

t.test('validatorOf: one validator per lab, made once', async (t) => {
  for (const lab of allLabs()) {
    const v = validatorOf(lab);
    t.equal(validatorOf(lab), v, `${lab.name}: the same one again`);
    t.equal(v({}), false, `${lab.name}: an empty mapping is rejected`);
  }
});
