// Ordinary runtimes run sealed (issue 29): Node with WebAssembly (a wasm memory reserves a large
// virtual range, which RLIMIT_AS refused), the JVM, Go and Python, each through the real chain
// (confine.ts) with the consumer's own cgroups (confinement.ts's CONSUMER_CGROUP), must exit 0.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { CONSUMER_CGROUP } from '../../../harness/processes/confinement.js';
import { createProcessCgroup } from '../../../harness/sandbox/cgroup.js';
import { type ConfineOptions, confinedArgv, DEFAULT_LIMITS } from '../../../harness/sandbox/confine.js';
import { createRunNamespace, type RunNamespace } from '../../../harness/sandbox/namespace.js';
import { createRoom, prepareRunFolder } from '../../../harness/sandbox/room.js';
import { leaseUid, type UidLease } from '../../../harness/sandbox/uids.js';
import { runSealed, sealingSkip } from '../../helpers/sandbox.js';

const skip = await sealingSkip();
t.teardown(runCleanups);

const GO = '/usr/local/go/bin/go';
const work = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-runtimes-')));
chmodSync(work, 0o755); // mkdtemp makes 0700: the slot's uid must reach its room and the programs
t.teardown(() => rmSync(work, { recursive: true, force: true }));

let lease: UidLease | undefined;
let ns: RunNamespace | undefined;
let room = '';
if (!skip) {
  lease = leaseUid(31);
  ns = await createRunNamespace({ label: 'runtimes' });
  const runDir = join(work, 'run');
  prepareRunFolder(runDir);
  room = createRoom(runDir, lease.uid);
}
t.teardown(async () => {
  await ns?.destroy();
  lease?.release();
});

const sealed = { skip: skip ?? false };

/**
 * Runs `command` sealed as a consumer is, twice: with the consumer's cgroups (the memory cap of
 * this machine) and without any (where RLIMIT_DATA is the memory cap); returns both runs.
 */
async function sealedRuns(t: Test, command: string, timeoutMs = 120_000) {
  const cgroup = createProcessCgroup('runtime', CONSUMER_CGROUP);
  t.teardown(() => cgroup.remove());
  const options: ConfineOptions = { command, uid: lease!.uid, home: room, netnsPath: ns!.path };
  const withCgroup = await runSealed({ ...options, cgroup }, work, timeoutMs);
  const withDataLimit = await runSealed(options, work, timeoutMs);
  return { 'memory cgroup': withCgroup, RLIMIT_DATA: withDataLimit };
}

/** Asserts each way ran `command` to exit 0 and printed `expected`. */
async function assertRuns(t: Test, command: string, expected: RegExp) {
  for (const [how, ran] of Object.entries(await sealedRuns(t, command))) {
    t.equal(ran.code, 0, `${how}: exit status 0 (stderr: ${ran.stderr.slice(-600)})`);
    t.match(ran.stdout, expected, how);
  }
}

t.test('the memory cap: a memory cgroup where one is usable, RLIMIT_DATA only where none, never RLIMIT_AS', sealed, async (t) => {
  const cgroup = createProcessCgroup('argv', CONSUMER_CGROUP);
  t.teardown(() => cgroup.remove());
  const base: ConfineOptions = { command: 'true', uid: lease!.uid, home: room };
  const withGroup = confinedArgv({ ...base, cgroup });
  const without = confinedArgv(base);
  t.ok(cgroup.dirs.memory, 'this machine has a usable memory cgroup');
  t.notOk(
    withGroup.some((arg) => arg.startsWith('--data=')),
    'in a memory cgroup: no RLIMIT_DATA',
  );
  t.ok(without.includes(`--data=${DEFAULT_LIMITS.dataBytes}`), 'in none: RLIMIT_DATA');
  t.notOk(
    [...withGroup, ...without].some((arg) => arg.startsWith('--as')),
    'no RLIMIT_AS either way',
  );
});

t.test('Node: a WebAssembly memory that may grow to 4 GiB, and a module instantiated with it', sealed, async (t) => {
  // The smallest valid module that imports a memory: "\0asm", version 1, an import section with
  // env.mem (memory, min 256 pages, max 65536 pages = 4 GiB).
  const script = join(work, 'wasm.mjs');
  writeFileSync(
    script,
    [
      'const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536 });',
      'const bytes = new Uint8Array([0,97,115,109,1,0,0,0, 2,16,1, 3,101,110,118, 3,109,101,109, 2,1, 0x80,2, 0x80,0x80,4]);',
      'const { instance } = await WebAssembly.instantiate(bytes, { env: { mem: memory } });',
      'memory.grow(256);',
      'const more = [1, 2, 3, 4].map(() => new WebAssembly.Memory({ initial: 1, maximum: 65536 }));',
      // undici (fetch) and Node's own llhttp run on WebAssembly inside Node.
      'await fetch("http://127.0.0.1:9/").catch(() => {});',
      'console.log("wasm ok", memory.buffer.byteLength, more.length, typeof instance.exports);',
    ].join('\n'),
  );
  await assertRuns(t, `${process.execPath} ${script}`, /wasm ok 33554432 4 object/);
});

t.test(
  'the JVM: java -version and a one-class program',
  { skip: skip || (existsSync('/usr/bin/java') ? false : 'no java installed here (/usr/bin/java)') },
  async (t) => {
    const source = join(work, 'Hello.java');
    writeFileSync(source, 'public class Hello { public static void main(String[] a) { System.out.println("jvm ok " + Runtime.getRuntime().maxMemory()); } }\n');
    await assertRuns(t, 'java -version && java Hello.java', /jvm ok \d+/);
  },
);

t.test('Go: a program built with the local toolchain', { skip: skip || (existsSync(GO) ? false : `no Go toolchain at ${GO}`) }, async (t) => {
  const dir = join(work, 'gohello');
  execFileSync('mkdir', ['-p', dir]);
  writeFileSync(
    join(dir, 'main.go'),
    'package main\n\nimport "fmt"\n\nfunc main() {\n\tb := make([]byte, 64<<20)\n\tb[len(b)-1] = 1\n\tfmt.Println("go ok", len(b))\n}\n',
  );
  writeFileSync(join(dir, 'go.mod'), 'module gohello\n\ngo 1.21\n');
  execFileSync(GO, ['build', '-o', join(dir, 'gohello'), '.'], { cwd: dir, env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' } });
  chmodSync(dir, 0o755);
  await assertRuns(t, join(dir, 'gohello'), /go ok 67108864/);
});

t.test('Python: python3 with a 64 MiB allocation and sqlite3', sealed, async (t) => {
  await assertRuns(t, `python3 -c "import sqlite3; b = bytearray(64 << 20); print('python ok', len(b), sqlite3.sqlite_version)"`, /python ok 67108864/);
});
