// make bench §5: the feed lab's server (publisher/feed/, as shipped: one stream, default queue,
// ping and idle settings) as its own process, so its memory is its own. Driven by
// bench/fanout.mjs over stdin/stdout, one JSON object a line:
//   out  {"port","chainId","accounts","genesisHash","events"}   once listening (pre-mined stream)
//   in   {"live":<blocks>,"intervalMs":<ms>}   mine that many blocks on a fixed schedule; each:
//   out  {"block","t","events"}                t: the monotonic clock (ms) right after the block's
//                                              commit to the outbox and the server's notice
//   out  {"mined":true}
//   in   {"stop":true}  (or stdin closed)
//   out  {"maxRssMiB","rssMiB"}                then the lab closes and the process exits
// --raw serves the same pre-mined event lines from a plain socket server instead (the floor):
// on a connection's first line it writes the whole stream in one write, nothing else.
// --outbox-only: the chain and its indexer alone, no server (its "port" is null): the reference
// server runs as its own process on this outbox, as the server contract runs it, and finds the
// live blocks by polling (bench/server-process.mjs).
//   node bench/fanout-publisher.mjs --db <file> --blocks <n> --logs <per block> [--raw | --outbox-only]
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { encodeRealEvent, eventOf } from '../dist/publisher/feed/outbox/events.js';
import { OutboxReader } from '../dist/publisher/feed/outbox/reader.js';
import { startFeedLab } from '../dist/publisher/feed/lab.js';
import { SimChain } from '../dist/publisher/feed/chain/chain.js';
import { BlockProducer } from '../dist/publisher/feed/chain/producer.js';
import { OutboxIndexer } from '../dist/publisher/feed/outbox/indexer.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    blocks: { type: 'string' },
    logs: { type: 'string' },
    raw: { type: 'boolean', default: false },
    'outbox-only': { type: 'boolean', default: false },
  },
});
const blocks = Number(values.blocks);
const logs = Number(values.logs);
if (!values.db || !Number.isInteger(blocks) || !Number.isInteger(logs)) {
  process.stderr.write('usage: fanout-publisher.mjs --db <file> --blocks <n> --logs <per block> [--raw]\n');
  process.exit(2);
}
const now = () => Number(process.hrtime.bigint()) / 1e6;
const say = (object) => process.stdout.write(`${JSON.stringify(object)}\n`);
const MiB = 2 ** 20;

// Fixed logs per block, so that a block's event count is known; all of them involve the chain's
// accounts, so a subscriber of every account receives every log.
const chainConfig = { seed: 1, chainId: 1, accounts: 8, confirmations: 6, blockIntervalMs: 12_000, logsPerBlock: { min: logs, max: logs } };
const lab = values['outbox-only']
  ? outboxOnly()
  : await startFeedLab({ chain: chainConfig, outboxPath: values.db, initialBlocks: blocks, streams: [{ name: 's1' }] });
let port = lab.publisher?.stream('s1').port ?? null;

/** The lab's chain, indexer and producer without its server (what lab.ts puts together, minus the publisher). */
function outboxOnly() {
  const chain = new SimChain(chainConfig);
  const indexer = new OutboxIndexer(values.db, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
  });
  const producer = new BlockProducer(chain, indexer, () => {});
  producer.mine(blocks);
  return {
    chain,
    producer,
    close: async () => {
      producer.stop();
      indexer.close();
    },
  };
}
let rawServer;
const rawSockets = new Set();
if (values.raw) {
  const reader = new OutboxReader(values.db);
  const rows = reader.read(() => reader.eventsAfter({ block: 0, logIndex: 0 }, lab.chain.accounts, blocks * logs + 1));
  reader.close();
  const stream = Buffer.from(rows.map((row) => encodeRealEvent(eventOf(row))).join(''));
  rawServer = createServer((socket) => {
    socket.setNoDelay(true);
    rawSockets.add(socket);
    socket.on('close', () => rawSockets.delete(socket));
    socket.on('error', () => {});
    let asked = false;
    socket.on('data', () => {
      if (asked) return;
      asked = true;
      socket.write(stream);
    });
  });
  await new Promise((resolve) => rawServer.listen(0, '127.0.0.1', resolve));
  port = rawServer.address().port;
}
say({ port, chainId: lab.chain.chainId, accounts: lab.chain.accounts, genesisHash: lab.chain.canonicalAt(0).hash, events: blocks * logs });

function mineLive(count, intervalMs) {
  const start = now();
  let k = 0;
  const tick = () => {
    const [change] = lab.producer.step();
    say({ block: lab.chain.head.number, t: now(), events: change.kind === 'block' ? change.block.logs.length : logs });
    k++;
    if (k >= count) return say({ mined: true });
    // A fixed schedule: a slow tick does not push every later block back.
    setTimeout(tick, Math.max(0, start + (k + 1) * intervalMs - now()));
  };
  setTimeout(tick, intervalMs);
}

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  // The kernel updates the high-water mark lazily: it can trail the current RSS by a few pages.
  const rssMiB = process.memoryUsage().rss / MiB;
  say({ maxRssMiB: Math.max(process.resourceUsage().maxRSS / 1024, rssMiB), rssMiB });
  rawServer?.close();
  for (const socket of rawSockets) socket.destroy();
  await lab.close(200);
  process.exit(0);
}
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const command = JSON.parse(line);
  if (command.live !== undefined) mineLive(command.live, command.intervalMs);
  if (command.stop) void stop();
});
input.on('close', () => void stop());
process.on('SIGTERM', () => void stop());
