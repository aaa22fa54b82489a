// The in-process floor of streaming throughput (§4): the reference consumer's transaction per
// event (BEGIN IMMEDIATE, read last, insert, update, COMMIT) in a loop, with nothing else.
//   node bench/sqlite-floor.mjs <db> <events> [default|wal]   prints the seconds it took
import Database from 'better-sqlite3';

const [db, count, durability = 'default'] = process.argv.slice(2);
const store = new Database(db);
// WAL persists in the file; better-sqlite3's SQLite defaults to synchronous=NORMAL under WAL, set here anyway.
if (durability === 'wal') {
  store.pragma('journal_mode = WAL');
  store.pragma('synchronous = NORMAL');
}
store.exec(`CREATE TABLE IF NOT EXISTS checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL);
            INSERT OR IGNORE INTO checkpoint(id, last, total) VALUES (1, -1, 0);`);
const last = store.prepare('SELECT last, total FROM checkpoint WHERE id = 1');
const insert = store.prepare('INSERT INTO ledger(seq, delta) VALUES (?, ?)');
const update = store.prepare('UPDATE checkpoint SET last = ?, total = ? WHERE id = 1');
const t0 = process.hrtime.bigint();
for (let seq = 0; seq < Number(count); seq++) {
  store.exec('BEGIN IMMEDIATE');
  const row = last.get();
  insert.run(seq, (seq % 21) - 10);
  update.run(seq, row.total + (seq % 21) - 10);
  store.exec('COMMIT');
}
console.log(Number(process.hrtime.bigint() - t0) / 1e9);
store.close();
