// Mutant "reset-on-open": opening the store resets the checkpoint row to (1, -1, 0) with
// `INSERT OR REPLACE` (the ledger is kept).
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「open_storeは既存の行を初期値で上書きしません。再起動のたびにlast=-1へ初期化すると、
//     ファイルを使う意味がなくなります。」
//   "open_store does not overwrite an existing row with the initial values. If you reset
//    last to -1 on every restart, there is no point in using the file."
//
// On a fresh file the row is (1, -1, 0) anyway, so a single happy run is perfect — a near
// miss. On a restart the process sends `RESUME -1` although the file says otherwise, and the
// redelivered events then collide with the ledger rows that are still there (event 0
// arrives as "new" and its INSERT fails on the primary key; an event past 0 is a gap).
// Killed by: ack-crash — its transcript expects `RESUME 1` from the restarted process; this
// one sends `RESUME -1` and cannot finish the stream.
// Python twin: consumer/ledger/mutants/reset-on-open.py.
import { main, openStore } from '../typescript/ledger-client.js';

await main({
  openStore(path) {
    const db = openStore(path);
    db.exec('INSERT OR REPLACE INTO checkpoint(id, last, total) VALUES (1, -1, 0)'); // BUG: "start clean"
    return db;
  },
});
