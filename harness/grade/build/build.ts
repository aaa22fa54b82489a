// A submission's build (`go build`, `npm ci`, …): run once, with its own deadline, in the
// submission's copy; then the copy is made read-only (root's, no write bits) so no scenario run
// can change what the next one runs. Sealed, the build runs as the slot's uid in its own PID
// namespace (everything it started dies with it) and in a network namespace of its own with
// nothing but a loopback (namespace.ts, as a run gets): no registry, no local service of the
// host; `network: true` (`grade --build-network`) leaves it in the host's network instead.
// Unsealed, as the grader's user, supervised as a consumer is (a child that called setsid() is
// still found and killed), with whatever network the grader has.
// Both get Node's headers for node-gyp and the package caches staff named (build-env.ts). Sealed,
// the build has its own pids and memory cgroups (4096 tasks, 4 GiB), and a build killed by a
// limit is told which one, in words (limit-words.ts). The log goes to the student's folder and,
// when asked (`staffLogFile`), to staff's.

import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, lstatSync, readdirSync, type Stats, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onCleanup } from '../../base/cleanup.js';
import { onAbort } from '../../base/interrupt.js';
import { type CgroupStats, createProcessCgroup } from '../../sandbox/cgroup.js';
import { confinedCommand, decodeSealedExit } from '../../sandbox/confine.js';
import { limitsMet } from '../../sandbox/limit-words.js';
import { createRunNamespace, type RunNamespace } from '../../sandbox/namespace.js';
import { HeadTailBuffer } from '../../sandbox/output.js';
import { type SupervisedProcess, startProcess } from '../../processes/supervisor.js';
import { buildEnv } from './build-env.js';

export interface BuildRequest {
  command: string;
  /** The submission's copy: the build's working directory (and HOME, so caches stay in it). */
  dir: string;
  deadlineMs: number;
  /** Sealed: the uid it runs as (the copy is handed to it first). Unsealed: absent. */
  uid?: number;
  /** The build's output, capped (head and tail kept). */
  logFile: string;
  /** A copy of the log for staff (e.g. <out>/.staff/<submission>/build.log). */
  staffLogFile?: string;
  /** Ctrl-C/SIGTERM: the build is killed at once. */
  signal?: AbortSignal;
  /** Sealed: the host's network (true), or a network namespace of its own, loopback only (default). */
  network?: boolean;
}

export interface BuildResult {
  ok: boolean;
  /** Why not, in one line: exit status, signal or the deadline. */
  reason?: string;
}

/** RLIMIT_DATA applies only where no memory cgroup is usable (confine.ts): the same 4 GiB as BUILD_CGROUP. */
const BUILD_LIMITS = { cpuSeconds: 1800, processes: 4096, fileSizeBytes: 4 * 1024 ** 3, dataBytes: 4 * 1024 ** 3 };
/** A compiler (g++ on sqlite3.c: ~1 GiB) and a parallel make fit; a runaway does not take the machine. */
export const BUILD_CGROUP = { pids: 4096, memoryBytes: 4 * 1024 ** 3 };

export async function runBuild(req: BuildRequest): Promise<BuildResult> {
  const log = new HeadTailBuffer(32 * 1024, 96 * 1024);
  let timedOut = false;
  const network = req.uid === undefined || req.network === true;
  const { env, notes } = buildEnv({ network, home: req.dir });
  for (const note of notes) log.push(Buffer.from(`${note}\n`));
  const ended =
    req.uid === undefined ? await unsealedBuild(req, env, log, () => (timedOut = true)) : await sealedBuild(req, req.uid, env, log, () => (timedOut = true));
  writeFileSync(req.logFile, log.text());
  if (req.staffLogFile !== undefined) writeFileSync(req.staffLogFile, log.text());
  if (req.signal?.aborted) return { ok: false, reason: `the build \`${req.command}\` was stopped: grading was interrupted` };
  if (timedOut) return { ok: false, reason: `the build \`${req.command}\` did not finish within its deadline (${Math.round(req.deadlineMs / 1000)} s)` };
  if (ended.code === 0) return { ok: true };
  const met = limitsMet(ended, 'sealed builds', BUILD_LIMITS);
  if (met.length > 0) return { ok: false, reason: `the build \`${req.command}\` ${met.map((m) => m.words).join('; ')}; see build.log` };
  return {
    ok: false,
    reason: `the build \`${req.command}\` failed (${ended.code === null ? `signal ${ended.signal ?? 'unknown'}` : `exit status ${ended.code}`}); see build.log`,
  };
}

type Ended = { code: number | null; signal: string | null; limits?: CgroupStats };

/**
 * Unsealed: supervised as a consumer is (harness/processes/supervisor.ts), so what it started is found
 * even after setsid() (parentage and an inherited tag) and killed when it ends.
 */
async function unsealedBuild(req: BuildRequest, env: Record<string, string>, log: HeadTailBuffer, onDeadline: () => void): Promise<Ended> {
  let build: SupervisedProcess;
  try {
    build = startProcess({
      name: 'build',
      command: req.command,
      cwd: req.dir,
      env,
      outputLimitBytes: 4096,
      onOutput: (_s, text) => log.push(Buffer.from(text)),
    });
  } catch (error) {
    log.push(Buffer.from(`\nchaoslab: could not start the build: ${(error as Error).message}\n`));
    return { code: null, signal: null };
  }
  const timer = setTimeout(() => {
    onDeadline();
    void build.kill('deadline');
  }, req.deadlineMs);
  const stopOnAbort = onAbort(req.signal, () => void build.kill('harness'));
  try {
    return await build.exited;
  } finally {
    clearTimeout(timer);
    stopOnAbort();
  }
}

/**
 * Sealed: as the slot's uid in a PID namespace of its own, so SIGKILL to unshare ends all of it;
 * without `network`, in a network namespace of its own, removed (with anything left in it) after.
 */
async function sealedBuild(req: BuildRequest, uid: number, buildEnv: Record<string, string>, log: HeadTailBuffer, onDeadline: () => void): Promise<Ended> {
  chownTree(req.dir, uid);
  let ns: RunNamespace | undefined;
  try {
    ns = req.network ? undefined : await createRunNamespace({ label: 'submission build' });
  } catch (error) {
    log.push(Buffer.from(`\nchaoslab: could not make the build's network namespace: ${(error as Error).message}\n`));
    return { code: null, signal: null };
  }
  try {
    return await confinedBuild(req, uid, buildEnv, ns, log, onDeadline);
  } finally {
    await ns?.destroy();
  }
}

async function confinedBuild(
  req: BuildRequest,
  uid: number,
  buildEnv: Record<string, string>,
  ns: RunNamespace | undefined,
  log: HeadTailBuffer,
  onDeadline: () => void,
): Promise<Ended> {
  let cgroup: ReturnType<typeof createProcessCgroup>;
  try {
    cgroup = createProcessCgroup('build', BUILD_CGROUP);
  } catch (error) {
    log.push(Buffer.from(`\nchaoslab: could not make the build's cgroups: ${(error as Error).message}\n`));
    return { code: null, signal: null };
  }
  try {
    const ended = await spawnConfined(req, uid, buildEnv, cgroup, ns, log, onDeadline);
    // tini turns a death by signal n into status 128+n: the signal names the limit (SIGXCPU, SIGXFSZ).
    return { ...decodeSealedExit(ended.code, ended.signal), limits: cgroup.stats() };
  } finally {
    await cgroup.remove();
  }
}

async function spawnConfined(
  req: BuildRequest,
  uid: number,
  buildEnv: Record<string, string>,
  cgroup: ReturnType<typeof createProcessCgroup>,
  ns: RunNamespace | undefined,
  log: HeadTailBuffer,
  onDeadline: () => void,
): Promise<Ended> {
  const { argv, env } = confinedCommand({
    command: req.command,
    uid,
    home: req.dir,
    env: buildEnv,
    cgroup,
    limits: BUILD_LIMITS,
    ...(ns ? { netnsPath: ns.path } : {}),
  });
  const child = spawn(argv[0]!, argv.slice(1), { cwd: req.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => log.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => log.push(chunk));
  const kill = () => {
    try {
      child.kill('SIGKILL');
    } catch {}
  };
  const timer = setTimeout(() => {
    onDeadline();
    kill();
  }, req.deadlineMs);
  // Killed whatever way the grader ends: interrupted, or exiting on an error or a second signal.
  const stopOnAbort = onAbort(req.signal, kill);
  const stopOnExit = onCleanup('submission build', kill);
  const ended = await new Promise<Ended>((resolve) => {
    child.on('error', (error) => {
      log.push(Buffer.from(`\nchaoslab: could not start the build: ${error.message}\n`));
      resolve({ code: null, signal: null });
    });
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  stopOnAbort();
  stopOnExit();
  kill();
  // 'exit' can come before the last output is read: wait for the pipes to close (the kill above
  // ended whatever else held them), within a bound, in case something out of reach still does.
  await pipesClosed(child, 2000);
  child.stdout.destroy();
  child.stderr.destroy();
  return ended;
}

/** Resolves when both output pipes have closed, or after `boundMs`. */
function pipesClosed(child: ChildProcess, boundMs: number): Promise<void> {
  const closed = (stream: NodeJS.ReadableStream | null) =>
    new Promise<void>((resolve) => (!stream || (stream as { closed?: boolean }).closed ? resolve() : stream.once('close', () => resolve())));
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, boundMs);
  });
  return Promise.race([Promise.all([closed(child.stdout), closed(child.stderr)]).then(() => undefined), bound]).finally(() => clearTimeout(timer));
}

/** Hands a tree to `uid` (links changed themselves, never followed). */
export function chownTree(dir: string, uid: number): void {
  walk(dir, (path) => lchownSync(path, uid, uid));
}

/**
 * Makes a built tree read-only for everyone but root: root's when we are root, folders 0555,
 * files 0555 or 0444 (set-id bits dropped); links are changed themselves, never followed.
 */
export function makeReadOnly(dir: string): void {
  const root = process.geteuid?.() === 0;
  walk(dir, (path, st) => {
    if (st.isSymbolicLink()) {
      if (root) lchownSync(path, 0, 0);
      return;
    }
    if (root) chownSync(path, 0, 0);
    if (st.isDirectory()) chmodSync(path, 0o555);
    else if (st.isFile()) chmodSync(path, st.mode & 0o111 ? 0o555 : 0o444);
    else chmodSync(path, 0o400);
  });
}

/** Children before their folder, so a folder made read-only is never walked afterwards. */
function walk(path: string, visit: (path: string, st: Stats) => void): void {
  const st = lstatSync(path);
  if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name), visit);
  visit(path, st);
}
