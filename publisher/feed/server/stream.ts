// One named stream of the feed publisher: the listener a single consumer connects to (the
// control consumer and the consumer under test each get their own, a storm gets K of them).
// Its connections share the stream's settings, hooks, misbehaviour and subscribe count.

import type { Socket } from 'node:net';
import type { TranscriptEvent, TranscriptSink } from '../../transcript.js';
import { type ConnectionSettings, FeedConnection, type FeedStreamHooks, type StreamContext } from './connection.js';
import { type DeliverySteps, REFERENCE_STEPS } from './delivery.js';
import type { FeedMisbehaviour } from './misbehaviour.js';
import { type ConnectionPolicy, REFERENCE_POLICY } from './policy.js';
import type { OutboxReader } from '../outbox/reader.js';
import type { Scheduler } from './scheduler.js';

export interface FeedStreamConfig {
  name: string;
  /** Frames a connection may have waiting; one more while live means `reset slow-consumer` (default 1000). */
  queueLimit?: number;
  /** Send a ping after this long without sending anything (default 1000 ms). */
  pingMs?: number;
  /** Close a connection after this long without receiving one byte (default 10 000 ms). */
  idleMs?: number;
  /** How long a closing connection waits for the consumer to close its side (default 2000 ms). */
  lingerMs?: number;
  hooks?: FeedStreamHooks;
  misbehaviour?: readonly FeedMisbehaviour[];
  /** Steps a server mutant replaces (default: the reference's). */
  steps?: Partial<DeliverySteps>;
  /** Answers to a misbehaving client a server mutant replaces (default: the reference's). */
  policy?: Partial<ConnectionPolicy>;
}

/** Rows per replay page: the seed's `limit 1000`. */
export const REPLAY_PAGE_SIZE = 1000;

const positiveInteger = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer (got ${value})`);
  return value;
};

/** Misbehaviour rules whose connection (a number, or `{ from }`) names one a stream can have. */
function checkedRules(rules: readonly FeedMisbehaviour[]): readonly FeedMisbehaviour[] {
  for (const [i, r] of rules.entries()) {
    const c = r.connection;
    if (c === undefined) continue;
    if (typeof c === 'number') positiveInteger(`misbehaviour[${i}].connection`, c);
    else positiveInteger(`misbehaviour[${i}].connection.from`, c.from);
  }
  return rules;
}

export class FeedStream implements StreamContext {
  readonly name: string;
  readonly settings: ConnectionSettings;
  private readonly connections = new Set<FeedConnection>();
  readonly misbehaviourFired = new Map<FeedMisbehaviour, number>();
  private nextConn = 1;
  private subscribes = 0;
  /** Set by whoever starts consumers (e.g. "incarnation 2"); stamped on each new connection. */
  tag: string | undefined;

  constructor(
    config: FeedStreamConfig,
    readonly reader: OutboxReader,
    readonly scheduler: Scheduler,
    private readonly clock: () => number,
    private readonly sink: TranscriptSink,
    pageSize = REPLAY_PAGE_SIZE,
  ) {
    this.name = config.name;
    this.settings = {
      queueLimit: positiveInteger('queueLimit', config.queueLimit ?? 1000),
      pageSize: positiveInteger('pageSize', Math.min(pageSize, REPLAY_PAGE_SIZE)),
      pingMs: positiveInteger('pingMs', config.pingMs ?? 1000),
      idleMs: positiveInteger('idleMs', config.idleMs ?? 10_000),
      lingerMs: positiveInteger('lingerMs', config.lingerMs ?? 2000),
      hooks: config.hooks ?? {},
      misbehaviour: checkedRules(config.misbehaviour ?? []),
      steps: { ...REFERENCE_STEPS, ...config.steps },
      policy: { ...REFERENCE_POLICY, ...config.policy },
    };
  }

  /** Takes over an accepted socket for the rest of its life. */
  accept(socket: Socket): void {
    const conn = new FeedConnection(this.nextConn++, socket, this, this.tag);
    this.connections.add(conn);
    socket.once('close', () => this.connections.delete(conn));
  }

  /** The outbox changed: every connection reads what concerns it. */
  outboxChanged(): void {
    for (const conn of this.connections) conn.outboxChanged();
  }

  /** Sends `reset shutdown` on every open connection and closes it. */
  shutdown(): void {
    for (const conn of this.connections) conn.shutdown();
  }

  get subscribeCount(): number {
    return this.subscribes;
  }

  record(conn: number, event: TranscriptEvent): void {
    this.sink({ t: this.clock(), stream: this.name, conn, ...event });
  }

  countSubscribe(): number {
    return ++this.subscribes;
  }
}
