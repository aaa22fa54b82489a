// Every lab, the same conformance checks, over allLabs() — the built-in labs and, through
// CHAOSLAB_LAB_DIRS, the toy lab of test/fixtures/labs/toy/, which nothing outside its folder
// names: each lab's scenarios round-trip through its schema, its reference passes its happy path
// (run in this process, real processes, real Toxiproxy) and every report renders from that run,
// and its first mutant fails the killer its mutant index names, for the reason it names. One
// mutant per lab keeps this cheap: the whole matrix is `chaoslab mutants`' (test/e2e/matrix.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';

// Before the registry is imported (it finds the labs once, when loaded): the fixtures' labs join the built-in ones.
process.env.CHAOSLAB_LAB_DIRS = join(import.meta.dirname, '../../fixtures/labs');
const { allLabs } = await import('../../../harness/labs/registry.js');
const { loadScenario } = await import('../../../harness/catalogue/load.js');
const { runScenario } = await import('../../../harness/run/runner.js');
const { renderRunFolder, REPORT_FILES } = await import('../../../harness/report/render-all.js');
const { loadMatrixConsumers } = await import('../../../harness/run/mutants.js');
const { projectRoot } = await import('../../../harness/base/paths.js');
const { findingTexts } = await import('../../../harness/findings/verdict.js');

t.setTimeout(600_000);

const scenarioFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f));

t.test('the toy lab is in the registry, added by its folder alone', async (t) => {
  t.ok(
    allLabs().some((lab) => lab.name === 'toy'),
    `labs: ${allLabs()
      .map((lab) => lab.name)
      .join(', ')}`,
  );
});

for (const lab of allLabs()) {
  t.test(`${lab.name} lab`, async (t) => {
    const files = scenarioFiles(lab.scenariosDir);
    const scenarioOf = (name: string) => {
      const file = files.find((f) => f.endsWith(`/${name}.yaml`));
      if (!file) throw new Error(`${lab.name}: no scenario ${name} in ${lab.scenariosDir}`);
      return loadScenario(file);
    };

    t.test('every scenario round-trips through the schema', async (t) => {
      t.ok(files.length > 0, `${files.length} scenario files in ${lab.scenariosDir}`);
      for (const file of files) {
        const scenario = loadScenario(file);
        t.equal(scenario.protocol, lab.name, `${scenario.name} loads as a ${lab.name} scenario, without a problem`);
        t.equal(scenario.source, readFileSync(file, 'utf8'), `${scenario.name} keeps its source`);
      }
    });

    t.test('its reference passes its happy path, and every report renders', async (t) => {
      const result = await runScenario({ scenario: scenarioOf(lab.happyPath), cwd: projectRoot, reportsDir: t.testdir(), seal: 'off', latest: false });
      t.equal(result.status, 'pass', `${lab.happyPath}: ${result.verdict?.headline ?? result.error}`);
      const rendered = renderRunFolder(result.runDir);
      t.same(
        rendered.files.map((f) => f.slice(result.runDir.length + 1)),
        [...REPORT_FILES],
        'summary.md, report.html and junit.xml are rendered from the run folder',
      );
      const [summary, html, junit] = REPORT_FILES.map((f) => readFileSync(join(result.runDir, f), 'utf8'));
      t.match(summary, /PASS/i, 'summary.md says it passed');
      t.match(html, /<html/i, 'report.html is a page');
      t.match(junit, /<testsuite[^>]* failures="0"/, 'junit.xml has no failure');
    });

    t.test('its first mutant fails its killer, for its reason', async (t) => {
      const mutant = loadMatrixConsumers(lab).find((c) => c.kind === 'mutant');
      if (!mutant?.killer || !mutant.reason) return t.fail(`${lab.mutantIndex} lists no mutant`);
      const result = await runScenario({
        scenario: scenarioOf(mutant.killer),
        consumerCommand: mutant.command,
        cwd: projectRoot,
        reportsDir: t.testdir(),
        seal: 'off',
        latest: false,
      });
      t.equal(result.status, 'fail', `${mutant.label} × ${mutant.killer}: ${result.verdict?.headline ?? result.error}`);
      const texts = result.verdict ? findingTexts(result.verdict) : [];
      t.ok(
        texts.some((text) => mutant.reason!.test(text)),
        `caught for /${mutant.reason.source}/: ${texts.join(' | ')}`,
      );
    });
  });
}
