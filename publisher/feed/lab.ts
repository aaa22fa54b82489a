// The feed lab in one piece: a seeded chain, its indexer writing the outbox database, a block
// producer, and the push server reading that database. Used by the standalone entry point and
// the tests; the harness will plug it in through its lab seam.

import type { TranscriptSink } from '../transcript.js';
import { type ChainConfig, SimChain } from './chain/chain.js';
import { OutboxIndexer } from './outbox/indexer.js';
import { BlockProducer, type ScriptedReorg } from './chain/producer.js';
import { type Scheduler, realScheduler } from './server/scheduler.js';
import { FeedPublisher } from './server/server.js';
import type { FeedStreamConfig } from './server/stream.js';

export interface FeedLabOptions {
  chain: ChainConfig;
  /** A new SQLite file for the outbox. */
  outboxPath: string;
  streams: readonly FeedStreamConfig[];
  /** Delete confirmed outbox rows older than this much virtual time (default: keep everything). */
  retentionMs?: number;
  reorgs?: readonly ScriptedReorg[];
  /** Blocks mined before the listeners open. */
  initialBlocks?: number;
  host?: string;
  ports?: Record<string, number>;
  scheduler?: Scheduler;
  clock?: () => number;
  onTranscript?: TranscriptSink;
  pageSize?: number;
}

export interface FeedLab {
  chain: SimChain;
  indexer: OutboxIndexer;
  producer: BlockProducer;
  publisher: FeedPublisher;
  /**
   * Stops the producer and the publisher (`reset shutdown` to every consumer, who get `graceMs`
   * of real time to close their side), then closes the database. Safe to call more than once.
   */
  close(graceMs?: number): Promise<void>;
}

export async function startFeedLab(options: FeedLabOptions): Promise<FeedLab> {
  const chain = new SimChain(options.chain);
  const indexer = new OutboxIndexer(options.outboxPath, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
    retentionMs: options.retentionMs,
  });
  let publisher: FeedPublisher | undefined;
  const producer = new BlockProducer(chain, indexer, () => publisher?.outboxChanged(), options.reorgs);
  try {
    producer.mine(options.initialBlocks ?? 0);
    publisher = await FeedPublisher.start({
      outboxPath: options.outboxPath,
      streams: options.streams,
      scheduler: options.scheduler ?? realScheduler,
      host: options.host,
      ports: options.ports,
      clock: options.clock,
      onTranscript: options.onTranscript,
      pageSize: options.pageSize,
    });
  } catch (error) {
    indexer.close();
    throw error;
  }
  const started = publisher;
  let closing: Promise<void> | undefined;
  return {
    chain,
    indexer,
    producer,
    publisher: started,
    close(graceMs) {
      closing ??= (async () => {
        producer.stop();
        await started.close(graceMs);
        indexer.close();
      })();
      return closing;
    },
  };
}
