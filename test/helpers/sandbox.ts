// Shared by the test/sandbox-*.test.ts files: the skip decision, a way to run a sealed command
// and collect what it printed, a way to run a TypeScript snippet in a child Node process (as
// another uid, or with fewer capabilities), and the leak checks.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chaoslabParent } from '../../harness/sandbox/cgroup.js';
import { type ConfineOptions, confinedArgv } from '../../harness/sandbox/confine.js';
import { isAlive, listPids, sleep, uidOf } from '../../harness/sandbox/proc.js';
import { probeSealing, type SealingProbe } from '../../harness/sandbox/probe.js';
import { tsLoaderArgs } from './ts-loader-args.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const sandboxDir = join(root, 'harness', 'sandbox');

/** undefined when sealing works here; otherwise the skip message. */
export async function sealingSkip(): Promise<string | undefined> {
  const probe: SealingProbe = await probeSealing();
  return probe.available ? undefined : `sealing is not available here: ${probe.reason ?? '?'}`;
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Launched {
  child: ChildProcess;
  /** The launcher's pid (ends up as `unshare`, the parent of tini). */
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<Ran>;
}

/** Spawns argv (a confinedArgv chain) and collects its output. */
export function launch(argv: readonly string[], cwd: string): Launched {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Ran>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  if (child.pid === undefined) throw new Error(`could not start ${argv[0]}`);
  return { child, pid: child.pid, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs a confined command to its end (killed after timeoutMs). */
export async function runSealed(options: ConfineOptions, cwd: string, timeoutMs = 20_000): Promise<Ran> {
  const launched = launch(confinedArgv(options), cwd);
  const timer = setTimeout(() => launched.child.kill('SIGKILL'), timeoutMs);
  try {
    return await launched.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until `predicate` holds; throws naming `what` after timeoutMs. */
export async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Runs `code` (an ES module body; `await` allowed) in a child Node process with tap's TypeScript
 * loader, so it can import the sandbox's .ts modules by absolute path. `prefix` wraps the node
 * command (e.g. setpriv to another uid).
 */
export function runTsChild(code: string, options: { prefix?: string[]; timeoutMs?: number } = {}): Launched & { done: Promise<Ran> } {
  const loader = tsLoaderArgs();
  // env -i: tap's coverage hooks add NODE_OPTIONS to every child's environment; a child that runs
  // as another uid could not write its coverage file, and these children are not measured anyway
  const env = ['/usr/bin/env', '-i', 'PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/tmp'];
  const argv = [...(options.prefix ?? []), ...env, process.execPath, ...loader, '--input-type=module', '-e', code];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Ran>((resolve) => child.once('close', (c, s) => resolve({ code: c, signal: s, stdout, stderr })));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  void exited.then(() => clearTimeout(timer));
  if (child.pid === undefined) throw new Error('could not start node');
  return { child, pid: child.pid, stdout: () => stdout, stderr: () => stderr, exited, done: exited };
}

/** Module path for runTsChild imports. */
export function sandboxModule(name: string): string {
  return JSON.stringify(join(sandboxDir, `${name}.ts`));
}

// ---------------------------------------------------------------------------------------------
// Leaks

/** Live processes running as `uid`. */
export function processesOfUid(uid: number): number[] {
  return listPids().filter((pid) => uidOf(pid) === uid && isAlive(pid));
}

/** cgroup folders this test process created (named after its pid) that still exist. */
export function ownCgroupsLeft(): string[] {
  const left: string[] = [];
  for (const controller of ['pids', 'memory'] as const) {
    const parent = chaoslabParent(controller);
    if (parent === undefined || !existsSync(parent)) continue;
    for (const name of readdirSync(parent)) if (name.startsWith(`${process.pid}-`)) left.push(join(parent, name));
  }
  return left;
}

/** Which of `pids` are still alive (zombies count as gone). */
export function stillAlive(pids: Iterable<number>): number[] {
  return [...pids].filter((pid) => isAlive(pid));
}
