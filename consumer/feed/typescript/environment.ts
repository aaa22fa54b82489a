// The environment a feed consumer is started with (consumer/feed/CONTRACT.md, section 1), read
// and checked whole before anything is opened or connected: a bad one exits 64.

import { isAccount } from '../../../protocol/feed/frames.js';
import { type FaultAction, type FaultPoint, type FaultRule, INJECTED_EXIT } from './hooks.js';

export const EXIT = { ok: 0, error: 1, env: 64, injectedExit: INJECTED_EXIT } as const;

/** Longest timer Node can arm (larger values silently become 1 ms). */
export const MAX_MS = 2 ** 31 - 1;

export class EnvError extends Error {
  override name = 'EnvError';
}

export interface Config {
  host: string;
  port: number;
  db: string;
  clientId: string;
  topics: string[];
  pingMs: number;
  idleMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  applyDelayMs: number;
  faults: FaultRule[];
}

const FAULT_RE = /^(exit|raise|stop)@(apply|commit|revoke|snapshot):([1-9][0-9]*)$/;

/** `exit@apply:3,stop@revoke:1`; unset means no faults, an empty or malformed value is invalid. */
export function parseFaultPlan(text: string | undefined): FaultRule[] {
  if (text === undefined) return [];
  if (text === '') throw new EnvError('CHAOSLAB_FAULT is set but empty (unset it for no faults)');
  return text.split(',').map((item) => {
    const m = FAULT_RE.exec(item);
    const n = m ? Number(m[3]) : Number.NaN;
    if (!m || !Number.isSafeInteger(n)) {
      throw new EnvError(`CHAOSLAB_FAULT item ${JSON.stringify(item)} is not <exit|raise|stop>@<apply|commit|revoke|snapshot>:<n >= 1>`);
    }
    return { action: m[1] as FaultAction, point: m[2] as FaultPoint, n };
  });
}

function intVar(env: NodeJS.ProcessEnv, name: string, min: 0 | 1, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') throw new EnvError(`${name} is missing`);
  const n = Number(text);
  if (!/^(0|[1-9][0-9]*)$/.test(text) || n < min || n > max) throw new EnvError(`${name}=${JSON.stringify(text)} is not an integer in ${min}..${max}`);
  return n;
}

function textVar(env: NodeJS.ProcessEnv, name: string): string {
  const text = env[name];
  if (text === undefined || text === '') throw new EnvError(`${name} is missing`);
  return text;
}

export function parseTopics(text: string): string[] {
  const topics = text.split(',');
  for (const topic of topics) {
    if (!isAccount(topic)) throw new EnvError(`CHAOSLAB_TOPICS item ${JSON.stringify(topic)} is not 0x + 40 lowercase hex digits`);
  }
  if (new Set(topics).size !== topics.length) throw new EnvError('CHAOSLAB_TOPICS names an account twice');
  return topics;
}

/** Validates the whole environment before anything is opened or connected. */
export function parseEnv(env: NodeJS.ProcessEnv): Config {
  const config: Config = {
    host: textVar(env, 'CHAOSLAB_HOST'),
    port: intVar(env, 'CHAOSLAB_PORT', 1, 65535),
    db: textVar(env, 'CHAOSLAB_DB'),
    clientId: textVar(env, 'CHAOSLAB_CLIENT_ID'),
    topics: parseTopics(textVar(env, 'CHAOSLAB_TOPICS')),
    pingMs: intVar(env, 'CHAOSLAB_PING_MS', 1, MAX_MS),
    idleMs: intVar(env, 'CHAOSLAB_IDLE_MS', 1, MAX_MS),
    backoffBaseMs: intVar(env, 'CHAOSLAB_BACKOFF_BASE_MS', 1, MAX_MS),
    backoffCapMs: intVar(env, 'CHAOSLAB_BACKOFF_CAP_MS', 1, MAX_MS),
    applyDelayMs: env.CHAOSLAB_APPLY_DELAY_MS === undefined ? 0 : intVar(env, 'CHAOSLAB_APPLY_DELAY_MS', 0, MAX_MS),
    faults: parseFaultPlan(env.CHAOSLAB_FAULT),
  };
  if (config.backoffCapMs < config.backoffBaseMs) {
    throw new EnvError(`CHAOSLAB_BACKOFF_CAP_MS=${config.backoffCapMs} is below CHAOSLAB_BACKOFF_BASE_MS=${config.backoffBaseMs}`);
  }
  return config;
}
