// The run folder and the consumer's room, and the reachability check that names the path a
// consumer's uid cannot get through. Where root is available, each prediction is compared with
// what the kernel really lets that uid do (setpriv + test -r/-x).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkAccess,
  checkReachable,
  closeRoom,
  createRoom,
  handBackRooms,
  prepareRunFolder,
  protectEvidence,
  resolveProgram,
  shellWords,
} from '../../../harness/sandbox/room.js';
import { findTool } from '../../../harness/sandbox/tools.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';

const isRoot = process.geteuid?.() === 0;
const base = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-room-')));
chmodSync(base, 0o755); // mkdtemp makes 0700: opened up so uids can pass (one test closes a sub-folder on purpose)
t.teardown(() => rmSync(base, { recursive: true, force: true }));
const lease = isRoot ? leaseUid(3) : undefined;
t.teardown(() => lease?.release());
const uid = lease?.uid ?? 61003;

/** What the kernel says: can `uid` do `test -flag path`? */
function kernelSays(path: string, flag: '-r' | '-x' | '-w'): boolean {
  try {
    execFileSync(findTool('setpriv')!, [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/usr/bin/test', flag, path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

t.test('shellWords and resolveProgram', async (t) => {
  t.same(shellWords(`python3 'my dir/client.py' --db "$HOME/x" a\\ b; echo hi`), ['python3', 'my dir/client.py', '--db', '$HOME/x', 'a b', 'echo', 'hi']);
  t.same(shellWords(`FOO=1 node "a \\"q\\".js"`), ['FOO=1', 'node', 'a "q".js']);
  t.same(shellWords(`''`), ['']);
  t.match(resolveProgram('FOO=1 sh -c true', '/'), { word: 'sh', file: /^\/(usr\/)?(local\/)?bin\/sh$/ });
  t.same(resolveProgram('./run.sh', '/opt/x'), { word: './run.sh', file: '/opt/x/run.sh' });
  t.same(resolveProgram('no-such-program-here --x', '/'), { word: 'no-such-program-here' });
  t.equal(resolveProgram('', '/'), undefined);
});

t.test('checkAccess names the folder that stops a uid', async (t) => {
  const closed = join(base, 'closed');
  mkdirSync(join(closed, 'inner'), { recursive: true });
  writeFileSync(join(closed, 'inner', 'client.py'), 'print(1)\n');
  chmodSync(closed, 0o700); // like a mkdtemp folder
  const problem = checkAccess(join(closed, 'inner', 'client.py'), uid, uid, 'read');
  t.equal(problem?.path, closed, 'the 0700 folder is named');
  t.equal(problem?.lacks, 'search');
  t.match(problem?.message, new RegExp(`uid ${uid} cannot reach .*${closed} is not searchable by it \\(owner 0:0, mode 0700\\)`));

  const open = join(base, 'open');
  mkdirSync(open);
  writeFileSync(join(open, 'secret'), 'x', { mode: 0o600 });
  writeFileSync(join(open, 'public'), 'x', { mode: 0o644 });
  writeFileSync(join(open, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  t.equal(checkAccess(join(open, 'public'), uid, uid, 'read'), undefined, 'a 0644 file in 0755 folders is readable');
  t.equal(checkAccess(join(open, 'secret'), uid, uid, 'read')?.path, join(open, 'secret'), 'a 0600 root file is not');
  t.equal(checkAccess(join(open, 'tool'), uid, uid, 'execute'), undefined);
  t.equal(checkAccess(join(open, 'public'), uid, uid, 'execute')?.lacks, 'execute');
  t.match(checkAccess(join(open, 'missing'), uid, uid, 'read')?.message, /does not exist/);
  t.match(checkAccess(open, uid, uid, 'execute')?.message, /is not a file/);

  // a link is followed, and the folder on the way to its target is what is named
  symlinkSync(join(closed, 'inner', 'client.py'), join(open, 'link-into-closed'));
  t.equal(checkAccess(join(open, 'link-into-closed'), uid, uid, 'read')?.path, closed, 'a link into a closed folder: the closed folder');
  symlinkSync('public', join(open, 'relative-link'));
  t.equal(checkAccess(join(open, 'relative-link'), uid, uid, 'read'), undefined, 'a relative link to a readable file');
  symlinkSync('loop-b', join(open, 'loop-a'));
  symlinkSync('loop-a', join(open, 'loop-b'));
  t.match(checkAccess(join(open, 'loop-a'), uid, uid, 'read')?.message, /too many symbolic links/);

  // the owner's bits apply to the owner, the group's to the group
  const mine = join(base, 'mine');
  writeFileSync(mine, 'x', { mode: 0o600 });
  if (isRoot) {
    execFileSync('chown', [`${uid}:${uid}`, mine]);
    t.equal(checkAccess(mine, uid, uid, 'read'), undefined, 'the owner reads its 0600 file');
  }
  t.equal(checkAccess(mine, 0, 0, 'read'), undefined, 'root reads anything');

  if (isRoot) {
    t.equal(kernelSays(join(closed, 'inner', 'client.py'), '-r'), false, 'the kernel agrees: not readable through the 0700 folder');
    t.equal(kernelSays(join(open, 'public'), '-r'), true, 'the kernel agrees: readable');
    t.equal(kernelSays(join(open, 'secret'), '-r'), false, 'the kernel agrees: 0600 root file not readable');
    t.equal(kernelSays(join(open, 'tool'), '-x'), true, 'the kernel agrees: executable');
  }
});

t.test('checkReachable names the cwd, the program and the files of the command', async (t) => {
  const closed = join(base, 'cwd-closed');
  mkdirSync(closed);
  chmodSync(closed, 0o700);
  const problems = checkReachable({ uid, cwd: closed, command: 'python3 client.py' });
  t.equal(problems[0]?.path, closed, 'the working directory is named first');
  t.match(problems[0]?.target, /working directory/);

  const cwd = join(base, 'project');
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'client.py'), 'print(1)\n', { mode: 0o600 });
  writeFileSync(join(cwd, 'ok.py'), 'print(1)\n', { mode: 0o644 });
  const fileProblem = checkReachable({ uid, cwd, command: 'python3 client.py --db x.db' });
  t.equal(fileProblem.length, 1, 'one problem: the unreadable script');
  t.equal(fileProblem[0]?.path, join(cwd, 'client.py'));
  t.same(checkReachable({ uid, cwd, command: 'python3 ok.py' }), [], 'python3 from the sealed PATH and a readable script: reachable');

  // the harness's own PATH finds a shim under /root (0700 here); the consumer's does not look there
  const absolute = checkReachable({ uid, cwd, command: '/root/.pyenv/shims/python3 ok.py' });
  if (existsSync('/root') && (statSync('/root').mode & 0o001) === 0) {
    t.equal(absolute[0]?.path, '/root', 'a program under /root: /root is named');
  } else {
    t.comment('/root is searchable here: the /root example does not apply');
  }
  const missing = checkReachable({ uid, cwd, command: 'no-such-consumer --x' });
  t.match(missing[0]?.message, /not found in the consumer's PATH \(\/usr\/local\/bin:\/usr\/bin:\/bin\)/);
  t.same(checkReachable({ uid, cwd, command: 'exec true' }), [], 'a shell builtin first word is fine');

  const script = join(cwd, 'run.sh');
  writeFileSync(script, '#!/bin/sh\necho hi\n', { mode: 0o711 });
  const unreadableScript = checkReachable({ uid, cwd, command: './run.sh' });
  t.equal(unreadableScript[0]?.lacks, 'read', 'a script needs read as well as execute');

  const room = join(base, 'room-of-root');
  mkdirSync(room, { mode: 0o700 });
  t.equal(checkReachable({ uid, cwd, command: 'true', room })[0]?.target, `the room ${room}`, 'a room the uid cannot write is named');

  // A sealed run's /tmp is its own, empty: a file there outside the working directory is not found.
  if (base.startsWith('/tmp/')) {
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o755 });
    const program = join(cwd, 'run-ok.sh');
    writeFileSync(program, '#!/bin/sh\necho hi\n', { mode: 0o755 });
    t.match(checkReachable({ uid, cwd: elsewhere, command: program }), [{ path: program, target: /the command's program/, message: /under \/tmp/ }]);
    t.same(checkReachable({ uid, cwd, command: program }), [], 'under /tmp but inside the working directory, which stays: reachable');
    t.same(
      checkReachable({ uid, cwd: elsewhere, command: `python3 ${join(cwd, 'ok.py')}` }),
      [],
      'another word under /tmp is left to the run (its "not found" says why)',
    );
  } else t.comment(`the test folder ${base} is not under /tmp: the private /tmp case is not tried`);
});

t.test('run folder, evidence and room: modes and owners', { skip: isRoot ? false : 'needs root (chown)' }, async (t) => {
  const runDir = join(base, 'reports', 'run-1');
  prepareRunFolder(runDir);
  t.equal(statSync(runDir).mode & 0o7777, 0o711, 'the run folder is 0711: passable, not listable');
  writeFileSync(join(runDir, 'journal.jsonl'), '{}\n', { mode: 0o644 });
  mkdirSync(join(runDir, 'reports'));
  writeFileSync(join(runDir, 'reports', 'report.html'), '<p>', { mode: 0o644 });
  const room = createRoom(runDir, uid);
  t.equal(statSync(room).uid, uid, 'the room is the uid’s');
  t.equal(statSync(room).mode & 0o7777, 0o700);
  protectEvidence(runDir);
  t.equal(statSync(join(runDir, 'journal.jsonl')).mode & 0o777, 0o600, 'the journal is 0600');
  t.equal(statSync(join(runDir, 'reports')).mode & 0o777, 0o700, 'a sub-folder is 0700');
  t.equal(statSync(room).mode & 0o777, 0o700, 'the room is left alone');

  t.equal(kernelSays(join(runDir, 'journal.jsonl'), '-r'), false, 'the uid cannot read the journal by name');
  t.equal(kernelSays(join(runDir, 'journal.jsonl'), '-w'), false, 'nor write it');
  t.equal(kernelSays(room, '-w'), true, 'it can write its room');
  t.same(checkReachable({ uid, cwd: base, command: 'true', room }), [], 'the room is reachable through the 0711 run folder');

  // what a consumer might leave behind in its room
  writeFileSync(join(room, 'consumer.db'), 'x');
  symlinkSync('/etc/shadow', join(room, 'sneaky'));
  writeFileSync(join(room, 'setuid'), 'x', { mode: 0o4755 });
  execFileSync('chown', ['-hR', `${uid}:${uid}`, room]);
  const odd = closeRoom(room);
  t.match(odd, [/sneaky \(symbolic link to \/etc\/shadow\)/], 'the link is reported, not followed');
  t.equal(statSync('/etc/shadow').uid, 0, '/etc/shadow untouched');
  for (const name of readdirSync(room)) t.equal(statSync(join(room, name), { throwIfNoEntry: false })?.uid ?? 0, 0, `${name} is root's again`);
  t.equal(statSync(join(room, 'setuid')).mode & 0o7000, 0, 'set-id bits dropped');
  t.equal(statSync(room).uid, 0, 'the room itself is root’s: a later consumer with the same uid cannot read it');
});

t.test("handBackRooms: every room of a run folder is root's again, whoever left it the uid's", { skip: isRoot ? false : 'needs root (chown)' }, async (t) => {
  const runDir = join(base, 'reports', 'run-worker-died');
  prepareRunFolder(runDir);
  mkdirSync(join(runDir, 'rooms'), { mode: 0o711 });
  // A worker that died before its own closeRoom leaves its rooms (and what is in them) the uid's.
  const rooms = ['consumer', 'process-1'].map((name) => createRoom(join(runDir, 'rooms'), uid, uid, name));
  writeFileSync(join(rooms[0]!, 'consumer.db'), 'x');
  execFileSync('chown', ['-hR', `${uid}:${uid}`, rooms[0]!]);
  handBackRooms(runDir);
  for (const room of rooms) t.equal(statSync(room).uid, 0, `${room} is root's`);
  t.equal(statSync(join(rooms[0]!, 'consumer.db')).uid, 0, 'and what is in it');
  t.doesNotThrow(() => handBackRooms(join(base, 'reports', 'no-such-run')), 'a run that made no room: nothing to do');
});
