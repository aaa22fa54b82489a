// The registry finds labs by folder: the built-in ones beside it, then those of CHAOSLAB_LAB_DIRS;
// a folder that is not a lab is an error naming it. Each case loads the compiled registry in a
// fresh process (it finds the labs once, when loaded).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

const REGISTRY = pathToFileURL(resolve(import.meta.dirname, '../../../dist/harness/labs/registry.js')).href;

/** The lab names the registry gives with CHAOSLAB_LAB_DIRS=`dirs`, or its error. */
function labsWith(dirs: string): { names?: string[]; error?: string } {
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const { labNames } = await import(${JSON.stringify(REGISTRY)}); console.log(labNames().join(','));`],
    {
      env: { ...process.env, CHAOSLAB_LAB_DIRS: dirs },
      encoding: 'utf8',
    },
  );
  return r.status === 0 ? { names: r.stdout.trim().split(',') } : { error: r.stderr };
}

const lab = (name: string) => `export const lab = { name: ${JSON.stringify(name)}, run: async () => {}, check: () => undefined };\n`;

t.test('without extra folders: the built-in labs, the default first', async (t) => {
  const { names } = labsWith('');
  t.equal(names?.[0], 'ledger', 'the lab a scenario without protocol speaks comes first');
  t.ok(names?.includes('feed'), `labs: ${names?.join(', ')}`);
});

t.test('a lab folder of CHAOSLAB_LAB_DIRS joins after the built-in ones', async (t) => {
  const dir = t.testdir({ extra: { 'index.js': lab('extra') } });
  const { names, error } = labsWith(dir);
  t.equal(error, undefined);
  t.equal(names?.at(-1), 'extra', `labs: ${names?.join(', ')}`);
});

t.test('what is not a lab folder is an error naming it', async (t) => {
  const empty = t.testdir({ broken: { 'README.md': 'no plug-in here' } });
  t.match(labsWith(empty).error, `lab folder ${join(empty, 'broken')} has no index.ts or index.js`);
  const misnamed = t.testdir({ here: { 'index.js': lab('there') } });
  t.match(labsWith(misnamed).error, /the lab is named "there", but its folder "here"/);
  const twice = t.testdir({ feed: { 'index.js': lab('feed') } });
  t.match(labsWith(twice).error, /two labs are named "feed"/);
  const none = t.testdir({ nothing: { 'index.js': 'export const x = 1;\n' } });
  t.match(labsWith(none).error, /must export exactly one lab \(defineLab\), found 0/);
  t.match(labsWith(join(empty, 'missing')).error, /CHAOSLAB_LAB_DIRS: .*missing is not a folder/);
});
