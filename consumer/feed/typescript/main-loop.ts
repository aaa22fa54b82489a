// The main loop (consumer/feed/CONTRACT.md, sections 1, 2 and 5): check the environment, open
// the store, then connect, subscribe, handle frames and reconnect until SIGTERM.

import net from 'node:net';
import { Reconnects } from './backoff.js';
import { Connection } from './connection.js';
import { type Config, EXIT, parseEnv } from './environment.js';
import { fireFaults } from './hooks.js';
import { type Db, type Session, type Steps, Stopped, log, now } from './session.js';
import { referenceSteps } from './steps.js';
import { readState } from './store.js';
import { chainOf, encodeSubscribe } from './wire.js';

function connect(s: Session): Promise<net.Socket> {
  const { host, port, idleMs } = s.config;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const fail = (err: Error): void => {
      clearTimeout(timer);
      s.offStop(onStop);
      socket.destroy();
      reject(err);
    };
    const onStop = (): void => fail(new Stopped('SIGTERM'));
    // Nothing received while connecting either: a connect that hangs counts as failed.
    const timer = setTimeout(() => fail(new Error(`connect to ${host}:${port} timed out after ${idleMs} ms`)), idleMs);
    s.onStop(onStop);
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      s.offStop(onStop);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** One connection from connect to its end; returns what the backoff needs to know. */
async function runConnection(s: Session): Promise<{ gotData: boolean; endSeenAt: number }> {
  let socket: net.Socket;
  try {
    socket = await connect(s);
  } catch (err) {
    if (!(err instanceof Stopped)) log(`cannot connect: ${(err as Error).message}`);
    return { gotData: false, endSeenAt: now() };
  }
  const conn = new Connection(socket, s);
  s.conn = conn;
  try {
    const sub = s.steps.subscription(s);
    conn.subscribedNull = sub.cursor === null;
    const { clientId, topics } = s.config;
    conn.write(encodeSubscribe({ client: clientId, topics, cursor: sub.cursor, blockHash: sub.blockHash }));
    for (;;) {
      const next = await conn.next();
      if (next.kind === 'frame') {
        if ((await s.steps.handleFrame(s, next.frame)) === 'close') {
          const why = next.frame.op === 'reset' ? `reset ${JSON.stringify(next.frame.reason)}` : 'revoke into the snapshot';
          conn.close(why);
          log(`${why}: reconnecting${s.snapshotNeeded ? ' for a snapshot' : ''}`);
          break;
        }
        continue;
      }
      if (next.kind === 'invalid') log(`invalid frame, reconnecting: ${next.reason}`);
      else if (next.kind === 'idle') log(`nothing received for ${s.config.idleMs} ms: reconnecting`);
      else if (next.kind === 'end') log(`${next.reason}: reconnecting`);
      break;
    }
  } catch (err) {
    // The normal error path (an injected raise, a SQLite error): the transaction was rolled
    // back where it failed; close, and come back with the durable cursor.
    if (!(err instanceof Stopped)) log(`${(err as Error).name}: ${(err as Error).message}; reconnecting`);
  } finally {
    conn.close();
    s.conn = undefined;
  }
  return { gotData: conn.gotData, endSeenAt: conn.endSeenAt };
}

/** The process's session over its open store (the run's chain id from the stored cursor, if any). */
export function createSession(config: Config, db: Db, steps: Steps): Session & { stop(): void } {
  const st = readState(db);
  const stored = st.cursor ?? st.snapshotCursor;
  const stopListeners = new Set<() => void>();
  let stopping = false;
  let pingId = 0;
  return {
    config,
    db,
    steps,
    followed: new Set(config.topics),
    snapshotNeeded: false,
    chainId: stored === null ? undefined : chainOf(stored),
    counters: { apply: 0, revoke: 0, snapshot: 0 },
    conn: undefined,
    get stopping() {
      return stopping;
    },
    fault: (point, n) => fireFaults(config.faults, point, n),
    send(text) {
      this.conn?.write(text);
    },
    pause(ms) {
      return new Promise<void>((resolve, reject) => {
        if (stopping) return reject(new Stopped('SIGTERM'));
        const onStop = (): void => {
          clearTimeout(timer);
          reject(new Stopped('SIGTERM'));
        };
        const timer = setTimeout(() => {
          stopListeners.delete(onStop);
          resolve();
        }, ms);
        stopListeners.add(onStop);
      });
    },
    stop() {
      stopping = true;
      for (const f of [...stopListeners]) f();
      stopListeners.clear();
    },
    nextPingId: () => ++pingId,
    onStop: (f) => stopListeners.add(f),
    offStop: (f) => stopListeners.delete(f),
  };
}

/**
 * The whole process: check the environment, open the store, then connect, subscribe, handle
 * frames and reconnect with backoff until SIGTERM. Returns the exit status.
 */
export async function runClient(env: NodeJS.ProcessEnv, overrides: Partial<Steps> = {}): Promise<number> {
  let config: Config;
  try {
    config = parseEnv(env); // before anything is opened or connected
  } catch (err) {
    log(`${(err as Error).message} (exit 64)`);
    return EXIT.env;
  }
  const steps: Steps = { ...referenceSteps, ...overrides };
  let db: Db;
  try {
    db = steps.openStore(config.db);
  } catch (err) {
    log(`CHAOSLAB_DB=${JSON.stringify(config.db)} cannot be opened as the feed store: ${(err as Error).message} (exit 64)`);
    return EXIT.env;
  }
  const s = createSession(config, db, steps);
  const onSignal = (): void => s.stop();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const reconnects = new Reconnects();
    while (!s.stopping) {
      await reconnects.waitBeforeConnect(s);
      if (s.stopping) break;
      reconnects.ended(await runConnection(s));
    }
    return EXIT.ok;
  } catch (err) {
    log(`unexpected ${(err as Error).stack ?? String(err)} (exit 1)`);
    return EXIT.error;
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** Entry point used by client.ts (and by mutants, with their one override). */
export async function main(overrides: Partial<Steps> = {}): Promise<never> {
  const code = await runClient(process.env, overrides);
  process.exit(code);
}
