// The duty every lab's contract states for a bad environment: a consumer given a missing or
// invalid CHAOSLAB_* variable names it on stderr and exits 64 before connecting anything (so it
// never touches its store either). Lab-neutral: each lab says which values are bad, counts the
// connections its publisher saw, and words what a store holds; this module judges the rest.

import type { RawProblem } from '../scenario/problems.js';
import type { Finding } from '../findings/verdict.js';

/** The contracts' status for a missing or invalid environment. */
export const EXIT_ENV = 64;

/** Variables set to a bad value, and required ones left out. */
export interface BadEnvironment {
  set: Record<string, string>;
  unset: string[];
}

/** `CHAOSLAB_PORT was "not-a-port"`, `CHAOSLAB_DB was unset`. */
export function describeBadEnvironment(bad: BadEnvironment): string {
  return [...Object.entries(bad.set).map(([name, value]) => `${name} was ${JSON.stringify(value)}`), ...bad.unset.map((name) => `${name} was unset`)].join(
    ' and ',
  );
}

/**
 * A bad-environment scenario's consumer.env and consumer.unset, checked: every value set must be
 * one the contract calls invalid (`invalid`, the lab's rule), else the scenario grades nothing;
 * no NUL byte; no variable both set and unset. The lab adds what its process model refuses.
 */
export function badEnvironmentValueProblems(
  env: Record<string, string | undefined>,
  unset: readonly string[],
  invalid: (name: string, value: string) => boolean,
): RawProblem[] {
  const out: RawProblem[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (value.includes('\0')) out.push({ segments: ['consumer', 'env', name], at: 'value', message: 'an environment variable cannot hold a NUL byte' });
    else if (!invalid(name, value))
      out.push({
        segments: ['consumer', 'env', name],
        at: 'value',
        message: `${JSON.stringify(value)} is a valid ${name}: a bad environment needs a value the contract calls invalid`,
      });
  }
  for (const [i, name] of unset.entries())
    if (name in env)
      out.push({ segments: ['consumer', 'unset', i], at: 'value', message: `${name} is also set in consumer.env: unset it or set it, not both` });
  return out;
}

/** The consumer's environment made bad on purpose: `bad.set` replaces, `bad.unset` removes. */
export function withBadEnvironment(env: Record<string, string>, bad: BadEnvironment | undefined): Record<string, string> {
  if (!bad) return env;
  const out: Record<string, string> = { ...env, ...bad.set };
  for (const name of bad.unset) delete out[name];
  return out;
}

export interface EnvironmentRun {
  bad: BadEnvironment;
  /** How the (only) consumer process ended, if it did. */
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string };
  /** Connections the publisher saw from it, and what they carried, in the lab's words (", RESUME 3"). */
  connections: number;
  connectedDetail?: string;
  /** What its store holds, in the lab's words, when it holds anything the consumer wrote. */
  written?: string;
  deadlineMs: number;
}

/** The findings of a bad-environment run: the exit first (the duty itself), then a connection, then a store written. */
export function environmentDutyProblems(run: EnvironmentRun): Finding[] {
  const when = `when ${describeBadEnvironment(run.bad)}`;
  const duty = `a consumer given a missing or invalid CHAOSLAB_* variable must name it on stderr and exit ${EXIT_ENV} before connecting`;
  const process = { role: 'consumer' as const, incarnation: 1 };
  const exit = run.exit;
  const problems: Finding[] = [];
  if (!exit)
    problems.push({ code: 'never-ended', text: `the consumer was never started or never ended ${when} (the run was cut short)`, subject: { process } });
  else if (exit.killedBy === 'deadline')
    problems.push({
      code: 'env-still-running',
      text: `the consumer was still running after ${(run.deadlineMs / 1000).toFixed(0)} s ${when}, and was killed at the deadline: ${duty}, at once`,
      subject: { process, t: exit.t },
    });
  else if (exit.code !== EXIT_ENV)
    problems.push({
      code: 'env-wrong-exit',
      text: `the consumer ${exit.signal ? `was killed by ${exit.signal}` : `exited ${exit.code}`} instead of ${EXIT_ENV} ${when}: ${duty}`,
      subject: { process, t: exit.t },
    });
  if (run.connections > 0)
    problems.push({
      code: 'env-connected',
      text: `the consumer connected anyway ${when} (${run.connections === 1 ? 'one connection' : `${run.connections} connections`}${run.connectedDetail ?? ''}): nothing may be connected before the environment is valid`,
      subject: { process },
    });
  if (run.written !== undefined)
    problems.push({ code: 'env-wrote-store', text: `the consumer wrote to its store ${when} (${run.written}): it must exit before opening anything` });
  return problems;
}

/** One fact per line, for the report's smallest diff. */
export function environmentDutyDiff(problems: readonly Finding[], exit: EnvironmentRun['exit']): string[] {
  if (problems.length === 0) return [];
  const ended = !exit ? 'never ended' : exit.killedBy ? `killed at the ${exit.killedBy}` : exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`;
  return [
    `exit: ${ended}, expected ${EXIT_ENV}`,
    ...problems.filter((p) => p.code === 'env-connected').map(() => 'connections: at least one, expected none'),
    ...problems.filter((p) => p.code === 'env-wrote-store').map(() => 'store: written, expected untouched'),
  ];
}
