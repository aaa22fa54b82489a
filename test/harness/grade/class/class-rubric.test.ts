// Which rubric grades a class (harness/grade/class/class-rubric.ts): the lab's consumer rubric,
// its server rubric when a manifest names a server, both when the class gives both; --rubric
// (repeatable) wins; and which tests a submission gives nothing to run for
// (harness/grade/grade-submission.ts unrunTests), scored 0 with the reason.
import { join } from 'node:path';
import t from 'tap';
import { projectRoot, scenariosDir } from '../../../../harness/base/paths.js';
import { resolveScenario } from '../../../../harness/catalogue/catalogue.js';
import { loadScenario } from '../../../../harness/catalogue/load.js';
import { agreedLab, manifestLab } from '../../../../harness/grade/class/class-lab.js';
import { classManifests, classRubric, defaultRubricFiles, loadRubricOf } from '../../../../harness/grade/class/class-rubric.js';
import { unrunTests } from '../../../../harness/grade/grade-submission.js';
import { rubricFiles } from '../../../../harness/grade/rubric.js';
import { scoreSubmission } from '../../../../harness/grade/score.js';

const rubricsDir = join(projectRoot, 'rubrics');

t.test('what a class submits: consumers, servers or both (an unreadable manifest counts as a consumer)', async (t) => {
  const dir = t.testdir({
    servers: {
      a: { 'chaoslab.yaml': 'lab: feed\nserver: python3 server.py\n' },
      b: { 'chaoslab.json': '{"server": "node server.js"}' },
    },
    both: {
      a: { 'chaoslab.yaml': 'server: python3 server.py\n' },
      b: { 'client.py': '' },
    },
    broken: { a: { 'chaoslab.yaml': 'server: [' }, b: { 'chaoslab.yaml': 'server: s\n' } },
    empty: {},
  });
  const programs = (name: string) => classManifests(join(dir, name), join(dir, 'out')).programs;
  t.same(programs('servers'), { consumer: false, server: true });
  t.same(programs('both'), { consumer: true, server: true });
  t.same(programs('broken'), { consumer: true, server: true });
  t.same(programs('empty'), { consumer: true, server: false }, 'nothing to go by: the consumer rubric, as before');
});

t.test('the lab comes from the manifests when neither --lab nor --rubric says: lab:, or a server: (the feed lab grades push servers)', async (t) => {
  const dir = t.testdir({
    servers: { a: { 'chaoslab.yaml': 'server: python3 server.py\n' }, b: { 'chaoslab.json': '{"server": "./server"}' } },
    'feed-consumers': { a: { 'chaoslab.yaml': 'lab: feed\ncommand: python3 client.py\n' }, b: { 'client.py': '' } },
    silent: { a: { 'client.py': '' }, b: { 'chaoslab.yaml': 'command: ./c\n' } },
    disagree: { a: { 'chaoslab.yaml': 'lab: ledger\ncommand: ./c\n' }, b: { 'chaoslab.yaml': 'server: ./s\n' } },
    typo: { a: { 'chaoslab.yaml': 'lab: fed\ncommand: ./c\n' } },
  });
  const files = (name: string, opts: { lab?: string; rubric?: string[] } = {}) => rubricFiles(classRubric(opts, join(dir, name), join(dir, 'out')));
  t.same(files('servers'), [join(rubricsDir, 'feed-server.yaml')], 'a class of servers is graded by the feed server rubric without --lab');
  t.same(files('feed-consumers'), [join(rubricsDir, 'feed.yaml')], 'one manifest naming its lab decides for the class');
  t.same(files('silent'), [join(rubricsDir, 'ledger.yaml')], 'no manifest says: the first lab, as before');
  t.throws(() => files('disagree'), {
    name: 'UsageError',
    message: new RegExp(
      `${join(dir, 'disagree', 'a', 'chaoslab.yaml')} \\(lab: ledger\\) is the ledger lab's, ${join(dir, 'disagree', 'b', 'chaoslab.yaml')} \\(server: .*\\) the feed lab's`,
    ),
  });
  t.throws(() => files('typo'), {
    name: 'UsageError',
    message: new RegExp(`${join(dir, 'typo', 'a', 'chaoslab.yaml')}: lab: fed: no such lab; labs: .*ledger`),
  });
  t.same(files('disagree', { lab: 'ledger' }), [join(rubricsDir, 'ledger.yaml')], '--lab decides: the feed manifest is then a wrong lab, not graded');
  t.same(files('servers', { rubric: [join(rubricsDir, 'feed.yaml')] }), [join(rubricsDir, 'feed.yaml')], '--rubric decides');
  t.same(rubricFiles(classRubric({}, undefined, join(dir, 'out'))), [join(rubricsDir, 'ledger.yaml')], '--consumer: no manifests, the first lab');
});

t.test('a server: that no one lab grades cannot decide, and says which manifest', async (t) => {
  t.same(manifestLab({ server: 's' }, 'x/chaoslab.yaml', ['feed']), {
    lab: 'feed',
    file: 'x/chaoslab.yaml',
    why: 'server: (only the feed lab grades a push server)',
  });
  t.same(manifestLab({ lab: 'ledger', server: 's' }, 'f', ['feed']), { lab: 'ledger', file: 'f', why: 'lab: ledger' }, 'lab: wins');
  t.equal(manifestLab({}, 'f', ['feed']), undefined);
  t.match(manifestLab({ server: 's' }, 'x/chaoslab.yaml', []), /^x\/chaoslab\.yaml: server: names a push server, but no lab grades a push server: add lab:/);
  const two = manifestLab({ server: 's' }, 'y/chaoslab.json', ['feed', 'other']);
  t.match(two, /^y\/chaoslab\.json: .* labs feed, other all grade push servers/);
  t.throws(() => agreedLab([{ lab: 'feed', file: 'a', why: 'lab: feed' }, two!]), { name: 'ClassLabError', message: /^y\/chaoslab\.json: / });
  t.equal(agreedLab([]), undefined);
});

t.test("the lab's rubrics for what the class submits; --rubric, once or twice, wins", async (t) => {
  const consumer = join(rubricsDir, 'feed.yaml');
  const server = join(rubricsDir, 'feed-server.yaml');
  t.same(defaultRubricFiles('feed', { consumer: true, server: false }), [consumer]);
  t.same(defaultRubricFiles('feed', { consumer: false, server: true }), [server]);
  t.same(defaultRubricFiles('feed', { consumer: true, server: true }), [consumer, server]);
  t.same(defaultRubricFiles('ledger', { consumer: true, server: true }), [join(rubricsDir, 'ledger.yaml')], 'a lab without a server rubric');
  const both = loadRubricOf({ lab: 'feed' }, { consumer: true, server: true });
  t.same(rubricFiles(both), [consumer, server]);
  const apart = loadRubricOf({ rubric: [server] }, { consumer: true, server: true });
  t.same(rubricFiles(apart), [server], '--rubric grades apart');
  t.same(rubricFiles(loadRubricOf({ rubric: [consumer, server] }, { consumer: true, server: false })), [consumer, server]);
  t.throws(() => loadRubricOf({ rubric: [consumer, join(rubricsDir, 'ledger.yaml')] }, { consumer: true, server: false }), {
    name: 'UsageError',
    message: /rubrics graded together are of one lab/,
  });
  t.throws(() => loadRubricOf({ lab: 'ledger', rubric: [server] }, { consumer: true, server: false }), {
    message: /--lab ledger, but the rubric .* is for the feed lab/,
  });
});

t.test('a submission without a server scores 0 on the server scenarios, saying why; without a consumer, on the consumer ones', async (t) => {
  const rubric = loadRubricOf({ lab: 'feed' }, { consumer: true, server: true });
  const scenarios = new Map(rubric.tests.map((test) => [test.name, loadScenario(resolveScenario(test.name, scenariosDir))]));
  const serverTests = rubric.tests.filter((test) => test.name.startsWith('feed-server-')).map((test) => test.name);
  t.ok(serverTests.length >= 2);
  const noServer = unrunTests({ rubric, scenarios }, { consumer: 'python3 client.py' });
  t.same([...noServer.keys()], serverTests);
  t.match(noServer.get('feed-server-snapshot-race'), /names no push server \(`server` in chaoslab\.json\/\.yaml\)/);
  const noConsumer = unrunTests({ rubric, scenarios }, { server: 'python3 server.py' });
  t.equal(noConsumer.size, rubric.tests.length - serverTests.length);
  t.match(noConsumer.get('feed-happy-path'), /names no consumer \(`command`/);
  t.equal(unrunTests({ rubric, scenarios }, { consumer: 'c', server: 's' }).size, 0);
  const pass = { status: 'pass' as const, reasons: [] };
  const outcomes = new Map(rubric.tests.map((test) => [test.name, [pass]]));
  const score = scoreSubmission('s', rubric, outcomes, 'how', noServer);
  const race = score.scenarios.find((x) => x.name === 'feed-server-snapshot-race')!;
  t.match(race, { score: 0, status: 'failed', reasons: [noServer.get('feed-server-snapshot-race')] });
  const serverPoints = rubric.tests.filter((x) => serverTests.includes(x.name)).reduce((n, x) => n + x.points, 0);
  t.equal(score.score, score.max - serverPoints, 'every consumer scenario that passed keeps its points');
});
