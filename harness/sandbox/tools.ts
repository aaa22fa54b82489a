// The system programs sealed mode is built from, where they are, which Debian package brings
// each, and one way to run them. Looked up in the system directories (never through a PATH a
// user could have put something in front of), once per process.

import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';

/** Program -> Debian package (for the "install it with" message). */
export const TOOL_PACKAGES = {
  unshare: 'util-linux',
  nsenter: 'util-linux',
  setpriv: 'util-linux',
  prlimit: 'util-linux',
  nft: 'nftables',
  tini: 'tini',
  ip: 'iproute2',
  sh: 'dash',
  bash: 'bash',
  env: 'coreutils',
  sleep: 'coreutils',
  cp: 'coreutils',
  find: 'findutils',
  mount: 'mount',
  umount: 'mount',
  ipcrm: 'util-linux',
} as const;

export type ToolName = keyof typeof TOOL_PACKAGES;

const SYSTEM_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];
const found = new Map<ToolName, string | undefined>();

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of a system program, or undefined. */
export function findTool(name: ToolName): string | undefined {
  if (!found.has(name)) found.set(name, SYSTEM_DIRS.map((dir) => join(dir, name)).find(isExecutableFile));
  return found.get(name);
}

/** Absolute path of a system program; throws naming the Debian package that brings it. */
export function requireTool(name: ToolName): string {
  const path = findTool(name);
  if (path === undefined) throw new Error(`${name} is not installed (Debian package ${TOOL_PACKAGES[name]}; \`make sandbox-tools\` installs it)`);
  return path;
}

/** Names of the programs sealed mode needs that are missing. */
export function missingTools(names: readonly ToolName[] = Object.keys(TOOL_PACKAGES) as ToolName[]): ToolName[] {
  return names.filter((name) => findTool(name) === undefined);
}

export interface ToolResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** "exit 2: <stderr>" style summary for messages. */
  summary: string;
}

/**
 * Runs a program to completion (never throws for a failing exit; throws only if it cannot start).
 * node:child_process, not execa: this module is on every command's start-up path (orphan.ts),
 * and execa alone takes about 0.1 s to import.
 */
export async function runTool(
  argv: readonly string[],
  options: { input?: string; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ToolResult> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('runTool: empty argv');
  const { code, signal, stdout, stderr, timedOut } = await new Promise<{
    code: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
  }>((resolve) => {
    const child = spawn(file, args, {
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: options.env ?? { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 10_000);
    let settled = false;
    const settle = (code: number | null, signal: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    };
    // A program that cannot be started (ENOENT, EACCES) ends like one that exited without a status.
    child.on('error', () => settle(null, null));
    child.on('close', (code, signal) => settle(code, signal));
    if (child.stdin) {
      child.stdin.on('error', () => {}); // a program that exits without reading its input
      child.stdin.end(options.input);
    }
  });
  const how = timedOut ? 'timed out' : signal ? `killed by ${signal}` : `exit ${String(code)}`;
  const text = (stderr.trim() || stdout.trim()).split('\n').slice(0, 6).join(' | ');
  return { code, signal, stdout, stderr, summary: text ? `${how}: ${text}` : how };
}

/** runTool in this process's own namespace: a sealed run's worker is inside the run's (its firewall, its packet loss). */
export const execHere = (argv: readonly string[], options: { input?: string } = {}): Promise<ToolResult> => runTool(argv, options);
