// The feed run's publisher side, in the harness's process: the simulated chain and its script,
// the indexer writing the outbox, and the push server with a stream for the control (direct) and
// one for the consumer under test (behind Toxiproxy, added by the caller). Its hooks read the
// stores at each subscribe and fire the lab's fault points; its transcript feeds the wire record
// and keeps what the checks need from the wire (the snapshots sent, the heartbeats).

import { join } from 'node:path';
import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import type { FeedStreamHooks } from '../../../../publisher/feed/server/connection.js';
import { OutboxIndexer } from '../../../../publisher/feed/outbox/indexer.js';
import { FeedPublisher } from '../../../../publisher/feed/server/server.js';
import type { TranscriptEntry } from '../../../../publisher/transcript.js';
import { rawTopLevelMember } from '../../../../protocol/feed/raw-json.js';
import type { Role } from '../../../record/journal.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { ChainScript, chainConfig } from '../scenario/chain-script.js';
import type { FeedPlan } from '../scenario/plan.js';
import { LIMITS } from '../scenario/schema.js';
import type { SentSnapshot } from '../check/state.js';
import type { FeedRunState } from './state.js';
import { type FeedStores, journalRead, MID_RUN_READ } from './stores.js';

/** The server's pings on the consumer's stream and the pongs that came back (ids as written). */
export interface Heartbeats {
  pings: { conn: number; id: string; t: number }[];
  /** `conn:id` of each pong received. */
  pongs: Set<string>;
}

export interface FeedSide {
  chain: SimChain;
  script: ChainScript;
  indexer: OutboxIndexer;
  publisher: FeedPublisher;
  /** The snapshots each stream sent, as the checker compares stores with them. */
  sent: Record<Role, SentSnapshot[]>;
  heartbeats: Heartbeats;
}

/** The snapshot in a sent line, if it is one (the publisher writes `op` first). */
function sentSnapshot(line: string): SentSnapshot | undefined {
  if (!line.startsWith('{"op":"snapshot"')) return undefined;
  try {
    const f = JSON.parse(line) as { cursor: string; blockHash: string; state: { balances: Record<string, string> } };
    return { cursor: f.cursor, blockHash: f.blockHash, balances: f.state.balances };
  } catch {
    return undefined;
  }
}

/** A heartbeat's id as written; only for a line that is JSON (the raw scanner needs one). */
function idOf(line: string): string | undefined {
  try {
    JSON.parse(line);
  } catch {
    return undefined;
  }
  return rawTopLevelMember(line.trimEnd(), 'id');
}

/** The chain, its outbox with the initial blocks mined, and the indexer closed when the run ends. */
export function chainAndOutbox(
  ctx: RunContext<FeedPlan>,
  outboxPath: string,
  options: { newestFirstAfterReorg?: boolean } = {},
): Pick<FeedSide, 'chain' | 'script' | 'indexer'> {
  const plan = ctx.scenario.lab;
  // The same script the checker simulates.
  const chain = new SimChain(chainConfig(plan.chain));
  const script = new ChainScript(chain, plan.chain);
  const indexer = new OutboxIndexer(outboxPath, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
    ...(plan.chain.retentionMs === undefined ? {} : { retentionMs: plan.chain.retentionMs }),
    ...options,
  });
  ctx.defer(() => indexer.close());
  for (const change of script.mineInitial()) indexer.apply(change);
  return { chain, script, indexer };
}

/** Each stream's hooks: a store read at each subscribe, and on the consumer's stream the lab's fault points. */
function streamHooks(ctx: RunContext<FeedPlan>, stores: FeedStores, state: FeedRunState, owners: Map<number, number>): Record<Role, FeedStreamHooks> {
  const firstSent = new Set<string>();
  let snapshots = 0;
  const readAtSubscribe = (role: Role, conn: number) => {
    const store = { ...stores.read(role, MID_RUN_READ), conn };
    journalRead(ctx, role, role === 'control' ? 1 : owners.get(conn), 'at-subscribe', stores.dbs[role], store);
  };
  const consumer: FeedStreamHooks = {
    onSubscribe: async (conn, nth) => {
      readAtSubscribe('consumer', conn);
      await state.faults?.point('on_subscribe', nth);
    },
    afterSnapshot: () => state.faults?.point('on_snapshot', ++snapshots),
    beforeEvent: (_conn, cursor) => {
      if (firstSent.has(cursor)) return;
      firstSent.add(cursor);
      return state.faults?.point('before_event', firstSent.size);
    },
  };
  return { consumer, control: { onSubscribe: (conn) => readAtSubscribe('control', conn) } };
}

/** The transcript's listener: every entry to the wire record, and the snapshots and heartbeats kept aside. */
function transcriptRecorder(
  ctx: RunContext<FeedPlan>,
  state: FeedRunState,
  owners: Map<number, number>,
  kept: Pick<FeedSide, 'sent' | 'heartbeats'>,
): (entry: TranscriptEntry) => void {
  const record = ctx.wire((entry) =>
    entry.stream === 'control' ? { role: 'control', incarnation: 1 } : state.current && { role: 'consumer', incarnation: state.current.incarnation },
  );
  const { pings, pongs } = kept.heartbeats;
  return (entry) => {
    if (entry.kind === 'open' && entry.stream === 'consumer' && state.current) owners.set(entry.conn, state.current.incarnation);
    if (entry.stream === 'consumer' && (entry.kind === 'send' || (entry.kind === 'recv' && !entry.error))) {
      const heartbeat = /^\{\s*"op"\s*:\s*"(ping|pong)"/.exec(entry.line);
      const id = heartbeat && idOf(entry.line);
      if (heartbeat?.[1] === 'ping' && entry.kind === 'send' && id) pings.push({ conn: entry.conn, id, t: entry.t });
      if (heartbeat?.[1] === 'pong' && entry.kind === 'recv' && id) pongs.add(`${entry.conn}:${id}`);
    }
    if (entry.kind === 'send') {
      const snapshot = sentSnapshot(entry.line);
      if (snapshot) kept.sent[entry.stream === 'control' ? 'control' : 'consumer'].push(snapshot);
      // Deliberate misbehaviour travels as a `note` on the line it sends; the publisher's words
      // also go in as a note of their own, which the reports draw as a mark (a resend shows).
      if (entry.note) record({ t: entry.t, stream: entry.stream, conn: entry.conn, kind: 'note', text: entry.note });
    }
    record(entry);
  };
}

/** Starts the chain, the outbox and the push server, and journals both streams. */
export async function startFeedSide(ctx: RunContext<FeedPlan>, stores: FeedStores, state: FeedRunState): Promise<FeedSide> {
  const plan = ctx.scenario.lab;
  const outboxPath = join(ctx.runDir, 'outbox.db');
  const { chain, script, indexer } = chainAndOutbox(ctx, outboxPath);
  const owners = new Map<number, number>(); // consumer stream: connection -> process number
  const kept: Pick<FeedSide, 'sent' | 'heartbeats'> = { sent: { consumer: [], control: [] }, heartbeats: { pings: [], pongs: new Set() } };
  const hooks = streamHooks(ctx, stores, state, owners);
  const server = { queueLimit: plan.server.queueLimit, pingMs: plan.server.pingMs, idleMs: plan.server.idleMs };
  const publisher = await FeedPublisher.start({
    outboxPath,
    streams: [
      // The control is the yardstick, never a slow reader: on a loaded machine a burst of blocks
      // could otherwise overflow its queue (small socket buffers make that quick) and reset it.
      { name: 'control', ...server, queueLimit: LIMITS.queueLimit.max, hooks: hooks.control },
      { name: 'consumer', ...server, hooks: hooks.consumer, misbehaviour: plan.server.misbehaviour },
    ],
    clock: ctx.clock,
    onTranscript: transcriptRecorder(ctx, state, owners, kept),
  });
  ctx.defer(() => publisher.close(500));
  for (const role of ['control', 'consumer'] as const) {
    const { host, port } = publisher.stream(role);
    ctx.journal.write({ type: 'stream', role, stream: role, host, port, db: stores.dbs[role] });
  }
  return { chain, script, indexer, publisher, ...kept };
}
