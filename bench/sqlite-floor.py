# The Python reference's floor for streaming throughput (bench/sqlite-floor.mjs in Python's
# stdlib sqlite3): one transaction per event, nothing else.
#   python3 bench/sqlite-floor.py <db> <events> [default|wal]   prints the seconds it took
import sqlite3, sys, time

db, count = sys.argv[1], int(sys.argv[2])
durability = sys.argv[3] if len(sys.argv) > 3 else "default"
con = sqlite3.connect(db, isolation_level=None)
if durability == "wal":
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
con.executescript("""CREATE TABLE IF NOT EXISTS checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL);
INSERT OR IGNORE INTO checkpoint(id, last, total) VALUES (1, -1, 0);""")
t0 = time.perf_counter()
for seq in range(count):
    con.execute("BEGIN IMMEDIATE")
    last, total = con.execute("SELECT last, total FROM checkpoint WHERE id = 1").fetchone()
    con.execute("INSERT INTO ledger(seq, delta) VALUES (?, ?)", (seq, seq % 21 - 10))
    con.execute("UPDATE checkpoint SET last = ?, total = ? WHERE id = 1", (seq, total + seq % 21 - 10))
    con.execute("COMMIT")
print(time.perf_counter() - t0)
con.close()
