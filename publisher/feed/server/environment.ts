// The server contract's environment (publisher/feed/CONTRACT.md, section 1), read and checked
// before anything is opened: a missing or invalid variable is named on stderr and the process
// exits 64 without listening.

export interface ServerFault {
  action: 'exit' | 'stop';
  point: 'snapshot' | 'event' | 'revoke';
  n: number;
}

export interface ServerEnvironment {
  outboxPath: string;
  host: string;
  port: number;
  queueLimit: number;
  pingMs: number;
  idleMs: number;
  pollMs: number;
  faults: ServerFault[];
}

export class EnvironmentError extends Error {}

type Env = Record<string, string | undefined>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new EnvironmentError(`${name} is not set`);
  return value;
}

/** The largest delay Node's timers keep (a larger one silently becomes 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

function integer(env: Env, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = required(env, name);
  const n = Number(value);
  if (!/^(0|[1-9][0-9]*)$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new EnvironmentError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

const FAULT = /^(exit|stop)@(snapshot|event|revoke):([1-9][0-9]*)$/;

/**
 * `CHAOSLAB_FAULT`: `<action>@<point>:<n>`, several joined by `,`, no spaces, as in the consumer
 * contract; unset means none, empty is malformed, and `raise` has no meaning for a server.
 */
export function parseFaults(value: string | undefined): ServerFault[] {
  if (value === undefined) return [];
  if (value === '') throw new EnvironmentError('CHAOSLAB_FAULT is set but empty (unset it for no faults)');
  return value.split(',').map((part) => {
    const m = FAULT.exec(part);
    if (part.startsWith('raise@'))
      throw new EnvironmentError(`CHAOSLAB_FAULT: ${JSON.stringify(part)}: raise is a consumer's action, not a server's (exit or stop)`);
    if (!m) {
      throw new EnvironmentError(`CHAOSLAB_FAULT: ${JSON.stringify(part)} is not <exit|stop>@<snapshot|event|revoke>:<n> (n >= 1)`);
    }
    return { action: m[1] as ServerFault['action'], point: m[2] as ServerFault['point'], n: Number(m[3]) };
  });
}

export function readServerEnvironment(env: Env): ServerEnvironment {
  return {
    outboxPath: required(env, 'CHAOSLAB_OUTBOX_DB'),
    host: required(env, 'CHAOSLAB_HOST'),
    port: integer(env, 'CHAOSLAB_PORT', 1, 65535),
    queueLimit: integer(env, 'CHAOSLAB_QUEUE_LIMIT', 1),
    pingMs: integer(env, 'CHAOSLAB_PING_MS', 1, MAX_TIMER_MS),
    idleMs: integer(env, 'CHAOSLAB_IDLE_MS', 1, MAX_TIMER_MS),
    pollMs: integer(env, 'CHAOSLAB_POLL_MS', 1, MAX_TIMER_MS),
    faults: parseFaults(env.CHAOSLAB_FAULT),
  };
}
