#!/usr/bin/env node
// The feed lab's publisher on its own: `node dist/publisher/feed/main.js --seed 1 --port 0`.
// Mines a seeded chain at a compressed block interval into an outbox database and serves it.
// Prints each listener's port and the accounts on stderr, then one JSON transcript entry per
// line on stdout, until Ctrl-C or SIGTERM (which sends `reset shutdown` to every consumer).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { startFeedLab } from './lab.js';
import type { ScriptedReorg } from './chain/producer.js';
import { realScheduler } from './server/scheduler.js';

const integer = (min: number) => (value: string) => {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
  return n;
};

const reorgList = (deep: boolean) => (value: string, previous: ScriptedReorg[]) => {
  const m = /^([0-9]+):([0-9]+)(?::([0-9]+))?$/.exec(value);
  if (!m) throw new InvalidArgumentError(`expected afterBlock:depth[:length], got "${value}"`);
  const reorg: ScriptedReorg = { afterBlock: Number(m[1]), depth: Number(m[2]), deep, ...(m[3] ? { length: Number(m[3]) } : {}) };
  return [...previous, reorg];
};

const program = new Command('chaoslab-feed-publisher')
  .description('feed-lab publisher: a seeded chain, its outbox, and the subscribe/snapshot/event/revoke/reset/ping push server')
  .requiredOption('--seed <n>', 'seed of the simulated chain (unsigned 32-bit)', integer(0))
  .option('--port <port>', 'listen port of the first listener on 127.0.0.1 (0 = ephemeral; others are always ephemeral)', integer(0), 0)
  .option('--listeners <k>', 'number of listeners (streams s1..sK), one per consumer', integer(1), 1)
  .option('--db <path>', 'outbox database file to create (default: a temporary file, removed at exit)')
  .option('--chain-id <n>', 'chain id', integer(0), 1)
  .option('--accounts <n>', 'accounts on the chain', integer(2), 8)
  .option('--confirmations <n>', 'blocks below the head before a block is safe', integer(0), 6)
  .option('--block-ms <ms>', 'virtual block interval', integer(1), 12_000)
  .option('--compression <x>', 'virtual time runs this many times faster than real time', integer(1), 12)
  .option('--max-logs <n>', 'at most this many logs per block', integer(0), 4)
  .option('--initial-blocks <n>', 'blocks mined before the listeners open', integer(0), 0)
  .option('--until-block <n>', 'stop mining at this height', integer(0))
  .option('--retention-ms <ms>', 'delete confirmed outbox rows older than this much virtual time', integer(1))
  .option('--reorg <afterBlock:depth[:length]>', 'reorganise the last depth blocks right after afterBlock (repeatable)', reorgList(false), [])
  .option('--deep-reorg <afterBlock:depth[:length]>', 'the same, allowed below the safe height (repeatable)', reorgList(true), [])
  .option('--queue-limit <n>', 'frames a connection may have pending before reset slow-consumer', integer(1), 1000)
  .option('--ping-ms <ms>', 'ping after this long without sending', integer(1), 1000)
  .option('--idle-ms <ms>', 'close after this long without receiving', integer(1), 10_000)
  .parse();

const opts = program.opts<{
  seed: number;
  port: number;
  listeners: number;
  db?: string;
  chainId: number;
  accounts: number;
  confirmations: number;
  blockMs: number;
  compression: number;
  maxLogs: number;
  initialBlocks: number;
  untilBlock?: number;
  retentionMs?: number;
  reorg: ScriptedReorg[];
  deepReorg: ScriptedReorg[];
  queueLimit: number;
  pingMs: number;
  idleMs: number;
}>();

const tempDir = opts.db ? undefined : mkdtempSync(join(tmpdir(), 'chaoslab-feed-'));
const outboxPath = opts.db ?? join(tempDir!, 'outbox.db');
const names = Array.from({ length: opts.listeners }, (_, i) => `s${i + 1}`);
const lab = await startFeedLab({
  chain: {
    seed: opts.seed,
    chainId: opts.chainId,
    accounts: opts.accounts,
    confirmations: opts.confirmations,
    blockIntervalMs: opts.blockMs,
    logsPerBlock: { min: 0, max: opts.maxLogs },
  },
  outboxPath,
  retentionMs: opts.retentionMs,
  reorgs: [...opts.reorg, ...opts.deepReorg],
  initialBlocks: opts.initialBlocks,
  streams: names.map((name) => ({ name, queueLimit: opts.queueLimit, pingMs: opts.pingMs, idleMs: opts.idleMs })),
  ports: { s1: opts.port },
  onTranscript: (entry) => process.stdout.write(`${JSON.stringify(entry)}\n`),
});
for (const name of names) {
  process.stderr.write(`publisher listening on 127.0.0.1:${lab.publisher.stream(name).port}${names.length > 1 ? ` (stream ${name})` : ''}\n`);
}
process.stderr.write(`outbox ${outboxPath}; chain ${lab.chain.chainId}; accounts ${lab.chain.accounts.join(',')}\n`);
lab.producer.run(realScheduler, { compression: opts.compression, untilBlock: opts.untilBlock });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(
    signal,
    () =>
      void lab.close().then(() => {
        if (tempDir) rmSync(tempDir, { recursive: true, force: true });
        process.exit(0);
      }),
  );
}
