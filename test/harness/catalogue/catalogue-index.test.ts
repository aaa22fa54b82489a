// The build's catalogue index (harness/catalogue/catalogue-index.ts): `chaoslab list` takes a
// file's entry only while the file's bytes and the loader's modules are those it was made from.
import { utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { listScenarios } from '../../../harness/catalogue/catalogue.js';
import { catalogue } from '../../../harness/catalogue/catalogue-files.js';
import { makeIndex, vouchedScenarios } from '../../../harness/catalogue/catalogue-index.js';

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
  t.equal(vouchedScenarios(catalogue(root), root, dir, indexFile).size, 0, 'a rebuilt loader module: nothing is vouched for');
  t.equal(vouchedScenarios(catalogue(root), root, dir, path.join(dir, 'absent.json')).size, 0, 'no index: nothing');
});
