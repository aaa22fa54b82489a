// The consumer's store is read only when it is a regular file the consumer itself wrote, with
// none of its SQL run and within bounds (harness/sandbox/store-file.ts), through both labs'
// readers. Each refusal is data and nothing the store points at is opened. The owner checks and
// the reads with the consumer's rights need root; they skip without it.

import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { readFeedStore } from '../../../harness/labs/feed/check/store-reader.js';
import { readStore } from '../../../harness/labs/ledger/check/store-reader.js';
import { asOwner, readGuarded, type StoreGuard } from '../../../harness/sandbox/store-file.js';

const isRoot = process.geteuid?.() === 0;
const OTHER = 61_099; // a sandbox-range uid no run of this test holds

function ledgerStore(path: string, rows = 1, sql?: string): void {
  const db = new Database(path);
  db.exec(sql ?? 'CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER)');
  db.exec(`INSERT INTO checkpoint VALUES (1, ${rows - 1}, ${rows})`);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows - 1}) INSERT INTO ledger SELECT i, 1 FROM n`);
  db.close();
}

function room(t: Test): { dir: string; db: string; guard: StoreGuard } {
  const dir = t.testdir();
  return { dir, db: join(dir, 'consumer.db'), guard: { rooms: [dir], limitBytes: 64 * 1024 ** 2 } };
}

t.test('a regular file of the consumer is read; a missing one is absent', async (t) => {
  const { db, guard } = room(t);
  t.same(readStore(db, { guard }), { exists: false, checkpoint: [], ledger: [] });
  ledgerStore(db, 3);
  t.same(readStore(db, { guard, maxRows: 10 }), {
    exists: true,
    checkpoint: [{ id: 1, last: 2, total: 3 }],
    ledger: [
      [0, 1],
      [1, 1],
      [2, 1],
    ],
  });
});

t.test('a symbolic link is refused, and what it points at is never opened', async (t) => {
  const { dir, db, guard } = room(t);
  // A FIFO behind the link: opening it would block this test forever.
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  symlinkSync('pipe', db);
  const store = readStore(db, { guard });
  t.match(store, { exists: true, refused: { kind: 'symlink', file: 'consumer.db', detail: 'to pipe' }, checkpoint: [], ledger: [] });
  t.match(store.error, /not read: consumer\.db is a symbolic link \(to pipe\)/);
  const dangling = join(dir, 'dangling.db');
  symlinkSync('../../control.db', dangling);
  t.match(readStore(dangling, { guard }), { refused: { kind: 'symlink', detail: 'to ../../control.db' } }, 'a dangling link is a link, not an absent file');
});

t.test('a hard link (two names for one file) is refused', async (t) => {
  const { dir, db, guard } = room(t);
  ledgerStore(join(dir, 'real.db'));
  linkSync(join(dir, 'real.db'), db);
  t.match(readStore(db, { guard }), { refused: { kind: 'hard-link', detail: '2 names for one file' }, ledger: [] });
});

t.test('a FIFO is refused at once, without blocking', async (t) => {
  const { db, guard } = room(t);
  execFileSync('mkfifo', [db]);
  const from = performance.now();
  t.match(readStore(db, { guard }), { refused: { kind: 'fifo' } });
  t.match(readFeedStore(db, { guard }), { refused: { kind: 'fifo' } }, 'the feed reader too');
  t.ok(performance.now() - from < 1000, 'at once');
});

t.test('a socket and a folder are refused', async (t) => {
  // A socket's path must fit in 108 bytes (longer ones are cut short where the socket is made),
  // and a test folder's path does not: this room is a short folder of its own.
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-sock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'consumer.db');
  const guard = { rooms: [dir], limitBytes: 64 * 1024 ** 2 };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(db, resolve));
  t.teardown(() => server.close());
  t.match(readStore(db, { guard }), { refused: { kind: 'socket' } });
  const folder = join(dir, 'folder.db');
  mkdirSync(folder);
  t.match(readStore(folder, { guard }), { refused: { kind: 'directory' } });
});

t.test('a sidecar that is not a regular file is refused too (SQLite would open it)', async (t) => {
  const { dir, db, guard } = room(t);
  ledgerStore(db);
  writeFileSync(join(dir, 'secret'), 'x');
  symlinkSync('secret', `${db}-wal`);
  t.match(readStore(db, { guard }), { refused: { kind: 'symlink', file: 'consumer.db-wal' } });
});

t.test('a store outside the consumer room is refused', async (t) => {
  const { dir, guard } = room(t);
  mkdirSync(join(dir, 'elsewhere'));
  const db = join(dir, 'elsewhere', 'consumer.db');
  ledgerStore(db);
  t.match(readStore(db, { guard }), { refused: { kind: 'not-in-room' } });
});

t.test('sealed: a file the consumer does not own is refused; unsealed, the owner is not asked', { skip: !isRoot && 'needs root (chown)' }, async (t) => {
  const { db, guard } = room(t);
  ledgerStore(db);
  chownSync(db, 12_345, 12_345);
  t.match(readStore(db, { guard: { ...guard, owner: { uid: OTHER, gid: OTHER } } }), {
    refused: { kind: 'not-owned', detail: `owned by uid 12345, not the consumer's ${OTHER}` },
  });
  t.match(readStore(db, { guard }), { exists: true, checkpoint: [{ id: 1 }] });
});

t.test('a store larger than the limit is refused before it is opened', async (t) => {
  const { dir, db, guard } = room(t);
  ledgerStore(db, 5000);
  const store = readStore(db, { guard: { ...guard, limitBytes: 10 * 1024 } });
  t.match(store, { refused: { kind: 'too-large', detail: /^store is \d+ KiB, the limit is 10 KiB$/ }, ledger: [] });
  // The WAL counts: a small file with a large WAL is as large.
  const walDb = join(dir, 'wal.db');
  const writer = new Database(walDb);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER)');
  writer.exec('WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999) INSERT INTO ledger SELECT i, 1 FROM n');
  t.teardown(() => writer.close());
  t.match(readStore(walDb, { guard: { rooms: [dir], limitBytes: 20_000 } }), { refused: { kind: 'too-large' } }, 'file + WAL');
});

t.test('more rows than the bound are refused before any is selected', async (t) => {
  const { db, guard } = room(t);
  ledgerStore(db, 101);
  t.match(readStore(db, { guard, maxRows: 100 }), { refused: { kind: 'too-many-rows', detail: 'ledger holds 101 rows, the limit for this scenario is 100' } });
  t.match(readStore(db, { guard, maxRows: 101 }), { exists: true, checkpoint: [{ id: 1 }] });
});

t.test('a view bomb is refused in milliseconds, never run', async (t) => {
  const { db, guard } = room(t);
  const writer = new Database(db);
  writer.exec(
    'CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER); ' +
      'CREATE VIEW checkpoint AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT 1 AS id, max(i) AS last, 0 AS total FROM n',
  );
  writer.close();
  const from = performance.now();
  t.match(readStore(db, { guard }), { refused: { kind: 'not-a-table', detail: 'checkpoint is a view' } });
  t.ok(performance.now() - from < 1000, `refused in ${(performance.now() - from).toFixed(0)} ms`);
});

t.test('a virtual table and a generated column are refused', async (t) => {
  const { dir, guard } = room(t);
  const virtual = join(dir, 'virtual.db');
  const a = new Database(virtual);
  a.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE VIRTUAL TABLE ledger USING fts5(seq, delta)');
  a.close();
  t.match(readStore(virtual, { guard: { ...guard, rooms: [dir] } }), { refused: { kind: 'not-a-table', detail: 'ledger is a virtual table' } });
  const generated = join(dir, 'generated.db');
  const b = new Database(generated);
  b.exec(
    'CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER AS (last + 1)); CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER)',
  );
  b.close();
  t.match(readStore(generated, { guard }), { refused: { kind: 'generated-column', detail: 'checkpoint.total is a generated column' } });
  const feed = join(dir, 'feed.db');
  const c = new Database(feed);
  c.exec(
    'CREATE TABLE feed_state (id INTEGER PRIMARY KEY, cursor TEXT, block_hash TEXT, snapshot_cursor TEXT, snapshot_block_hash TEXT); ' +
      'CREATE VIEW feed_events AS SELECT 1 AS cursor, 2 AS type, 3 AS payload; CREATE TABLE feed_balances (account TEXT, amount TEXT)',
  );
  c.close();
  t.match(
    readFeedStore(feed, { guard }),
    { refused: { kind: 'not-a-table', detail: 'feed_events is a view' }, events: [] },
    'the feed reader checks its tables too',
  );
});

t.test('extra columns (in any order, generated ones too) and extra tables are allowed: only the named columns are read', async (t) => {
  const { dir, guard } = room(t);
  const ledger = join(dir, 'ledger.db');
  const a = new Database(ledger);
  a.exec(
    "CREATE TABLE checkpoint (note TEXT DEFAULT 'x', total INTEGER, id INTEGER PRIMARY KEY, last INTEGER, last_plus AS (last + 1)); " +
      'CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER, at TEXT); CREATE TABLE my_log (line TEXT); ' +
      "INSERT INTO checkpoint (id, last, total) VALUES (1, 1, 12); INSERT INTO ledger VALUES (0, 7, 'a'), (1, 5, 'b'); INSERT INTO my_log VALUES ('hi')",
  );
  a.close();
  t.same(readStore(ledger, { guard }), {
    exists: true,
    checkpoint: [{ id: 1, last: 1, total: 12 }],
    ledger: [
      [0, 7],
      [1, 5],
    ],
  });
  const feed = join(dir, 'feed.db');
  const b = new Database(feed);
  b.exec(
    'CREATE TABLE feed_state (id INTEGER PRIMARY KEY CHECK (id = 1), cursor TEXT, block_hash TEXT, snapshot_cursor TEXT, snapshot_block_hash TEXT, updated_at TEXT); ' +
      'CREATE TABLE feed_events (received_at TEXT, cursor TEXT PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL); ' +
      'CREATE TABLE feed_balances (account TEXT PRIMARY KEY, amount TEXT NOT NULL, seen INTEGER DEFAULT 0); CREATE TABLE outbox (msg TEXT); ' +
      "INSERT INTO feed_state VALUES (1, '1:00000000000011:0000', '0x0b', '1:00000000000010:0000', '0x0a', 'now'); " +
      "INSERT INTO feed_events VALUES ('now', '1:00000000000011:0000', 'Transfer', '{}'); INSERT INTO feed_balances (account, amount) VALUES ('0xa', '5')",
  );
  b.close();
  t.match(readFeedStore(feed, { guard }), {
    exists: true,
    state: [{ id: 1, cursor: '1:00000000000011:0000', block_hash: '0x0b', snapshot_cursor: '1:00000000000010:0000', snapshot_block_hash: '0x0a' }],
    events: [['1:00000000000011:0000', 'Transfer', '{}']],
    balances: [['0xa', '5']],
  });
  t.notOk('error' in readFeedStore(feed, { guard }) || 'refused' in readFeedStore(feed, { guard }), 'neither refused nor an error');
});

t.test('a file swapped while it is read is refused', async (t) => {
  const { dir, db, guard } = room(t);
  ledgerStore(db);
  ledgerStore(join(dir, 'other.db'));
  const read = readGuarded(db, guard, () => {
    renameSync(join(dir, 'other.db'), db); // what a consumer's leftover process could do meanwhile
    return 'read';
  });
  t.match(read, { refused: { kind: 'changed-while-read', detail: 'another file took its name while the harness read it' } });
  const gone = readGuarded(db, guard, () => {
    renameSync(db, join(dir, 'moved.db'));
    symlinkSync('moved.db', db);
    throw new Error('unable to open database file');
  });
  t.match(gone, { refused: { kind: 'changed-while-read', detail: 'it became a symlink while the harness read it' } });
});

t.test('sealed: the read runs with the consumer rights, and root comes back after', { skip: !isRoot && 'needs root' }, async (t) => {
  // A folder every uid can pass (the test folder's ancestors may not be).
  const dir = mkdtempSync(join(tmpdir(), 'store-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  const open = join(dir, 'open.db');
  ledgerStore(open);
  chmodSync(open, 0o644);
  const secret = join(dir, 'secret.db');
  ledgerStore(secret);
  chmodSync(secret, 0o640); // root's group may read it: a supplementary group left in place would
  const owner = { uid: OTHER, gid: OTHER };
  t.doesNotThrow(() => asOwner(owner, () => new Database(open, { readonly: true, fileMustExist: true }).close()), 'a file the consumer may read is read');
  t.throws(() => asOwner(owner, () => new Database(secret, { readonly: true, fileMustExist: true }).close()), /unable to open database file/);
  t.equal(process.geteuid!(), 0, 'euid back to root');
  t.equal(process.getegid!(), 0, 'egid back to root');
  t.ok(process.getgroups!().includes(0), 'groups back');
  t.equal(
    asOwner(owner, () => process.geteuid!()),
    OTHER,
    'inside, the effective uid is the consumer',
  );
  t.throws(
    () =>
      asOwner(owner, () => {
        throw new Error('boom');
      }),
    /boom/,
  );
  t.equal(process.geteuid!(), 0, 'root back after a throw too');
});
