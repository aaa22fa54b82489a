// The room's disk quota: a tmpfs of the quota mounted at the room, ENOSPC past it, its content
// kept on disk when it is unmounted, and a mount whose harness died (SIGKILL) swept by the next
// one. Needs root (mount, another uid); skips without.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createRoom } from '../../../harness/sandbox/room.js';
import { keepRoomFs, mountRoomFs, roomMounts, roomUsage, sweepStaleRoomMounts } from '../../../harness/sandbox/room-fs.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';

const skip = process.geteuid?.() === 0 ? false : 'needs root: mounts, files of another uid';
const MiB = 1024 ** 2;
const mounted = (path: string) => roomMounts().some((m) => m.path === path);

t.test('a room of 1 MiB: ENOSPC past it, full, then kept on disk and unmounted', { skip }, async (t) => {
  const lease = leaseUid(41);
  t.teardown(() => lease.release());
  const room = createRoom(t.testdir(), lease.uid);
  mountRoomFs(room, lease.uid, lease.gid, MiB);
  t.teardown(() => {
    if (mounted(room)) execFileSync('umount', ['--lazy', room]);
  });
  t.ok(mounted(room), 'a tmpfs is mounted at the room');
  t.match(statSync(room), { uid: lease.uid, mode: 0o40700 }, "the uid's, 0700");
  const wrote = spawnSync(
    'setpriv',
    [`--reuid=${lease.uid}`, `--regid=${lease.gid}`, '--clear-groups', 'sh', '-c', 'head -c 2M /dev/urandom > "$1/fill"; stat -c %s "$1/fill"', 'fill', room],
    { encoding: 'utf8' },
  );
  t.match(wrote.stderr, /No space left on device/, 'writing 2 MiB fails with ENOSPC');
  const size = Number(wrote.stdout.trim());
  t.ok(size > 0.9 * MiB && size <= MiB, `the file stopped at the quota (${size} bytes)`);
  t.match(roomUsage(room), { full: true }, 'the room is full');
  symlinkSync('/etc/shadow', join(room, 'link'));

  t.equal(await keepRoomFs(room), undefined, 'kept without a problem');
  t.notOk(mounted(room), 'no longer mounted');
  t.equal(statSync(join(room, 'fill')).size, size, 'the file is on disk, as it was');
  t.ok(lstatSync(join(room, 'link')).isSymbolicLink(), 'a link stays a link (not followed)');
  t.notOk(existsSync(`${room}.kept`) || existsSync(join(room, '..', '.room.kept')), 'no staging folder is left');
});

t.test("a room mount whose harness died is kept and unmounted by the next one; a live harness's is not touched", { skip }, async (t) => {
  const dir = t.testdir();
  const stale = join(dir, 'stale');
  const live = join(dir, 'live');
  mkdirSync(stale);
  mkdirSync(live);
  // A dead owner: a pid above pid_max; and a live one: this process, with its start time.
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'chaoslab-room-4194999-1', stale]);
  const start = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]!;
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', `chaoslab-room-${process.pid}-${start}`, live]);
  t.teardown(() => {
    for (const path of [stale, live]) if (mounted(path)) execFileSync('umount', ['--lazy', path]);
  });
  writeFileSync(join(stale, 'consumer.db'), 'what the consumer left');

  const swept = await sweepStaleRoomMounts();
  t.same(
    swept.filter((s) => s.path.startsWith(dir)),
    [{ path: stale }],
    'the dead harness’s room only',
  );
  t.notOk(mounted(stale), 'unmounted');
  t.equal(readFileSync(join(stale, 'consumer.db'), 'utf8'), 'what the consumer left', 'its content kept on disk');
  t.match(statSync(stale), { uid: 0, mode: 0o40700 }, 'handed to root, 0700');
  t.ok(mounted(live), "a live harness's room stays mounted");
  t.same(
    (await sweepStaleRoomMounts(process.pid)).map((s) => s.path),
    [live],
    'until its owner asks (a killed worker)',
  );
  t.notOk(mounted(live));
});

t.test('disk limits and leftovers are findings, named', async (t) => {
  const { limitFindings } = await import('../../../harness/judge/core-findings.js');
  const exit = {
    t: 2,
    type: 'process-exit',
    role: 'consumer',
    incarnation: 2,
    code: null,
    signal: 'SIGXFSZ',
    durationMs: 5,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  } as const;
  const findings = limitFindings([
    { t: 1, type: 'leftovers', when: 'before', uid: 61000, found: ['/var/tmp/old (a file)'], notRemoved: [], folders: ['/var/tmp'], tookMs: 1 },
    exit,
    { t: 3, type: 'room', name: 'consumer', quotaBytes: 256 * MiB, usedBytes: 256 * MiB, peakBytes: 256 * MiB, files: 3, full: true },
    { t: 4, type: 'room', name: 'other', quotaBytes: 256 * MiB, usedBytes: MiB, peakBytes: MiB, files: 3, full: false },
    { t: 5, type: 'leftovers', when: 'after', uid: 61000, found: ['/var/tmp/x (a file)'], notRemoved: [], folders: ['/var/tmp'], tookMs: 1 },
  ]);
  t.same(
    findings.map((f) => [f.code, f.text]),
    [
      ['file-size-limit', 'consumer incarnation 2 was killed by SIGXFSZ: it wrote a file past its size limit of 1 GiB (RLIMIT_FSIZE)'],
      ['disk-limit', `the consumer's room reached its disk limit of 256 MiB (256 MiB used at most): writes past it failed with "No space left on device"`],
      ['left-behind', 'the consumer left /var/tmp/x (a file) behind, outside its room (owned by its uid 61000); the harness removed it'],
    ],
    "a full room, SIGXFSZ and what the consumer left; not an earlier holder's leftovers, nor a room with space",
  );
});
