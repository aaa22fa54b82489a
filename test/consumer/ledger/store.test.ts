// Reference consumers (compiled TS and Python) against a scripted publisher: store
// semantics — happy path, duplicates, conflicts, gaps, reopening, RESYNC, the seed's
// ack-crash, and "ACK only after COMMIT" observed through SQLite's own locking.
import t from 'tap';
import { join } from 'node:path';
import { EMPTY, commitBlockedScript, forEachConsumer, lockstep, readStore, runConsumer, seedStore, startServer, windowed } from '../../helpers/consumer-rig.js';

// Each case is a few short-lived processes that mostly wait on I/O; run them side by side.
t.jobs = 2;

forEachConsumer(t, 'happy path: RESUME -1, one ACK per event, ledger/total/last, exit 0', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, windowed(['EVENT 0 7\n', 'EVENT 1 -3\n', 'EVENT 2 1000\n', 'EVENT 3 0\n']));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 2', 'ACK 3']);
  t.same(readStore(db), {
    last: 3,
    total: 1004,
    ledger: [
      [0, 7],
      [1, -3],
      [2, 1000],
      [3, 0],
    ],
  });
  t.equal(server.conns.length, 1, 'one process = one connection');
});

forEachConsumer(t, 'exact duplicates are ACKed again and change nothing', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, windowed(['EVENT 0 5\n', 'EVENT 1 3\n', 'EVENT 1 3\n', 'EVENT 0 5\n', 'EVENT 2 -1\n']));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 1', 'ACK 0', 'ACK 2']);
  t.same(readStore(db), {
    last: 2,
    total: 7,
    ledger: [
      [0, 5],
      [1, 3],
      [2, -1],
    ],
  });
});

forEachConsumer(t, 'conflict: same seq, different delta -> no ACK, no change, close, non-zero', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 5\n', 'EVENT 1 3\n', 'EVENT 1 4\nEVENT 2 1\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.not(exit.code, 0);
  t.equal(exit.code, 4, `recommended code for a conflict; ${exit.stderr}`);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1']);
  t.ok(server.conns[0]!.closed, 'the consumer closed the connection');
  t.same(readStore(db), {
    last: 1,
    total: 8,
    ledger: [
      [0, 5],
      [1, 3],
    ],
  });
});

forEachConsumer(t, 'conflict: seq <= last with no ledger row (seeded by hand) -> no ACK, no change', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const seeded = {
    last: 2,
    total: 12,
    ledger: [
      [0, 5],
      [2, 7],
    ] as [number, number][],
  };
  seedStore(db, seeded.last, seeded.total, seeded.ledger);
  const server = await startServer(t, lockstep(['EVENT 1 4\nEVENT 3 1\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 4, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME 2']);
  t.same(readStore(db), seeded);
});

forEachConsumer(t, 'gap: seq > last + 1 -> no ACK, no change, close, non-zero', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 5\n', 'EVENT 2 3\nEVENT 1 1\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 3, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] });
});

forEachConsumer(t, 'reopening an existing store never resets the checkpoint; RESUME sends the stored last', async (t, c) => {
  const dir = t.testdir();
  // A store written by hand (no consumer ever touched it).
  const seededDb = join(dir, 'seeded.db');
  seedStore(seededDb, 4, 17, [
    [0, 1],
    [1, 2],
    [2, 3],
    [3, 4],
    [4, 7],
  ]);
  const s1 = await startServer(t, lockstep(['EVENT 5 3\n']));
  const e1 = await runConsumer(t, c, { port: s1.port, db: seededDb }).exit;
  await s1.scripts();
  t.equal(e1.code, 0, e1.stderr);
  t.same(s1.conns[0]!.lines, ['RESUME 4', 'ACK 5']);
  t.same(readStore(seededDb), {
    last: 5,
    total: 20,
    ledger: [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 7],
      [5, 3],
    ],
  });

  // A store the consumer created itself, reopened by a second process.
  const db = join(dir, 'consumer.db');
  const s2 = await startServer(t, async (conn, i) => {
    if (i === 0) return lockstep(['EVENT 0 2\n', 'EVENT 1 5\n'])(conn, i);
    return lockstep(['EVENT 2 -4\n'])(conn, i);
  });
  const first = await runConsumer(t, c, { port: s2.port, db }).exit;
  t.equal(first.code, 0, first.stderr);
  const second = await runConsumer(t, c, { port: s2.port, db }).exit;
  t.equal(second.code, 0, second.stderr);
  await s2.scripts();
  t.same(
    s2.conns.map((x) => x.lines),
    [
      ['RESUME -1', 'ACK 0', 'ACK 1'],
      ['RESUME 1', 'ACK 2'],
    ],
  );
  t.same(readStore(db), {
    last: 2,
    total: 3,
    ledger: [
      [0, 2],
      [1, 5],
      [2, -4],
    ],
  });
});

forEachConsumer(t, 'RESYNC -> exit 7, no state change', async (t, c) => {
  const dir = t.testdir();
  // As the first line after RESUME.
  const db = join(dir, 'first.db');
  seedStore(db, 1, 9, [
    [0, 4],
    [1, 5],
  ]);
  const s1 = await startServer(t, lockstep(['RESYNC 10\nEVENT 2 1\n'], 'wait'));
  const e1 = await runConsumer(t, c, { port: s1.port, db }).exit;
  await s1.scripts();
  t.equal(e1.code, 7, e1.stderr);
  t.same(s1.conns[0]!.lines, ['RESUME 1']);
  t.same(readStore(db), {
    last: 1,
    total: 9,
    ledger: [
      [0, 4],
      [1, 5],
    ],
  });
  // Wherever it appears: after some events, it still ends the session without a change.
  const db2 = join(dir, 'later.db');
  const s2 = await startServer(t, lockstep(['EVENT 0 3\n', 'RESYNC 0\nEVENT 1 1\n'], 'wait'));
  const e2 = await runConsumer(t, c, { port: s2.port, db: db2 }).exit;
  await s2.scripts();
  t.equal(e2.code, 7, e2.stderr);
  t.same(s2.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db2), { last: 0, total: 3, ledger: [[0, 3]] });
});

forEachConsumer(t, "the seed's ack-crash: exit@ack:1, then a second process resumes from 1", async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, async (conn, i) => {
    if (i === 0) return lockstep(['EVENT 0 7\n', 'EVENT 1 -2\n'], 'wait')(conn, i);
    // The publisher deliberately redelivers 1, then sends the new event 2.
    return windowed(['EVENT 1 -2\n', 'EVENT 2 5\n'])(conn, i);
  });
  const first = await runConsumer(t, c, { port: server.port, db, fault: 'exit@ack:1' }).exit;
  t.equal(first.code, 86, first.stderr);
  t.same(
    readStore(db),
    {
      last: 1,
      total: 5,
      ledger: [
        [0, 7],
        [1, -2],
      ],
    },
    '1 committed although never ACKed',
  );
  const second = await runConsumer(t, c, { port: server.port, db }).exit;
  t.equal(second.code, 0, second.stderr);
  await server.scripts();
  t.same(
    server.conns.map((x) => x.lines),
    [
      ['RESUME -1', 'ACK 0'],
      ['RESUME 1', 'ACK 1', 'ACK 2'],
    ],
  );
  t.same(readStore(db), {
    last: 2,
    total: 10,
    ledger: [
      [0, 7],
      [1, -2],
      [2, 5],
    ],
  });
});

forEachConsumer(t, 'ACK only after COMMIT: while a reader blocks the COMMIT, no ACK arrives', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const seen: { ackWhileLocked?: boolean } = {};
  const server = await startServer(t, commitBlockedScript(t, db, seen));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(seen.ackWhileLocked, false, 'no ACK 1 while the COMMIT of 1 could not finish');
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1'], 'ACK 1 after the lock was released');
  t.same(readStore(db), {
    last: 1,
    total: 3,
    ledger: [
      [0, 1],
      [1, 2],
    ],
  });
});

forEachConsumer(t, 'publisher closes right after RESUME: store created as (1, -1, 0), exit 0', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, async (conn) => {
    await conn.lineCount(1);
    conn.end();
    await conn.closedWithin();
  });
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1']);
  t.same(readStore(db), EMPTY);
});
