// Which scenarios `chaoslab run` picks from its arguments: several names, globs, files, --all,
// --only, --lab, and one usage error naming every word that matched nothing.
import path from 'node:path';
import t from 'tap';
import { type Listed, OtherLabError, selectItems, selectScenarios, UnmatchedError, validateTargets } from '../../../harness/commands/select.js';
import { scenariosDir } from '../../../harness/base/paths.js';
import { catalogue } from '../../../harness/catalogue/catalogue-files.js';
import { UsageError } from '../../../harness/base/exit-status.js';

const listed: Listed[] = [
  { name: 'ack-crash', lab: 'ledger', file: '/c/ledger/ack-crash.yaml' },
  { name: 'ack-lost', lab: 'ledger', file: '/c/ledger/ack-lost.yaml' },
  { name: 'gap', lab: 'ledger', file: '/c/ledger/gap.yaml' },
  { name: 'feed-happy-path', lab: 'feed', file: '/c/feed/feed-happy-path.yaml' },
];
const noFiles = () => false;
const names = (s: ReturnType<typeof selectScenarios>) => s.picked.map((p) => p.name ?? p.file);

t.test('one name is a single run; several names run each, in the order given', async (t) => {
  const one = selectScenarios(['gap'], {}, listed, noFiles);
  t.same(names(one), ['gap']);
  t.equal(one.batch, false);
  const two = selectScenarios(['ack-crash', 'gap'], {}, listed, noFiles);
  t.same(names(two), ['ack-crash', 'gap']);
  t.equal(two.batch, true);
  t.same(names(selectScenarios(['gap', 'ack-crash', 'gap'], {}, listed, noFiles)), ['gap', 'ack-crash'], 'each once');
});

t.test('globs, mixed with names; --only is one more glob', async (t) => {
  t.same(names(selectScenarios(['ack-*', 'gap'], {}, listed, noFiles)), ['ack-crash', 'ack-lost', 'gap']);
  const glob = selectScenarios(['gap*'], {}, listed, noFiles);
  t.same(names(glob), ['gap']);
  t.equal(glob.batch, true, 'a glob is a batch even when it matches one scenario');
  t.same(names(selectScenarios([], { only: 'ack-*' }, listed, noFiles)), ['ack-crash', 'ack-lost']);
  t.same(names(selectScenarios(['gap'], { only: 'ack-c*' }, listed, noFiles)), ['gap', 'ack-crash']);
});

t.test('--all and --lab', async (t) => {
  t.same(
    names(selectScenarios([], { all: true }, listed, noFiles)),
    listed.map((l) => l.name),
  );
  t.same(names(selectScenarios([], { all: true, lab: 'feed' }, listed, noFiles)), ['feed-happy-path']);
  t.same(names(selectScenarios(['*'], { lab: 'ledger' }, listed, noFiles)), ['ack-crash', 'ack-lost', 'gap']);
  t.throws(() => selectScenarios(['gap'], { all: true }, listed, noFiles), { message: /give scenario names or --all, not both \(got "gap"\)/ });
  t.throws(() => selectScenarios([], { all: true, lab: 'nolab' }, listed, noFiles), { message: /no scenario in the nolab lab/ });
  t.throws(() => selectScenarios([], {}, listed, noFiles), { message: /name a scenario, or use --all/ });
});

t.test('an existing file wins over a name', async (t) => {
  const s = selectScenarios(['gap', './mine.yaml'], {}, listed, (w) => w === './mine.yaml' || w === 'gap');
  t.same(
    s.picked.map((p) => p.file),
    ['gap', './mine.yaml'],
  );
});

t.test('words that match nothing: one usage error naming each, with a suggestion only where one is close', async (t) => {
  const typo = t.throws(() => selectScenarios(['ack-crsh'], {}, listed, noFiles)) as Error;
  t.ok(typo instanceof UnmatchedError && typo instanceof UsageError);
  t.equal(typo.message, 'unknown scenario "ack-crsh" (did you mean "ack-crash"?)');
  t.notMatch(typo.message, /gap/, 'no list of every name');
  const several = t.throws(() => selectScenarios(['gap', 'nope-*', 'zzzzzz'], {}, listed, noFiles)) as UnmatchedError;
  t.same(several.words, ['nope-*', 'zzzzzz']);
  t.equal(several.message, 'no scenario matches "nope-*", "zzzzzz" (see `chaoslab list`)');
  const inLab = t.throws(() => selectScenarios(['nope'], { lab: 'ledger' }, listed, noFiles)) as Error;
  t.match(inLab.message, /unknown scenario "nope" in the ledger lab/);
  t.match(
    (t.throws(() => selectScenarios(['gapp', 'ack-lst'], {}, listed, noFiles)) as Error).message,
    /^unknown scenarios "gapp" \(did you mean "gap"\?\), "ack-lst" \(did you mean "ack-lost"\?\)$/,
  );
});

t.test("--lab refuses another lab's scenario by name, and names the one it most likely meant", async (t) => {
  const withLedgerTwin: Listed[] = [...listed, { name: 'happy-path', lab: 'ledger', file: '/c/ledger/happy-path.yaml' }];
  const other = t.throws(() => selectScenarios(['happy-path'], { lab: 'feed' }, withLedgerTwin, noFiles)) as Error;
  t.ok(other instanceof OtherLabError && other instanceof UsageError);
  t.equal(other.message, 'happy-path is a ledger scenario, not one of the feed lab (--lab feed): run feed-happy-path, or see `chaoslab list --lab feed`');
  const noTwin = t.throws(() => selectScenarios(['feed-happy-path', 'gap'], { lab: 'ledger' }, listed, noFiles)) as Error;
  t.match(noTwin.message, /^feed-happy-path is a feed scenario, not one of the ledger lab \(--lab ledger\): (run \S+, or )?see `chaoslab list --lab ledger`$/);
  t.same(names(selectScenarios(['happy-path'], { lab: 'ledger' }, withLedgerTwin, noFiles)), ['happy-path'], 'its own lab: picked');
  t.same(names(selectScenarios(['*happy*'], { lab: 'feed' }, withLedgerTwin, noFiles)), ['feed-happy-path'], 'a glob picks within the lab');
});

t.test('a name two labs use is refused without --lab, naming both; --lab picks one', async (t) => {
  const twice: Listed[] = [...listed, { name: 'gap', lab: 'feed', file: '/c/feed/gap.yaml' }];
  t.throws(() => selectScenarios(['gap'], {}, twice, noFiles), {
    message: '"gap" is a scenario of 2 labs (ledger: /c/ledger/gap.yaml, feed: /c/feed/gap.yaml): choose one with --lab ledger|feed',
  });
  t.same(
    selectScenarios(['gap'], { lab: 'feed' }, twice, noFiles).picked.map((p) => p.file),
    ['/c/feed/gap.yaml'],
  );
  t.same(names(selectScenarios(['g*'], {}, twice, noFiles)), ['gap', 'gap'], 'a glob without --lab takes both (run then asks for one lab per consumer)');
});

t.test('the whole catalogue: every scenario name belongs to one lab', async (t) => {
  const entries = catalogue(scenariosDir);
  const labsOf = new Map<string, Set<string>>();
  for (const e of entries) labsOf.set(e.name, (labsOf.get(e.name) ?? new Set()).add(e.lab));
  t.ok(new Set(entries.map((e) => e.lab)).size >= 2, 'at least the ledger and feed labs');
  t.same(
    [...labsOf].filter(([, labs]) => labs.size > 1).map(([name]) => name),
    [],
    'no name in two labs',
  );
  t.equal(labsOf.size, entries.length, 'no name twice at all');
});

t.test('validate takes files, names and globs (of --lab)', async (t) => {
  const file = path.join(scenariosDir, 'ledger', 'gap.yaml');
  t.same(validateTargets([file, 'ack-crash'], {}), [
    { file, shown: file },
    { file: path.join(scenariosDir, 'ledger', 'ack-crash.yaml'), shown: 'ack-crash' },
  ]);
  t.same(
    validateTargets(['*happy-path'], { lab: 'feed' }).map((v) => v.shown),
    ['feed-happy-path', 'feed-server-happy-path'],
  );
  t.same(
    validateTargets(['missing/nope.yaml'], {}),
    [{ file: 'missing/nope.yaml', shown: 'missing/nope.yaml' }],
    'a path that is not there is for the loader to name',
  );
  t.throws(() => validateTargets(['happy-path'], { lab: 'feed' }), {
    message: /^happy-path is a ledger scenario, not one of the feed lab \(--lab feed\): run feed-happy-path/,
  });
  t.throws(() => validateTargets(['gapp'], {}), { message: /unknown scenario "gapp" \(did you mean "gap"\?\)/ });
});

t.test('selectItems on the real catalogue', async (t) => {
  const opts = { repeat: 1 };
  const single = selectItems(['ack-crash'], opts);
  t.equal(single.batch, false);
  t.same(
    single.items.map((i) => i.label),
    ['ack-crash'],
  );
  const two = selectItems(['ack-crash', 'gap'], opts);
  t.equal(two.batch, true);
  t.same(
    two.items.map((i) => i.label),
    ['ack-crash', 'gap'],
  );
  t.equal(two.batchName, 'ack-crash-gap', 'a batch is named after what was asked');
  const glob = selectItems(['ack-*'], { ...opts, repeat: 2 });
  t.ok(glob.items.length >= 4 && glob.items.every((i) => /^ack-\S+ #[12]$/.test(i.label)), glob.items.map((i) => i.label).join(', '));
  t.equal(glob.batchName, 'only-ack-x2', 'a batch of several scenarios is not named after the first');
  t.equal(selectItems(['gap'], { ...opts, repeat: 3 }).batchName, 'gap-x3');
  const all = selectItems([], { ...opts, all: true, lab: 'ledger' });
  t.equal(all.batchName, 'ledger-catalogue');
  t.ok(all.items.every((i) => i.scenario.protocol === 'ledger'));
  const file = path.join(import.meta.dirname, '../../..', 'scenarios', 'ledger', 'gap.yaml');
  t.equal(selectItems([file], opts).items[0]?.scenario.name, 'gap', 'a file path');
  t.throws(() => selectItems(['ack-crash'], { ...opts, lab: 'nolab' }), { message: /unknown lab "nolab"; labs: / });
  t.throws(() => selectItems(['ack-crash', 'feed-happy-path'], { ...opts, consumer: 'x' }), { message: /span the ledger and feed labs/ });
  t.same(
    selectItems(['gap'], { ...opts, consumer: 'python3 c.py' }).items.map((i) => i.consumerCommand),
    ['python3 c.py'],
  );
});

t.test('--server with --all, --lab or a glob: the server scenarios only, said so; --repeat gives each run the server', async (t) => {
  const all = selectItems([], { all: true, lab: 'feed', server: 'python3 s.py', repeat: 1 });
  t.ok(all.items.length >= 2, 'the happy path and the snapshot race at least');
  t.ok(
    all.items.every((i) => i.scenario.name.startsWith('feed-server-') && i.serverCommand === 'python3 s.py' && i.consumerCommand === undefined),
    all.items.map((i) => i.label).join(', '),
  );
  t.match(all.note, new RegExp(`^--server: running the ${all.items.length} server scenarios only .*; \\d+ consumer scenarios left out$`));
  const repeated = selectItems(['feed-server-happy-path'], { server: 'python3 s.py', repeat: 3 });
  t.same(
    repeated.items.map((i) => [i.label, i.serverCommand]),
    [1, 2, 3].map((n) => [`feed-server-happy-path #${n}`, 'python3 s.py']),
  );
  t.equal(repeated.batch, true);
  t.equal(repeated.note, undefined, 'a scenario named outright leaves nothing out');
  const consumers = selectItems(['feed-*'], { consumer: 'python3 c.py', repeat: 1 });
  t.ok(consumers.items.every((i) => !i.scenario.name.startsWith('feed-server-')));
  t.match(consumers.note, /^--consumer: running the \d+ consumer scenarios only; \d+ server scenarios .* left out$/);
  t.throws(() => selectItems([], { all: true, lab: 'ledger', server: 'x', repeat: 1 }), {
    message: /--server runs a push server under test, but \S+ tests a consumer/,
  });
});
