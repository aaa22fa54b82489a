// Who holds a lock on a file, read from /proc/locks: parsed from known lines, and found for a
// real lock that a child process takes (its pid, uid and command named).
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import t from 'tap';
import { lockHolders, parseLocks } from '../../../harness/sandbox/file-locks.js';

t.test('parseLocks: holders on the asked files only; waiters and OFD locks', async (t) => {
  const text = [
    '1: POSIX  ADVISORY  READ 4242 fe:00:100 120 127',
    '1: -> POSIX  ADVISORY  WRITE 4343 fe:00:100 120 120',
    '2: OFDLCK ADVISORY  READ -1 fe:00:101 0 EOF',
    '3: FLOCK  ADVISORY  WRITE 99 fe:00:999 0 EOF',
    'garbage',
  ].join('\n');
  const files = new Map([
    ['fe:00:100', '/run/outbox.db-shm'],
    ['fe:00:101', '/run/outbox.db'],
  ]);
  t.same(parseLocks(text, files), [
    { pid: 4242, file: '/run/outbox.db-shm', kind: 'POSIX READ', range: '120-127' },
    { pid: null, file: '/run/outbox.db', kind: 'OFDLCK READ', range: '0-EOF' },
  ]);
});

t.test('lockHolders finds a real lock and names its holder', async (t) => {
  const file = join(t.testdir(), 'locked');
  writeFileSync(file, 'x'.repeat(200));
  t.ok(statSync(file).isFile());
  const child = spawn(
    'python3',
    [
      '-c',
      `import fcntl,os,sys,time\nfd=os.open(${JSON.stringify(file)},os.O_RDONLY)\nfcntl.lockf(fd,fcntl.LOCK_SH,8,120)\nprint('locked',flush=True)\ntime.sleep(60)`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  t.teardown(() => child.kill('SIGKILL'));
  await once(child.stdout!, 'data');
  const holders = lockHolders([file, `${file}-absent`]);
  t.match(holders, [{ pid: child.pid, file, kind: 'POSIX READ', range: '120-127', uid: process.getuid?.(), comm: 'python3' }]);
  t.equal(holders.length, 1, 'only that lock');
  child.kill('SIGKILL');
  await once(child, 'exit');
  t.same(lockHolders([file]), [], 'gone with its holder');
});
