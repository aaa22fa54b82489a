// The command line and environment that re-run one run by hand, recorded in its run-start entry
// so every report can show them: whichever way the run was started (a batch, a repeat, the
// mutant matrix), it is `chaoslab run <this scenario>` with the same consumer and flags.

import path from 'node:path';
import { scenariosDir, shellQuote } from '../base/paths.js';
import type { SealMode } from '../sandbox/probe.js';

export interface Reproduce {
  /** `chaoslab run …`, to be typed in the run's cwd. */
  command: string;
  /** The harness's own CHAOSLAB_* variables (and TOXIPROXY_URL) when the run started. */
  env: Record<string, string>;
  /** The chaoslab command line as typed, when the run was part of something larger. */
  invokedAs?: string;
}

/** Quotes a word for /bin/sh only when it needs it. */
export const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : shellQuote(s));

/** The variables of `env` that change what a run does. */
export function harnessEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(env).sort()) if ((key.startsWith('CHAOSLAB_') || key === 'TOXIPROXY_URL') && env[key] !== undefined) out[key] = env[key]!;
  return out;
}

/** How to name the scenario on the command line: its catalogue name, else its path (relative to cwd when inside it). */
export function scenarioArgument(scenario: { name: string; file: string }, cwd: string, catalogue = scenariosDir): string {
  const file = path.resolve(cwd, scenario.file);
  const inCatalogue = path.relative(catalogue, file);
  if (!inCatalogue.startsWith('..') && !path.isAbsolute(inCatalogue) && path.basename(file) === `${scenario.name}.yaml`) return scenario.name;
  const rel = path.relative(cwd, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.startsWith('.') ? rel : `./${rel}`;
}

export function reproduceOf(
  run: {
    scenario: { name: string; file: string };
    cwd: string;
    consumerCommand?: string;
    serverCommand?: string;
    seal?: SealMode;
    toxiproxyUrl?: string;
    storeLimitBytes?: number;
    roomQuotaBytes?: number;
  },
  invokedAs?: string,
  env: NodeJS.ProcessEnv = process.env,
): Reproduce {
  const words = ['chaoslab', 'run', shellWord(scenarioArgument(run.scenario, run.cwd))];
  if (run.consumerCommand) words.push('--consumer', shellWord(run.consumerCommand));
  if (run.serverCommand) words.push('--server', shellWord(run.serverCommand));
  if (run.seal === 'on') words.push('--seal');
  if (run.seal === 'off') words.push('--no-seal');
  if (run.toxiproxyUrl) words.push('--toxiproxy-url', shellWord(run.toxiproxyUrl));
  if (run.storeLimitBytes) words.push('--store-limit', String(run.storeLimitBytes));
  if (run.roomQuotaBytes !== undefined) words.push('--room-quota', String(run.roomQuotaBytes));
  const command = words.join(' ');
  return { command, env: harnessEnv(env), ...(invokedAs && invokedAs !== command ? { invokedAs } : {}) };
}

/** One line to paste into a shell: cd, the environment, the command. */
export function reproduceLine(r: Pick<Reproduce, 'command' | 'env'>, cwd?: string): string {
  const env = Object.entries(r.env).map(([k, v]) => `${k}=${shellWord(v)} `);
  return `${cwd ? `cd ${shellWord(cwd)} && ` : ''}${env.join('')}${r.command}`;
}

/** The chaoslab command line as typed (argv after the node binary and script). */
export const typedCommand = (args: readonly string[]): string => ['chaoslab', ...args.map(shellWord)].join(' ');
