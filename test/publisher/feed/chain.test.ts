import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { mulberry32 } from '../../../harness/scenario/generate.js';
import { MAX_UINT256 } from '../../../protocol/feed/amount.js';
import { type Block, SimChain } from '../../../publisher/feed/chain/chain.js';
import { OutboxIndexer } from '../../../publisher/feed/outbox/indexer.js';
import { OutboxReader } from '../../../publisher/feed/outbox/reader.js';
import type { OutboxRow } from '../../../publisher/feed/outbox/schema.js';
import { Prng } from '../../../publisher/feed/chain/prng.js';
import { BlockProducer } from '../../../publisher/feed/chain/producer.js';
import { ManualScheduler } from '../../../publisher/feed/server/scheduler.js';

const ACCOUNT_RE = /^0x[0-9a-f]{40}$/;
const HASH_RE = /^0x[0-9a-f]{64}$/;

/** A chain and its indexer on a fresh outbox file. */
function lab(t: Test, seed: number, options: { confirmations?: number; retentionMs?: number; logs?: { min: number; max: number } } = {}) {
  const chain = new SimChain({ seed, confirmations: options.confirmations ?? 3, logsPerBlock: options.logs ?? { min: 1, max: 5 } });
  const path = join(t.testdir(), 'outbox.db');
  const indexer = new OutboxIndexer(path, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
    retentionMs: options.retentionMs,
  });
  const db = new Database(path, { readonly: true });
  t.teardown(() => {
    db.close();
    indexer.close();
  });
  const mine = (n: number) => {
    for (let i = 0; i < n; i++) indexer.apply(chain.mine());
  };
  return { chain, indexer, db, path, mine };
}

/** Every log of the canonical chain as the outbox should hold it. */
function expectedRows(chain: SimChain, fromBlock = 1): Partial<OutboxRow>[] {
  const rows: Partial<OutboxRow>[] = [];
  for (let n = fromBlock; n <= chain.head.number; n++) {
    const block = chain.canonicalAt(n)!;
    for (const log of block.logs) {
      rows.push({
        block_number: n,
        log_index: log.logIndex,
        block_hash: block.hash,
        tx_hash: log.txHash,
        type: log.type,
        from_account: log.from,
        to_account: log.to,
        amount: log.amount.toString(),
      });
    }
  }
  return rows;
}

const outboxRows = (db: Database.Database) =>
  db
    .prepare('SELECT block_number, log_index, block_hash, tx_hash, type, from_account, to_account, amount FROM outbox ORDER BY block_number, log_index')
    .all() as Partial<OutboxRow>[];

const safeBalances = (db: Database.Database) =>
  new Map((db.prepare('SELECT account, amount FROM safe_balances').all() as { account: string; amount: string }[]).map((r) => [r.account, BigInt(r.amount)]));

t.test('the PRNG is mulberry32, as the scenario generator has it', async (t) => {
  for (const seed of [0, 1, 42, 0xffff_ffff]) {
    const ours = new Prng(seed);
    const theirs = mulberry32(seed);
    t.same(
      Array.from({ length: 5 }, () => ours.next()),
      Array.from({ length: 5 }, () => theirs()),
      `seed ${seed}`,
    );
  }
  t.throws(() => new Prng(-1), RangeError);
  t.throws(() => new Prng(2 ** 32), RangeError);
  const p = new Prng(7);
  const draws = Array.from({ length: 500 }, () => p.bigintBelow(1000n));
  t.ok(
    draws.every((x) => x >= 0n && x < 1000n),
    'within [0, bound)',
  );
  t.ok(draws.some((x) => x >= 900n) && draws.some((x) => x < 100n), 'spread over the range');
  t.ok(
    Array.from({ length: 200 }, () => p.bigintBelow(MAX_UINT256)).some((x) => x > 1n << 200n),
    'the full uint256 range is reached',
  );
});

t.test('one seed, one chain: the same calls give the same blocks, logs and hashes', async (t) => {
  const run = (seed: number) => {
    const chain = new SimChain({ seed, confirmations: 4 });
    for (let i = 0; i < 30; i++) chain.mine();
    chain.reorg({ depth: 3, length: 4 });
    for (let i = 0; i < 5; i++) chain.mine();
    return chain;
  };
  const a = run(1);
  const b = run(1);
  const c = run(2);
  const summary = (chain: SimChain) =>
    JSON.stringify({ accounts: chain.accounts, blocks: chain.allBlocks(), genesis: [...chain.genesisBalances] }, (_k, v) =>
      typeof v === 'bigint' ? v.toString() : v,
    );
  t.equal(summary(a), summary(b), 'identical, abandoned branch included');
  t.not(summary(a), summary(c), 'another seed, another chain');
  t.not(a.accounts[0], c.accounts[0]);
  // Pinned: a change to the generator changes every scenario built on it, so it must not go unnoticed.
  t.equal(a.accounts[0], '0xa087eaf300b349c98706c4ebfb2627fdf7e79d2b');
  t.equal(a.canonicalAt(1)!.hash, firstBlock(1).hash, 'block 1 depends only on the seed');
  t.equal(firstBlock(1).hash, '0x9e33715ff5cae511a8fc199d806b8a09c9fffd534cafbc53f156e7fdf7eb2558');
});

function firstBlock(seed: number): Block {
  const change = new SimChain({ seed, confirmations: 4 }).mine();
  if (change.kind !== 'block') throw new Error('expected a block');
  return change.block;
}

t.test('chain shape: accounts, parent links, virtual time, log indexes, balances within uint256', async (t) => {
  const chain = new SimChain({ seed: 9, accounts: 6, confirmations: 2, blockIntervalMs: 2000, genesisTimeMs: 1000, logsPerBlock: { min: 0, max: 6 } });
  t.equal(chain.accounts.length, 6);
  t.ok(chain.accounts.every((a) => ACCOUNT_RE.test(a)));
  t.equal(new Set(chain.accounts).size, 6);
  const sum = (m: Map<string, bigint>) => [...m.values()].reduce((x, y) => x + y, 0n);
  t.equal(sum(new Map(chain.genesisBalances)), MAX_UINT256, 'the total supply is exactly 2^256-1');
  for (let i = 0; i < 150; i++) chain.mine();
  const seen = { bigAmount: false, zero: false, approval: false, selfTransfer: false, emptyBlock: false };
  const problems: string[] = [];
  for (let n = 1; n <= chain.head.number; n++) {
    const block = chain.canonicalAt(n)!;
    if (block.parentHash !== chain.canonicalAt(n - 1)!.hash) problems.push(`block ${n} does not link to block ${n - 1}`);
    if (block.timeMs !== 1000 + n * 2000) problems.push(`block ${n} at ${block.timeMs}`);
    if (!HASH_RE.test(block.hash)) problems.push(`block ${n} hash ${block.hash}`);
    if (block.logs.some((l, i) => l.logIndex !== i)) problems.push(`block ${n} log indexes`);
    if (block.logs.length === 0) seen.emptyBlock = true;
    for (const log of block.logs) {
      if (log.amount < 0n || log.amount > MAX_UINT256) problems.push(`amount ${log.amount} in block ${n}`);
      if (log.amount > 1n << 64n) seen.bigAmount = true;
      if (log.amount === 0n) seen.zero = true;
      if (log.type === 'Approval') seen.approval = true;
      if (log.type === 'Transfer' && log.from === log.to) seen.selfTransfer = true;
    }
  }
  t.same(problems, [], 'parent links, virtual time, hashes, log indexes, amounts');
  t.same(seen, { bigAmount: true, zero: true, approval: true, selfTransfer: true, emptyBlock: true }, 'the edge cases consumers must handle all occur');
  for (const n of [0, 50, 100, chain.head.number]) {
    const balances = chain.balancesAt(n);
    t.equal(sum(balances), MAX_UINT256, `supply conserved at block ${n}`);
    t.ok(
      [...balances.values()].every((v) => v >= 0n && v <= MAX_UINT256),
      `no balance leaves 0..2^256-1 at block ${n}`,
    );
  }
  t.equal(chain.safeHeight, chain.head.number - 2);
});

t.test('reorg: the last k blocks are replaced; every branch keeps its parent links', async (t) => {
  const chain = new SimChain({ seed: 3, confirmations: 4 });
  for (let i = 0; i < 20; i++) chain.mine();
  const before = Array.from({ length: 21 }, (_, n) => chain.canonicalAt(n)!);
  t.throws(() => chain.reorg({ depth: 5 }), /at or below the safe height 16/, 'depth 5 reaches block 16 = head - confirmations');
  t.throws(() => chain.reorg({ depth: 2, length: 1 }), /at least 2 blocks/, 'the head never moves back');
  t.throws(() => chain.reorg({ depth: 21, deep: true }), /depth must be 1\.\.20/, 'genesis stays');
  const change = chain.reorg({ depth: 4, length: 5 });
  if (change.kind !== 'reorg') throw new Error('expected a reorg');
  t.equal(change.forkNumber, 17);
  t.equal(change.deep, false);
  t.same(
    change.abandoned.map((b) => b.hash),
    before.slice(17).map((b) => b.hash),
  );
  t.equal(change.added.length, 5);
  t.equal(chain.head.number, 21);
  t.equal(change.added[0]!.parentHash, before[16]!.hash, 'the new branch starts at the fork parent');
  for (let i = 1; i < change.added.length; i++) t.equal(change.added[i]!.parentHash, change.added[i - 1]!.hash);
  for (let n = 0; n <= 16; n++) t.equal(chain.canonicalAt(n)!.hash, before[n]!.hash, `block ${n} untouched`);
  for (let n = 17; n <= 20; n++) t.not(chain.canonicalAt(n)!.hash, before[n]!.hash, `block ${n} replaced`);
  // The abandoned branch is still known, linked back to the chain.
  let block = chain.block(before[20]!.hash)!;
  while (chain.canonicalAt(block.number)?.hash !== block.hash) block = chain.block(block.parentHash)!;
  t.equal(block.number, 16, 'tracing the old head back meets the chain at the fork parent');
  t.ok(
    [...chain.balancesAt(chain.head.number).values()].every((v) => v >= 0n),
    'the new branch spends only what the fork parent held',
  );
  const deep = chain.reorg({ depth: 8, deep: true });
  t.equal(deep.kind === 'reorg' && deep.deep, true, 'a scripted deep reorg is marked deep');
});

t.test('indexer: the outbox holds exactly the canonical logs, through blocks and reorgs', async (t) => {
  const { chain, indexer, db, mine } = lab(t, 5, { confirmations: 3 });
  mine(12);
  t.same(outboxRows(db), expectedRows(chain));
  const reorg = chain.reorg({ depth: 3, length: 4 });
  indexer.apply(reorg);
  mine(2);
  t.same(outboxRows(db), expectedRows(chain), 'abandoned rows deleted, the new branch inserted');
  const blocks = db.prepare('SELECT number, hash, parent_hash, canonical FROM blocks ORDER BY rowid').all() as {
    number: number;
    hash: string;
    parent_hash: string;
    canonical: number;
  }[];
  t.equal(blocks.length, chain.allBlocks().length, 'every block of every branch is kept');
  t.same(
    blocks.map((row) => [row.number, row.parent_hash, row.canonical]),
    blocks.map((row) => [row.number, chain.block(row.hash)!.parentHash, chain.canonicalAt(row.number)?.hash === row.hash ? 1 : 0]),
    'parent links and canonical flags',
  );
  t.equal(blocks.filter((b) => b.canonical === 0).length, 3, 'the three abandoned blocks');
  t.match(db.prepare('SELECT fork_number, depth, added, deep FROM reorgs').all(), [{ fork_number: 10, depth: 3, added: 4, deep: 0 }]);
  const point = db.prepare('SELECT block_number, block_hash, log_index FROM safe_point').get() as {
    block_number: number;
    block_hash: string;
    log_index: number;
  };
  const safe = chain.canonicalAt(chain.safeHeight)!;
  t.same(
    point,
    { block_number: chain.safeHeight, block_hash: safe.hash, log_index: Math.max(0, safe.logs.length - 1) },
    "the snapshot cursor is the safe block's last log",
  );
  t.same(safeBalances(db), chain.balancesAt(chain.safeHeight), 'confirmed balances');
});

t.test('indexer: a deep reorg takes the abandoned confirmed logs back out of the confirmed balances', async (t) => {
  const { chain, indexer, db, mine } = lab(t, 6, { confirmations: 2 });
  mine(15);
  t.equal(chain.safeHeight, 13);
  indexer.apply(chain.reorg({ depth: 6, length: 6, deep: true }));
  t.same(safeBalances(db), chain.balancesAt(13), 'balances at the (new) safe height');
  t.equal((db.prepare('SELECT block_hash FROM safe_point').get() as { block_hash: string }).block_hash, chain.canonicalAt(13)!.hash);
  t.match(db.prepare('SELECT fork_number, deep FROM reorgs').get(), { fork_number: 10, deep: 1 });
  mine(3);
  t.same(safeBalances(db), chain.balancesAt(chain.safeHeight));
  t.same(outboxRows(db), expectedRows(chain));
});

t.test('retention: old confirmed rows go, each account keeps the greatest cursor pruned', async (t) => {
  const { chain, indexer, db, mine } = lab(t, 8, { confirmations: 3 });
  mine(20);
  const expectedPruned = (through: number) => {
    const greatest = new Map<string, [number, number]>();
    for (const row of expectedRows(chain).filter((r) => r.block_number! <= through)) {
      for (const account of [row.from_account!, row.to_account!]) greatest.set(account, [row.block_number!, row.log_index!]);
    }
    return greatest;
  };
  const pruned = () =>
    new Map(
      (db.prepare('SELECT account, block_number, log_index FROM pruned').all() as { account: string; block_number: number; log_index: number }[]).map((r) => [
        r.account,
        [r.block_number, r.log_index],
      ]),
    );
  const deleted = indexer.pruneThrough(8);
  t.equal(deleted, expectedRows(chain).filter((r) => r.block_number! <= 8).length);
  t.same(outboxRows(db), expectedRows(chain, 9), 'rows of blocks 1..8 are gone, the rest untouched');
  t.same(pruned(), expectedPruned(8));
  const quiet = chain.accounts.filter((a) => !expectedPruned(8).has(a));
  t.ok(pruned().size <= chain.accounts.length);
  for (const account of quiet) t.notOk(pruned().has(account), `${account} had no row pruned: no entry`);
  t.equal(indexer.pruneThrough(5), 0, 'retention never moves back');
  t.equal(indexer.pruneThrough(100) > 0, true);
  t.equal((db.prepare('SELECT pruned_through FROM chain').get() as { pruned_through: number }).pruned_through, chain.safeHeight, 'never above the safe height');
  t.same(outboxRows(db), expectedRows(chain, chain.safeHeight + 1), 'unconfirmed rows are kept');
  t.same(pruned(), expectedPruned(chain.safeHeight));
  t.throws(() => indexer.apply(chain.reorg({ depth: 5, deep: true })), /reaches into pruned history/);
});

t.test('retention by virtual time: rows older than the window behind the head', async (t) => {
  const { chain, db, mine } = lab(t, 10, { confirmations: 2, retentionMs: 5 * 12_000 });
  mine(12);
  // Head 12 at 12 x 12 s; the window keeps blocks younger than 5 intervals: 8..12 (and 7 is exactly 5 behind).
  t.equal((db.prepare('SELECT pruned_through FROM chain').get() as { pruned_through: number }).pruned_through, 6);
  t.same(outboxRows(db), expectedRows(chain, 7));
});

t.test('reader: hash locations, paging by (block, log index), pruned cursors, snapshots', async (t) => {
  const { chain, indexer, path, mine } = lab(t, 12, { confirmations: 2, logs: { min: 2, max: 2 } });
  mine(10);
  const oldHead = chain.head;
  indexer.apply(chain.reorg({ depth: 2 }));
  mine(1);
  const reader = new OutboxReader(path);
  t.teardown(() => reader.close());
  t.equal(reader.chainId, 1);
  t.same(reader.locate(chain.canonicalAt(4)!.hash), { kind: 'canonical', number: 4 });
  t.same(reader.locate(oldHead.hash), { kind: 'abandoned', number: 10, forkNumber: 9 });
  t.same(reader.locate(`0x${'9'.repeat(64)}`), { kind: 'unknown' });
  const all = chain.accounts;
  const page1 = reader.eventsAfter({ block: 0, logIndex: -1 }, all, 5);
  t.same(
    page1.map((r) => [r.block_number, r.log_index]),
    [
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
      [3, 0],
    ],
  );
  const page2 = reader.eventsAfter({ block: 3, logIndex: 0 }, all, 2);
  t.same(
    page2.map((r) => [r.block_number, r.log_index]),
    [
      [3, 1],
      [4, 0],
    ],
    '(block_number, log_index) > cursor',
  );
  const one = chain.accounts[3]!;
  const mine1 = reader.eventsAfter({ block: 0, logIndex: -1 }, [one], 1000);
  t.ok(
    mine1.every((r) => r.from_account === one || r.to_account === one),
    'only rows of the followed accounts',
  );
  t.equal(mine1.length, expectedRows(chain).filter((r) => r.from_account === one || r.to_account === one).length);
  t.same(
    reader.eventsBefore({ block: 3, logIndex: 0 }, all, 3).map((r) => [r.block_number, r.log_index]),
    [
      [1, 1],
      [2, 0],
      [2, 1],
    ],
  );
  t.same(reader.reorgsAfter(0), [{ id: 1, forkNumber: 9, depth: 2, added: 2, deep: false }]);
  t.equal(reader.latestReorgId(), 1);
  const snapshot = reader.safeSnapshot([one, `0x${'0'.repeat(40)}`]);
  t.same(snapshot, {
    blockNumber: 9,
    blockHash: chain.canonicalAt(9)!.hash,
    logIndex: 1,
    balances: [
      [one, chain.balancesAt(9).get(one)],
      [`0x${'0'.repeat(40)}`, 0n],
    ],
  });
  indexer.pruneThrough(4);
  const greatest = expectedRows(chain)
    .filter((r) => r.block_number! <= 4 && (r.from_account === one || r.to_account === one))
    .at(-1);
  if (greatest) {
    t.same(reader.prunedAfter({ block: 0, logIndex: -1 }, [one]), { account: one, position: { block: greatest.block_number, logIndex: greatest.log_index } });
    t.equal(reader.prunedAfter({ block: greatest.block_number!, logIndex: greatest.log_index! }, [one]), undefined, 'a reader that saw it is not behind');
  }
  t.equal(reader.prunedAfter({ block: 4, logIndex: 10_000 }, all), undefined);
});

t.test('block producer: one block per interval of compressed virtual time, scripted reorgs, then stop', async (t) => {
  const { chain, indexer, db } = lab(t, 14, { confirmations: 3 });
  const clock = new ManualScheduler();
  let signals = 0;
  const producer = new BlockProducer(chain, indexer, () => signals++, [{ afterBlock: 5, depth: 2, length: 3 }]);
  producer.run(clock, { compression: 12, untilBlock: 10 }); // 12 s of virtual time per block: one per real second
  clock.advance(999);
  t.equal(chain.head.number, 0, 'not before the first period');
  clock.advance(1);
  t.equal(chain.head.number, 1);
  t.equal(chain.head.timeMs - chain.genesis.timeMs, 12_000, 'virtual time moves one block interval per block');
  clock.advance(4000);
  t.equal(chain.head.number, 6, 'blocks 2..5, then the reorg scripted after block 5 added a block');
  t.match(db.prepare('SELECT fork_number, depth, added FROM reorgs').all(), [{ fork_number: 4, depth: 2, added: 3 }]);
  clock.advance(100_000);
  t.equal(chain.head.number, 10, 'mining stops at untilBlock');
  t.equal(signals, 9, 'one outbox signal per step');
  t.same(outboxRows(db), expectedRows(chain));
  producer.run(clock, { compression: 12 });
  clock.advance(2000);
  t.equal(chain.head.number, 12);
  producer.stop();
  clock.advance(10_000);
  t.equal(chain.head.number, 12, 'stopped');
  t.throws(() => producer.run(clock, { compression: 0 }), /period must be positive/);
});

t.test("reader: a query of one's own (rowsOf) inside read() sees the snapshot head() sees, not a later commit", async (t) => {
  const { path, mine } = lab(t, 5, { logs: { min: 2, max: 2 } });
  mine(4);
  const reader = new OutboxReader(path);
  t.teardown(() => reader.close());
  const seen = reader.read(() => {
    const head = reader.head().number;
    mine(1); // another connection commits block 5 meanwhile
    const top = reader.rowsOf<{ n: number }>('SELECT max(block_number) AS n FROM outbox WHERE chain_id = ?', reader.chainId)[0]!.n;
    return { head, top };
  });
  t.same(seen, { head: 4, top: 4 }, 'the commit made during the read is not in it: one snapshot for the page and the head');
  t.equal(reader.rowsOf<{ n: number }>('SELECT max(block_number) AS n FROM outbox')[0]!.n, 5, 'a later read sees it');
});

t.test('reader: the same queries asked again, in read() or not, see every later commit (each is compiled once)', async (t) => {
  const { chain, path, mine } = lab(t, 5, { logs: { min: 2, max: 2 } });
  mine(2);
  const reader = new OutboxReader(path);
  t.teardown(() => reader.close());
  const look = () => reader.read(() => ({ head: reader.head().number, events: reader.eventsAfter({ block: 0, logIndex: -1 }, chain.accounts, 100).length }));
  t.same(look(), { head: 2, events: 4 });
  mine(1);
  t.same(look(), { head: 3, events: 6 }, 'the next read sees block 3');
  mine(2);
  t.same([reader.head().number, look().head], [5, 5], 'outside read() too');
});
