// The build's catalogue index (harness/catalogue/catalogue-index.ts): `chaoslab list` and
// loadScenario take a file's entry only while the file's bytes and the loader's modules are those
// it was made from.
import { spawnSync } from 'node:child_process';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import util from 'node:util';
import t from 'tap';
import { listScenarios } from '../../../harness/catalogue/catalogue.js';
import { catalogue } from '../../../harness/catalogue/catalogue-files.js';
import { makeIndex, vouchedLoad, vouchedScenarios } from '../../../harness/catalogue/catalogue-index.js';

const HEAD = 'description: >-\n  Listed\n  from the index.\nevents: { deltas: [1] }\n';

t.test('an index vouches for unchanged files of an unchanged loader only', async (t) => {
  const dir = t.testdir({
    scenarios: { ledger: { 'a.yaml': `name: a\n${HEAD}`, 'b.yaml': `name: b\n${HEAD}` } },
    loader: { 'load.js': '// a loader module\n' },
  });
  const root = path.join(dir, 'scenarios');
  const module = path.join(dir, 'loader', 'load.js');
  const indexFile = path.join(dir, 'index.json');
  const listed = listScenarios(root);
  writeFileSync(indexFile, JSON.stringify(makeIndex(listed, root, dir, [module])));
  const vouched = () => vouchedScenarios(catalogue(root), root, dir, indexFile);

  t.same([...vouched().values()], listed, 'every file, as listScenarios loads it');
  t.same(listScenarios(root, undefined, vouched()), listed, 'listScenarios takes them as they are');

  writeFileSync(path.join(root, 'ledger', 'b.yaml'), `name: b\n${HEAD.replace('Listed', 'Edited')}`);
  writeFileSync(path.join(root, 'ledger', 'c.yaml'), `name: c\n${HEAD}`);
  t.same([...vouched().keys()], [path.join(root, 'ledger', 'a.yaml')], 'an edited file and a new one are not vouched for');
  t.match(
    listScenarios(root, undefined, vouched()).map((s) => s.description),
    ['Listed from the index.', 'Edited from the index.', 'Listed from the index.'],
    'they are loaded',
  );
  writeFileSync(path.join(root, 'ledger', 'c.yaml'), 'name: c\n');
  t.throws(() => listScenarios(root, undefined, vouched()), { message: /c\.yaml:1:1: description/ }, 'a bad file is reported as before');

  utimesSync(module, new Date(), new Date(Date.now() + 5000));
  t.equal(vouchedScenarios(catalogue(root), root, dir, indexFile).size, 1, 'a loader module rewritten with the same bytes (a plain tsc): as before');
  writeFileSync(module, '// a loader module, changed\n');
  t.equal(vouchedScenarios(catalogue(root), root, dir, indexFile).size, 0, 'a changed loader module: nothing is vouched for');
  t.equal(vouchedScenarios(catalogue(root), root, dir, path.join(dir, 'absent.json')).size, 0, 'no index: nothing');
});

t.test('loading a file the index vouches for: what loadScenario gives, for every catalogue scenario, without YAML', async (t) => {
  const { loadScenario } = await import('../../../harness/catalogue/load.js');
  const { scenariosDir, projectRoot } = await import('../../../harness/base/paths.js');
  const dir = t.testdir({ loader: { 'load.js': '// a loader module\n' } });
  const module = path.join(dir, 'loader', 'load.js');
  const indexFile = path.join(dir, 'index.json');
  const listed = listScenarios(scenariosDir);
  writeFileSync(indexFile, JSON.stringify(makeIndex(listed, scenariosDir, dir, [module], loadScenario)));
  const vouched = (file: string, source = readFileSync(file, 'utf8')) => vouchedLoad(file, source, scenariosDir, dir, indexFile);
  t.ok(listed.length > 50, `${listed.length} scenarios`);
  const differ = listed.filter((s) => !util.isDeepStrictEqual(vouched(s.file), loadScenario(s.file))).map((s) => s.name);
  t.same(differ, [], 'each as loading gives it (a plan that JSON cannot carry would differ here)');

  const one = listed[0]!.file;
  t.equal(vouched(one, `${readFileSync(one, 'utf8')}\n`), undefined, 'other bytes: loaded as before');
  t.equal(
    vouched(path.join(projectRoot, 'elsewhere', path.basename(one)), readFileSync(one, 'utf8')),
    undefined,
    'a file outside the catalogue: loaded as before',
  );
  process.env.CHAOSLAB_LAB_DIRS = dir;
  t.teardown(() => void delete process.env.CHAOSLAB_LAB_DIRS);
  t.equal(vouched(one), undefined, 'extra lab folders (which could change the default lab): loaded as before');
  delete process.env.CHAOSLAB_LAB_DIRS;
  t.ok(vouched(one));
  utimesSync(module, new Date(), new Date(Date.now() + 5000));
  t.ok(vouched(one), 'a loader module rewritten with the same bytes: still vouched for');
  writeFileSync(module, '// a loader module, changed\n');
  t.equal(vouched(one), undefined, 'a changed loader module: loaded as before');
});

t.test('the build: a catalogue scenario loads from its index, and the yaml package is never loaded', async (t) => {
  // The compiled tree, as `chaoslab run` uses it (the index sits beside dist/'s modules only).
  const load = pathToFileURL(path.resolve(import.meta.dirname, '../../../dist/harness/catalogue/load.js')).href;
  const script = `
    import { createRequire } from 'node:module';
    const { loadScenario } = await import(${JSON.stringify(load)});
    const s = loadScenario('scenarios/ledger/ack-crash.yaml');
    const yaml = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/yaml/'));
    console.log(JSON.stringify({ name: s.name, source: s.source.length, yaml: yaml.length }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: path.resolve(import.meta.dirname, '../../..'), encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { name: 'ack-crash', source: readFileSync('scenarios/ledger/ack-crash.yaml', 'utf8').length, yaml: 0 });
});

t.test('catalogue(): every lab folder’s yaml files, one list sorted by name as localeCompare sorts scenario names', async (t) => {
  const names = ['b', 'a-2', 'a10', 'a-1', 'a1', 'z9', 'a', '0-first'];
  const root = t.testdir({
    ledger: Object.fromEntries(names.slice(0, 4).map((n) => [`${n}.yaml`, ''])),
    feed: { ...Object.fromEntries(names.slice(4).map((n) => [`${n}.yaml`, ''])), 'notes.txt': '' },
    'README.md': '',
  });
  const listed = catalogue(root);
  t.same(
    listed.map((e) => e.name),
    [...names].sort((a, b) => a.localeCompare(b)),
  );
  t.same(
    listed.find((e) => e.name === 'a-2'),
    { name: 'a-2', lab: 'ledger', file: path.join(root, 'ledger', 'a-2.yaml') },
  );
});
