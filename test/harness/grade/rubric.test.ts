// Rubrics: the shipped ones load against the real catalogue; every mistake names the file and field.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkRubric, loadRubric, maxScore, mergeRubrics, RubricError, rubricFiles, shownName } from '../../../harness/grade/rubric.js';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { projectRoot, scenariosDir } from '../../../harness/base/paths.js';
import { listScenarios } from '../../../harness/catalogue/catalogue.js';
import { labNames, testsServer } from '../../../harness/labs/registry.js';

const LABS = labNames();

t.test('each shipped rubric names scenarios of its own lab, with feedback pointing at a contract section', async (t) => {
  const shipped = LABS.filter((lab) => existsSync(join(projectRoot, 'rubrics', `${lab}.yaml`)));
  t.ok(shipped.includes('ledger') && shipped.includes('feed'), `rubrics shipped: ${shipped.join(', ')}`);
  for (const lab of shipped) {
    const rubric = loadRubric(join(projectRoot, 'rubrics', `${lab}.yaml`), LABS);
    t.equal(rubric.lab, lab);
    const catalogue = new Map(listScenarios(scenariosDir, lab).map((s) => [s.name, s.lab]));
    for (const test of rubric.tests) {
      t.equal(catalogue.get(test.name), lab, `${lab}: ${test.name} is a ${lab} scenario`);
      t.match(test.feedback, /§\d/, `${lab}: ${test.name}'s feedback names a contract section`);
    }
    t.ok(
      rubric.tests.some((x) => x.visibility === 'after_due_date' && x.points > 0),
      `${lab}: has a point-bearing scenario shown only after the due date`,
    );
    t.notOk(
      rubric.tests.some((x) => x.visibility === 'hidden' && x.points > 0),
      `${lab}: no hidden scenario carries points`,
    );
    t.ok(maxScore(rubric) > 0);
  }
});

t.test("a server rubric (rubrics/<lab>-server.yaml) grades only its lab's server scenarios; merged with the consumer rubric, one rubric of both", async (t) => {
  const serverRubric = loadRubric(join(projectRoot, 'rubrics', 'feed-server.yaml'), LABS);
  t.equal(serverRubric.lab, 'feed');
  const scenarios = new Map(listScenarios(scenariosDir, 'feed').map((s) => [s.name, s.file]));
  for (const test of serverRubric.tests) {
    t.ok(testsServer(loadScenario(scenarios.get(test.name)!)), `${test.name} is a server scenario`);
    t.match(test.feedback, /§\d/, `${test.name}'s feedback names a section of the server contract`);
  }
  const consumer = loadRubric(join(projectRoot, 'rubrics', 'feed.yaml'), LABS);
  const both = mergeRubrics([consumer, serverRubric]);
  t.same(rubricFiles(both), [consumer.file, serverRubric.file]);
  t.equal(both.file, consumer.file);
  t.same(
    both.tests.map((x) => x.name),
    [...consumer.tests, ...serverRubric.tests].map((x) => x.name),
  );
  t.equal(maxScore(both), maxScore(consumer) + maxScore(serverRubric));
  t.equal(consumer.jobsPerProcessor, 2, 'the feed consumer rubric runs two at once per processor');
  t.equal(serverRubric.jobsPerProcessor, undefined, 'the server rubric one');
  t.equal(both.jobsPerProcessor, undefined, 'graded together: the fewer');
  t.equal(mergeRubrics([consumer]), consumer, 'one rubric is itself');
  t.same(rubricFiles(consumer), [consumer.file]);
  const ledger = loadRubric(join(projectRoot, 'rubrics', 'ledger.yaml'), LABS);
  t.throws(() => mergeRubrics([consumer, ledger]), {
    name: 'RubricError',
    message: /ledger\.yaml: lab: ledger, but .*feed\.yaml is for feed: rubrics graded together are of one lab/,
  });
  t.throws(() => mergeRubrics([serverRubric, serverRubric]), { message: /feed-server-happy-path is graded by another rubric given too/ });
});

t.test('defaults: visible, repeat 1, rate reproducible with 2 re-runs; a file is resolved against the rubric', async (t) => {
  const r = checkRubric({ lab: 'ledger', scenarios: [{ name: 'gap', points: 1.5, feedback: '§3', file: 'x/gap.yaml' }] }, '/r/rubric.yaml', LABS);
  t.same(r.tests, [{ name: 'gap', file: '/r/x/gap.yaml', points: 1.5, visibility: 'visible', feedback: '§3', repeat: 1, rate: 'reproducible', reruns: 2 }]);
  t.equal(maxScore(r), 1.5);
});

t.test('rate and reruns: a rubric-wide default, overridden per scenario; rate all never re-runs', async (t) => {
  const r = checkRubric(
    {
      lab: 'ledger',
      rate: 'proportional',
      reruns: 4,
      scenarios: [
        { name: 'a', points: 1, feedback: 'x' },
        { name: 'b', points: 1, feedback: 'x', rate: 'reproducible', reruns: 1 },
        { name: 'c', points: 1, feedback: 'x', rate: 'all', reruns: 3 },
      ],
    },
    '/r/rubric.yaml',
    LABS,
  );
  t.same(
    r.tests.map((x) => [x.name, x.rate, x.reruns]),
    [
      ['a', 'proportional', 4],
      ['b', 'reproducible', 1],
      ['c', 'all', 0],
    ],
  );
});

t.test('hidden scenarios are shown as "hidden test N"', async (t) => {
  const r = checkRubric(
    {
      lab: 'ledger',
      scenarios: [
        { name: 'a', points: 0, feedback: 'x', visibility: 'hidden' },
        { name: 'b', points: 1, feedback: 'x', visibility: 'after_due_date' },
        { name: 'c', points: 0, feedback: 'x', visibility: 'hidden' },
      ],
    },
    'r.yaml',
    LABS,
  );
  t.same(
    r.tests.map((x) => shownName(r, x)),
    ['hidden test 1', 'b', 'hidden test 2'],
  );
});

t.test('mistakes name the file and the field', async (t) => {
  const bad = (doc: unknown, pattern: RegExp) => t.throws(() => checkRubric(doc, 'rubrics/x.yaml', LABS), { name: 'RubricError', message: pattern });
  const ok = { name: 'gap', points: 1, feedback: '§3' };
  bad([], /^rubrics\/x\.yaml: \(top\): must be a mapping/);
  bad({ lab: 'ledger', scenarios: [ok], extra: 1 }, /extra: unknown field/);
  bad({ lab: 'nope', scenarios: [ok] }, new RegExp(`lab: must name a lab \\(${LABS.join(', ')}\\), not "nope"`));
  bad({ lab: 'ledger', scenarios: [] }, /scenarios: must be a non-empty list/);
  bad({ lab: 'ledger', scenarios: ['gap'] }, /scenarios\[0\]: must be a mapping/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, weight: 2 }] }, /scenarios\[0\]\.weight: unknown field/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, name: 'Gap!' }] }, /scenarios\[0\]\.name: must be a scenario name/);
  bad({ lab: 'ledger', scenarios: [ok, ok] }, /scenarios\[1\]\.name: gap is listed twice/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, points: -1 }] }, /scenarios\[0\]\.points: must be a number >= 0/);
  bad(
    { lab: 'ledger', scenarios: [{ ...ok, visibility: 'secret' }] },
    /scenarios\[0\]\.visibility: must be one of visible, hidden, after_due_date, after_published/,
  );
  // Gradescope's specification: a hidden test carries no points (the total would reveal it).
  bad(
    { lab: 'ledger', scenarios: [ok, { ...ok, name: 'sigkill-storm', points: 3, visibility: 'hidden' }] },
    /^rubrics\/x\.yaml: scenarios\[1\]\.visibility: sigkill-storm gives 3 point\(s\) but is hidden: .*use after_due_date or after_published$/,
  );
  t.equal(
    checkRubric({ lab: 'ledger', scenarios: [{ ...ok, points: 0, visibility: 'hidden' }] }, 'r.yaml', LABS).tests[0]!.visibility,
    'hidden',
    'a hidden test with no points is fine',
  );
  bad({ lab: 'ledger', scenarios: [{ ...ok, feedback: ' ' }] }, /scenarios\[0\]\.feedback: must say what failed/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, repeat: 0 }] }, /scenarios\[0\]\.repeat: must be a whole number 1\.\.1000/);
  bad({ lab: 'ledger', rate: 'majority', scenarios: [ok] }, /^rubrics\/x\.yaml: rate: must be one of reproducible, all, proportional, not "majority"/);
  bad({ lab: 'ledger', scenarios: [ok, { ...ok, name: 'b', rate: 'most' }] }, /scenarios\[1\]\.rate: must be one of reproducible, all, proportional/);
  bad({ lab: 'ledger', reruns: -1, scenarios: [ok] }, /reruns: must be a whole number 0\.\.100/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, reruns: 1.5 }] }, /scenarios\[0\]\.reruns: must be a whole number 0\.\.100/);
  bad({ lab: 'ledger', scenarios: [{ ...ok, file: 3 }] }, /scenarios\[0\]\.file: must be a path/);
  bad({ lab: 'ledger', jobs_per_processor: 0, scenarios: [ok] }, /^rubrics\/x\.yaml: jobs_per_processor: must be a whole number 1\.\.8/);
  bad({ lab: 'ledger', jobs_per_processor: 1.5, scenarios: [ok] }, /jobs_per_processor: must be a whole number 1\.\.8/);
});

t.test('a missing file and bad YAML are named', async (t) => {
  const dir = t.testdir({ 'bad.yaml': 'lab: [' });
  t.throws(() => loadRubric(join(dir, 'none.yaml'), LABS), new RubricError(`${join(dir, 'none.yaml')}: no such rubric file`));
  t.throws(() => loadRubric(join(dir, 'bad.yaml'), LABS), { message: /bad\.yaml: not valid YAML/ });
  writeFileSync(join(dir, 'good.yaml'), 'lab: ledger\nscenarios:\n  - { name: gap, points: 1, feedback: "§3" }\n');
  t.equal(loadRubric(join(dir, 'good.yaml'), LABS).tests.length, 1);
});
