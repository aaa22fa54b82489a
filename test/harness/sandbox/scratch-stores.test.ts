// The instruments' scratch stores (harness/sandbox/scratch-stores.ts): written on a tmpfs, kept in
// the run folder, nothing left behind; a harness that died leaves a folder the next one removes.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { scratchStores, sweepStaleScratch } from '../../../harness/sandbox/scratch-stores.js';
import { readStat } from '../../../harness/sandbox/proc.js';

const shm = '/dev/shm';
const tmpfsHere = existsSync(shm) && statSync(shm).isDirectory();

t.test(
  'on a tmpfs: written there, kept in the run folder with its journal, the folder removed',
  { skip: tmpfsHere ? false : 'no /dev/shm here' },
  async (t) => {
    const runDir = t.testdir();
    const stores = scratchStores(runDir, `test-${process.pid}-a`);
    const live = stores.live('probe.db');
    t.ok(live.startsWith(`${shm}/chaoslab-stores-${process.pid}-`), `written on the tmpfs: ${live}`);
    t.equal(stores.kept('probe.db'), join(runDir, 'probe.db'), 'kept in the run folder');
    t.equal(statSync(join(live, '..')).mode & 0o777, 0o700, 'its folder is the harness’s alone');
    writeFileSync(live, 'rows');
    writeFileSync(stores.live('probe.db-journal'), 'a hot journal');
    t.notOk(existsSync(join(runDir, 'probe.db')), 'nothing in the run folder while the run goes on');
    stores.keep();
    t.equal(readFileSync(join(runDir, 'probe.db'), 'utf8'), 'rows');
    t.equal(readFileSync(join(runDir, 'probe.db-journal'), 'utf8'), 'a hot journal', 'a store left mid-transaction comes with its journal');
    t.notOk(existsSync(join(live, '..')), 'the tmpfs folder is gone');
    t.equal(stores.live('probe.db'), join(runDir, 'probe.db'), 'after keep, the store is the run folder’s');
    stores.keep();
    t.equal(readFileSync(join(runDir, 'probe.db'), 'utf8'), 'rows', 'a second keep changes nothing');
  },
);

t.test('without a tmpfs at its base: the run folder from the start', async (t) => {
  const runDir = t.testdir();
  const stores = scratchStores(runDir, 'test-b', runDir);
  t.equal(stores.live('probe.db'), join(runDir, 'probe.db'));
  writeFileSync(stores.live('probe.db'), 'rows');
  stores.keep();
  t.same(readdirSync(runDir), ['probe.db'], 'kept where it was written');
});

t.test('a folder whose harness is gone is removed; a live harness’s is not', async (t) => {
  const base = t.testdir();
  const mine = `chaoslab-stores-${process.pid}-${readStat(process.pid)!.start}-run-1`;
  const dead = 'chaoslab-stores-999999999-1-run-2';
  const reused = `chaoslab-stores-${process.pid}-1-run-3`; // this pid, another start time: a pid reused
  for (const name of [mine, dead, reused, 'someone-else']) mkdirSync(join(base, name));
  writeFileSync(join(base, dead, 'probe.db'), 'rows');
  t.same(sweepStaleScratch(base).sort(), [dead, reused].sort());
  t.same(readdirSync(base).sort(), [mine, 'someone-else'].sort());
});
