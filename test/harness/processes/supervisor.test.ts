import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startProcess, withDeadline, type StartOptions, type SupervisedProcess } from '../../../harness/processes/supervisor.js';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { tsLoaderArgs } from '../../helpers/ts-loader-args.js';

// Every process started here carries this marker, so the last test can prove none survived.
const MARK = `CHAOSLAB_TEST_MARK=${randomBytes(8).toString('hex')}`;
const [markName, markValue] = MARK.split('=') as [string, string];
/** Every pid a test learned about (roots and descendants). */
const seenPids = new Set<number>();

const workDir = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-supervisor-')));
t.teardown(async () => {
  await runCleanups(); // hygiene if a test failed half-way; the last test checks for survivors first
  rmSync(workDir, { recursive: true, force: true });
});

function start(command: string, extra: Partial<StartOptions> = {}): SupervisedProcess {
  const p = startProcess({
    name: 'consumer#test',
    command,
    cwd: workDir,
    ...extra,
    env: { ...extra.env, [markName]: markValue },
  });
  seenPids.add(p.pid);
  return p;
}

interface Stat {
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: f[0]!, ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]) };
  } catch {
    return undefined;
  }
}

/** Gone, or a zombie: in this sandbox PID 1 does not reap orphans, so killed reparented
 *  processes stay as zombies forever; a zombie runs nothing and holds nothing but its pid. */
function isGone(pid: number): boolean {
  const s = stat(pid);
  return s === undefined || s.state === 'Z';
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Live processes carrying this file's marker. */
function markedAlive(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid || isGone(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(MARK)) pids.push(pid);
    } catch {}
  }
  return pids;
}

/** Rejects if `promise` takes longer than `ms`, so a broken kill fails fast instead of hanging. */
async function within<T>(what: string, promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until stdout holds `count` lines "<label> <pid>", returns label -> pid. */
async function reportedPids(p: SupervisedProcess, count: number): Promise<Map<string, number>> {
  const parse = () =>
    new Map(
      p
        .outputTail()
        .stdout.split('\n')
        .filter((line) => /^\S+ \d+$/.test(line))
        .map((line) => [line.split(' ')[0]!, Number(line.split(' ')[1])] as const),
    );
  await waitFor(`${count} pids on stdout`, () => parse().size >= count);
  const pids = parse();
  for (const pid of pids.values()) seenPids.add(pid);
  return pids;
}

t.test('exit code of the main process', async (t) => {
  const p = start('exit 7');
  const info = await p.exited;
  t.equal(info.code, 7);
  t.equal(info.signal, null);
  t.equal(info.killedBy, undefined);
  t.equal(info.straysKilled, undefined);
  t.ok(info.durationMs >= 0 && info.durationMs < 5000, 'duration measured');
  t.equal((await start('true').exited).code, 0);
});

t.test('death by signal reports the signal name', async (t) => {
  const term = await start('kill -TERM $$').exited;
  t.equal(term.signal, 'SIGTERM');
  t.equal(term.code, null);
  const kill = await start('kill -KILL $$').exited;
  t.equal(kill.signal, 'SIGKILL');
  t.equal(kill.killedBy, undefined, 'not killed by the harness');
});

t.test('environment: given variables added to process.env', async (t) => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  const p = start('printf "%s|%s|%s" "$CHAOSLAB_SOME_VAR" "$CHAOSLAB_OTHER" "${PATH:+has-path}"', {
    env: { CHAOSLAB_SOME_VAR: 'value with spaces', CHAOSLAB_OTHER: 'x=y' },
  });
  t.equal((await p.exited).code, 0);
  t.equal(p.outputTail().stdout, 'value with spaces|x=y|has-path');
});

t.test('working directory is honoured', async (t) => {
  const p = start('pwd; echo oops >&2');
  await p.exited;
  const tail = p.outputTail();
  t.equal(tail.stdout, `${workDir}\n`);
  t.equal(tail.stderr, 'oops\n', 'stderr captured separately');
  t.throws(() => start('true', { cwd: join(workDir, 'missing') }), /does not exist/);
});

/**
 * Heap and buffers in use after full collections (gc() exposed for this file alone): the least of
 * a few, 20 ms apart, since V8 frees dead buffers' memory on a sweeper thread of its own, which a
 * loaded machine leaves behind (21.9 MiB still counted right after one collection).
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const held = async (): Promise<number> => {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    gc();
    const m = process.memoryUsage();
    least = Math.min(least, m.heapUsed + m.external);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return least;
};

t.test('output flood keeps the head and the tail and counts every byte', async (t) => {
  let tapped = 0;
  const heldBefore = await held();
  const p = start('yes | head -c 50000000; yes err | head -c 3000000 >&2; printf END', {
    onOutput: (stream, chunk) => {
      if (stream === 'stdout') tapped += chunk.length;
    },
  });
  const info = await withDeadline(p, 20000);
  t.equal(info.code, 0);
  t.equal(info.killedBy, undefined);
  const tail = p.outputTail();
  t.equal(tail.stdoutBytes, 50000000 + 3);
  t.equal(tail.stderrBytes, 3000000);
  const marker = `\n[… ${50000000 + 3 - 64 * 1024} bytes not kept …]\n`;
  t.equal(tail.stdout.length, 64 * 1024 + marker.length, 'default limit: 16 KiB of head, 48 KiB of tail, and a marker between');
  t.ok(tail.stdout.startsWith('y\ny\ny\n'), 'the head is the start of the output');
  t.ok(tail.stdout.includes(marker), 'the marker counts what was left out');
  t.ok(tail.stdout.endsWith('y\ny\nEND'), 'the tail is the end of the output');
  t.match(tail.stderr, /^(err\n)+[\s\S]*bytes not kept …\]\n(err\n|rr\n|r\n|\n)(err\n)+$/);
  t.equal(tapped, 50000000 + 3, 'live tap saw every byte');
  // What the process object still holds once garbage is collected: kept output would be 50 MB.
  // (Not RSS, which a loaded machine's late collections grew past 40 MiB, with nothing kept.)
  const grown = (await held()) - heldBefore;
  t.ok(grown < 16 * 1024 * 1024, `memory held did not grow with the flood (${(grown / 1024 / 1024).toFixed(1)} MiB)`);
  t.ok(p.outputTail().stdoutBytes > 0, 'measured with the process object alive');
});

t.test('custom output limit; the tail never starts inside a UTF-8 character', async (t) => {
  const p = start('printf "ab\\303\\251\\303\\251"', { outputLimitBytes: 3 }); // "abéé", tail 3 bytes
  await p.exited;
  t.equal(p.outputTail().stdout, '\n[… 3 bytes not kept …]\né', 'half of the first é dropped, not decoded as U+FFFD');
  t.equal(p.outputTail().stdoutBytes, 6);
});

t.test('terminate(): SIGTERM honoured before the grace', async (t) => {
  const p = start('trap "exit 3" TERM; echo ready; sleep 100 & wait');
  await waitFor('ready', () => p.outputTail().stdout === 'ready\n');
  const began = Date.now();
  const info = await p.terminate(5000);
  t.equal(info.code, 3, 'the trap ran');
  t.equal(info.killedBy, 'harness');
  t.ok(Date.now() - began < 2000, 'did not wait for the grace');
});

t.test('terminate(): a stopped process is continued so it can handle SIGTERM', async (t) => {
  const p = start('trap "exit 4" TERM; kill -STOP $$; sleep 100');
  t.equal(await p.waitUntilStoppedOrExited(5000), 'stopped');
  const began = Date.now();
  const info = await p.terminate(3000);
  t.equal(info.code, 4, 'the trap ran');
  t.ok(Date.now() - began < 2000, 'did not wait for the grace');
});

t.test('durationMs is measured on a monotonic clock: a wall-clock step does not stretch it', async (t) => {
  // Seen in a proof run: the machine's clock stepped 7 s forward while a server ran, and its
  // exit 22 ms after SIGTERM was judged 7.3 s late.
  const wall = Date.now;
  const p = start('echo ready; exec sleep 100');
  await waitFor('ready', () => p.outputTail().stdout === 'ready\n');
  Date.now = () => wall() + 3_600_000;
  try {
    const info = await within('terminate', p.terminate(2000));
    t.ok(info.durationMs < 60_000, `an hour's step of the wall clock is not in it (${info.durationMs} ms)`);
  } finally {
    Date.now = wall;
  }
});

t.test('terminate(): a process ignoring SIGTERM is killed after the grace', async (t) => {
  const p = start("trap '' TERM; echo ready; sleep 100");
  await waitFor('ready', () => p.outputTail().stdout === 'ready\n');
  const began = Date.now();
  const info = await within('terminate', p.terminate(400));
  const took = Date.now() - began;
  t.equal(info.signal, 'SIGKILL');
  t.equal(info.killedBy, 'harness');
  t.ok(took >= 400, `waited the grace (${took} ms)`);
  t.ok(took < 3000, `then killed promptly (${took} ms)`);
  t.ok(isGone(p.pid), 'main process gone');
});

t.test('kill(): children, grandchildren and setsid escapees all die', async (t) => {
  // c1: child; gc: grandchild; ss: grandchild that setsid()s while its parent lives on;
  // fast: setsid()s and is orphaned at once (its subshell exits immediately, so the poller
  // most likely never sees the link: found by the inherited tag);
  // noenv: setsid()s with an empty environment, orphaned after 0.5 s (found only because the
  // poller remembered it).
  const p = start(
    [
      'sleep 1000 & echo "c1 $!"',
      '(sleep 1000 & echo "gc $!"; setsid sleep 1000 & echo "ss $!"; wait) &',
      '(setsid sh -c \'echo "fast $$"; exec sleep 1000\' &)',
      '(env -i /usr/bin/setsid /bin/sh -c \'echo "noenv $$"; exec /bin/sleep 1000\' & sleep 0.5)',
      'wait',
    ].join('\n'),
  );
  const pids = await reportedPids(p, 5);
  t.same([...pids.keys()].sort(), ['c1', 'fast', 'gc', 'noenv', 'ss']);
  await waitFor('noenv orphaned', () => stat(pids.get('noenv')!)?.ppid === 1, 3000);
  for (const [label, pid] of pids) {
    const s = stat(pid);
    t.ok(s && s.state !== 'Z', `${label} (${pid}) is running before the kill`);
    if (label === 'ss' || label === 'fast' || label === 'noenv') {
      t.not(s?.sid, p.pid, `${label} escaped the session`);
      t.not(s?.pgid, p.pid, `${label} escaped the process group`);
    }
  }
  for (const label of ['fast', 'noenv']) {
    t.equal(stat(pids.get(label)!)?.ppid, 1, `${label} was reparented to init`);
  }
  const info = await within('kill', p.kill());
  t.equal(info.killedBy, 'harness');
  t.equal(info.signal, 'SIGKILL');
  for (const [label, pid] of pids) t.ok(isGone(pid), `${label} (${pid}) gone after kill()`);
  t.ok(isGone(p.pid), 'main process gone');
});

t.test('kill() during a storm of forks that setsid() and orphan themselves', async (t) => {
  // Each iteration: a subshell starts an escapee and exits at once; the storm is still going
  // when kill() runs. 2 000 iterations were not always enough: beside a CPU hog, counting the
  // escapees (every process's environment read) outlasted the storm, whose shell then ended on
  // its own as kill() came. Bounded, so a broken kill cannot exhaust the pid space (32 768 here):
  // by 8 000 escapees, and by the file the test writes as soon as kill() has returned.
  const over = join(workDir, 'storm-over');
  const p = start(`echo go; i=0; while [ $i -lt 8000 ] && [ ! -e "${over}" ]; do (setsid sh -c "sleep 1000" &); i=$((i+1)); done; wait`);
  await waitFor('storm started', () => p.outputTail().stdout === 'go\n');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = markedAlive();
  t.ok(before.length > 10, `storm produced escapees (${before.length} running)`);
  const info = await within('kill', p.kill()).finally(() => writeFileSync(over, ''));
  t.equal(info.killedBy, 'harness', 'the storm was still going when kill() ran');
  t.equal(info.signal, 'SIGKILL');
  t.same(markedAlive(), [], 'no marked process alive after kill()');
});

t.test('main exits on its own: stray holding the pipe does not hang us, and is killed', async (t) => {
  const p = start('setsid sleep 1000 & echo "daemon $!"; exit 5');
  const began = Date.now();
  const info = await within('exited', p.exited);
  t.ok(Date.now() - began < 3000, 'exited resolved although a stray held stdout');
  t.equal(info.code, 5);
  t.equal(info.straysKilled, 1);
  const pids = await reportedPids(p, 1);
  t.ok(isGone(pids.get('daemon')!), 'the stray is gone');
});

t.test('self-stop is detected; continue() lets it finish', async (t) => {
  const p = start(`node -e "process.kill(process.pid,'SIGSTOP'); console.log('resumed')"`);
  t.equal(await p.waitUntilStoppedOrExited(10000), 'stopped');
  t.equal(p.isStopped(), true);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(p.isStopped(), true, 'stays stopped');
  p.continue();
  const info = await withDeadline(p, 10000);
  t.equal(info.code, 0);
  t.equal(info.killedBy, undefined);
  t.equal(p.outputTail().stdout, 'resumed\n');
  t.equal(p.isStopped(), false);
  t.equal(await p.waitUntilStoppedOrExited(100), 'exited');
});

t.test('waitUntilStoppedOrExited: exited and timeout', async (t) => {
  const quick = start('exit 0');
  t.equal(await quick.waitUntilStoppedOrExited(5000), 'exited');
  const slow = start('sleep 100');
  t.equal(slow.isStopped(), false);
  t.equal(await slow.waitUntilStoppedOrExited(150), 'timeout');
  await within('kill', slow.kill());
});

t.test('kill() and signal() reach a stopped tree', async (t) => {
  const p = start('sleep 1000 & echo "child $!"; kill -STOP $$; wait');
  const pids = await reportedPids(p, 1);
  t.equal(await p.waitUntilStoppedOrExited(5000), 'stopped');
  p.signal('SIGSTOP'); // the child too
  await waitFor('child stopped', () => stat(pids.get('child')!)?.state === 'T');
  const info = await within('kill', p.kill());
  t.equal(info.signal, 'SIGKILL');
  t.ok(isGone(pids.get('child')!), 'stopped child gone');
});

t.test('signal() delivers once to each process: the group once, then members that left it', async (t) => {
  const file = join(workDir, `terms-${randomBytes(4).toString('hex')}`);
  const loop = 'while :; do sleep 0.05; done';
  // Each process names itself only once its trap is set: a SIGTERM before that would end it
  // unseen (a loaded machine can take that long to run the subshell).
  const p = start(
    `trap 'echo main >> ${file}' TERM
     (trap 'echo child >> ${file}' TERM; echo "child $BASHPID"; ${loop}) &
     setsid bash -c 'trap "echo escapee >> ${file}" TERM; echo "escapee $$"; ${loop}' &
     echo "main $$"; ${loop}`,
  );
  await reportedPids(p, 3);
  p.signal('SIGTERM');
  const lines = () => {
    try {
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).sort();
    } catch {
      return [];
    }
  };
  await waitFor('three traps ran', () => lines().length >= 3, 15_000);
  await new Promise((resolve) => setTimeout(resolve, 500)); // room for a second delivery to show
  t.same(lines(), ['child', 'escapee', 'main'], 'each process saw SIGTERM exactly once');
  await within('kill', p.kill());
});

t.test('withDeadline kills a hanging process', async (t) => {
  const p = start('sleep 100 & echo "child $!"; wait');
  const pids = await reportedPids(p, 1);
  const began = Date.now();
  const info = await within('withDeadline', withDeadline(p, 300));
  const took = Date.now() - began;
  t.equal(info.killedBy, 'deadline');
  t.equal(info.signal, 'SIGKILL');
  t.ok(took >= 250 && took < 3000, `killed at the deadline (${took} ms)`);
  t.ok(isGone(pids.get('child')!), 'child gone');
  const fast = await withDeadline(start('exit 2'), 5000);
  t.equal(fast.code, 2);
  t.equal(fast.killedBy, undefined, 'no deadline when it exits in time');
});

t.test('runCleanups() kills a running tree', async (t) => {
  const p = start('sleep 1000 & echo "child $!"; setsid sleep 1000 & echo "escapee $!"; wait');
  const pids = await reportedPids(p, 2);
  await within('runCleanups', runCleanups());
  const info = await within('exited', p.exited);
  t.equal(info.killedBy, 'harness');
  t.equal(info.signal, 'SIGKILL');
  t.ok(isGone(p.pid), 'main process gone');
  for (const [label, pid] of pids) t.ok(isGone(pid), `${label} gone`);
});

// The harness itself exits: process.exit() (synchronous 'exit' hook), an uncaught exception,
// or SIGTERM (cleanup.ts runs the registered cleanups). Each runs in a child Node process.
const harnessScript = `
import { startProcess } from ${JSON.stringify(fileURLToPath(new URL('../../../harness/processes/supervisor.js', import.meta.url)))};
const p = startProcess({
  name: 'consumer#child',
  command: 'sleep 1000 & echo "child $!"; setsid sleep 1000 & echo "escapee $!"; wait',
  cwd: process.cwd(),
  env: { ${JSON.stringify(markName)}: ${JSON.stringify(markValue)} },
});
while (!/escapee/.test(p.outputTail().stdout)) await new Promise((resolve) => setTimeout(resolve, 10));
const pids = Object.fromEntries(p.outputTail().stdout.trim().split('\\n').map((line) => line.split(' ')));
console.log(JSON.stringify({ ...pids, root: p.pid }));
const mode = process.argv[2];
process.stdin.once('data', () => { // the parent has seen the tree alive: end now
  if (mode === 'exit') process.exit(0);
  if (mode === 'throw') throw new Error('boom');
}); // 'signal': wait to be terminated
// The test process gone without a word (a file timed out, or was killed): end, and the tree with
// it, rather than wait for a line that never comes.
process.stdin.once('end', () => process.exit(0));
`;
const scriptPath = join(workDir, 'harness-child.mts');
writeFileSync(scriptPath, harnessScript);

for (const [mode, expectedCode] of [
  ['exit', 0],
  ['throw', 1],
  ['signal', 143],
] as const) {
  t.test(`harness ends (${mode}): the consumer tree dies with it`, async (t) => {
    const loader = tsLoaderArgs();
    const child = spawn(process.execPath, [...loader, scriptPath, mode], {
      cwd: workDir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor('pids from the child harness', () => out.includes('}'), 20000).catch(() => {
      child.kill('SIGKILL');
      throw new Error(`child harness said: ${out}${err}`);
    });
    const pids = JSON.parse(out.slice(0, out.indexOf('}') + 1)) as Record<string, string>;
    const all = Object.entries(pids).map(([label, pid]) => [label, Number(pid)] as const);
    for (const [, pid] of all) seenPids.add(pid);
    t.same(Object.keys(pids).sort(), ['child', 'escapee', 'root']);
    for (const [label, pid] of all) t.ok(!isGone(pid), `${label} running before the harness ends`);
    if (mode === 'signal') child.kill('SIGTERM');
    else child.stdin.write('go\n');
    t.equal(await within('child harness exit', exited, 10000), expectedCode);
    await waitFor('the tree to die', () => all.every(([, pid]) => isGone(pid)), 3000).catch(() => {});
    for (const [label, pid] of all) t.ok(isGone(pid), `${label} (${pid}) gone after the harness ended`);
  });
}

t.test('no process started by this file survives', async (t) => {
  t.same(markedAlive(), [], 'no process carrying the marker is alive');
  t.same(
    [...seenPids].filter((pid) => !isGone(pid)),
    [],
    'no pid seen during the tests is alive (incl. the unmarked `env -i` escapee)',
  );
  t.ok(seenPids.size > 20, `checked ${seenPids.size} pids seen during the tests`);
});
