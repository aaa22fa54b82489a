// One uid per job slot, leased so that two harnesses on one machine never share one.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leaseUid, PROBE_UID, UID_BASE, UID_SLOTS, uidForSlot } from '../../../harness/sandbox/uids.js';
import { findTool } from '../../../harness/sandbox/tools.js';
import { waitFor } from '../../helpers/sandbox.js';

const lockDir = mkdtempSync(join(tmpdir(), 'chaoslab-uids-'));
t.teardown(() => rmSync(lockDir, { recursive: true, force: true }));

t.test('uidForSlot: a reserved range, slot by slot', async (t) => {
  t.equal(uidForSlot(0), UID_BASE);
  t.equal(uidForSlot(7), UID_BASE + 7);
  t.ok(uidForSlot(UID_SLOTS - 1) < PROBE_UID, 'the probe uid is outside the slots');
  t.throws(() => uidForSlot(-1), RangeError);
  t.throws(() => uidForSlot(UID_SLOTS), RangeError);
  t.throws(() => uidForSlot(1.5), RangeError);
});

t.test('leases are exclusive, released, and stale ones are taken over', async (t) => {
  // Slots far above any --jobs: the uids of low slots may be in use by sealed runs going on
  // beside this test (another test file, a proof), and leaseUid skips a uid some process runs as.
  const [A, B, C] = [705, 709, 711];
  const first = leaseUid(A, { lockDir });
  const second = leaseUid(A, { lockDir });
  t.equal(first.slot, A);
  t.equal(first.uid, uidForSlot(A));
  t.equal(first.gid, first.uid, 'a group of its own');
  t.not(second.uid, first.uid, 'the same slot asked twice: another uid');
  t.match(readFileSync(join(lockDir, String(first.uid)), 'utf8'), new RegExp(`^${process.pid} \\d+\\n$`), 'the lock names its owner');
  first.release();
  first.release(); // idempotent
  const third = leaseUid(A, { lockDir });
  t.equal(third.uid, first.uid, 'released: the slot’s uid is free again');
  third.release();
  second.release();

  // a lock left by a process that is gone
  const dead = spawn('true');
  await new Promise((resolve) => dead.once('exit', resolve));
  writeFileSync(join(lockDir, String(uidForSlot(B))), `${dead.pid} 12345\n`);
  const taken = leaseUid(B, { lockDir });
  t.equal(taken.uid, uidForSlot(B), 'a stale lock is taken over');
  taken.release();

  // a lock held by a live process (this one, under another start time is not ours: use pid 1)
  const pid1Start = readFileSync('/proc/1/stat', 'latin1').split(') ')[1]!.split(' ')[19];
  writeFileSync(join(lockDir, String(uidForSlot(C))), `1 ${pid1Start}\n`);
  const other = leaseUid(C, { lockDir });
  t.not(other.uid, uidForSlot(C), 'a live holder keeps its uid');
  other.release();
  t.equal(readFileSync(join(lockDir, String(uidForSlot(C))), 'utf8'), `1 ${pid1Start}\n`, 'and its lock is untouched');
});

t.test('a uid some process runs as is never handed out', { skip: process.geteuid?.() === 0 ? false : 'needs root' }, async (t) => {
  const uid = uidForSlot(60);
  const squatter = spawn(findTool('setpriv')!, [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/bin/sleep', '30'], { stdio: 'ignore' });
  t.teardown(() => squatter.kill('SIGKILL'));
  await waitFor('the squatter', () => {
    try {
      return readFileSync(`/proc/${squatter.pid}/status`, 'utf8').includes(`Uid:\t${uid}\t`);
    } catch {
      return false;
    }
  });
  const lease = leaseUid(60, { lockDir });
  t.not(lease.uid, uid, `uid ${uid} is busy: another one (${lease.uid})`);
  lease.release();
});
