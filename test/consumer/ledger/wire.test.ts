// Reference consumers (compiled TS and Python) as real processes: the strict line grammar.
// A bad line closes the connection at once: nothing of it, and nothing after it, is
// applied or acknowledged.
import t from 'tap';
import { join } from 'node:path';
import { EMPTY, forEachConsumer, lockstep, readStore, runConsumer, startServer } from '../../helpers/consumer-rig.js';

t.jobs = 2;

// Each bad line follows a good EVENT 0 and is followed, in the same write, by the good
// line `EVENT 1 2`: a consumer that skipped or repaired the bad line would ACK 1.
const MALFORMED: [string, Buffer][] = [
  ['CRLF', Buffer.from('EVENT 1 5\r\n')],
  ['leading zero in seq', Buffer.from('EVENT 01 5\n')],
  ['leading zero in delta', Buffer.from('EVENT 1 05\n')],
  ["'+' sign", Buffer.from('EVENT 1 +5\n')],
  ['-0', Buffer.from('EVENT 1 -0\n')],
  ['delta 1001', Buffer.from('EVENT 1 1001\n')],
  ['delta -1001', Buffer.from('EVENT 1 -1001\n')],
  ['double space', Buffer.from('EVENT 1  5\n')],
  ['tab', Buffer.from('EVENT\t1 5\n')],
  ["lowercase 'event'", Buffer.from('event 1 5\n')],
  ['extra field', Buffer.from('EVENT 1 5 6\n')],
  ['trailing space', Buffer.from('EVENT 1 5 \n')],
  ['empty line', Buffer.from('\n')],
  ['non-ASCII digit (U+FF11)', Buffer.from('EVENT \uff11 5\n', 'utf8')],
  ['non-ASCII byte 0xff', Buffer.from([...Buffer.from('EVENT 1 5'), 0xff, 0x0a])],
  ['NUL byte', Buffer.from('EVENT 1 5\0\n')],
  ['ACK instead of EVENT', Buffer.from('ACK 1\n')],
];

forEachConsumer(t, 'malformed lines: close at once, nothing of it or after it, exit 2', async (t, c) => {
  const dir = t.testdir();
  for (const [i, [name, bad]] of MALFORMED.entries()) {
    const db = join(dir, `consumer-${i}.db`);
    const server = await startServer(t, lockstep([Buffer.from('EVENT 0 5\n'), Buffer.concat([bad, Buffer.from('EVENT 1 2\n')])], 'wait'));
    const exit = await runConsumer(t, c, { port: server.port, db }).exit;
    await server.scripts();
    t.equal(exit.code, 2, `${name}: exit 2 (${exit.stderr.trim()})`);
    t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0'], `${name}: no ACK for it or after it`);
    t.ok(server.conns[0]!.closed, `${name}: connection closed by the consumer`);
    t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] }, `${name}: store unchanged`);
  }
});

forEachConsumer(t, 'a 65-byte line is refused for its length', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const line = `EVENT 1${'0'.repeat(55)} 5\n`; // grammatical apart from its length
  t.equal(Buffer.byteLength(line), 65);
  const server = await startServer(t, lockstep(['EVENT 0 5\n', `${line}EVENT 1 2\n`], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 2, exit.stderr);
  t.match(exit.stderr, /\b64\b/, 'the reason is the 64-byte limit');
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] });
});

forEachConsumer(t, 'seq too large to store: no change, no ACK, non-zero', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 5\n', 'EVENT 99999999999999999999 5\nEVENT 1 2\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.ok(exit.code === 2 || exit.code === 3, `malformed or gap (${exit.code}): ${exit.stderr}`);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] });
});

forEachConsumer(t, 'boundary values are accepted (delta -1000, 1000, 0)', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 -1000\n', 'EVENT 1 1000\n', 'EVENT 2 0\n', 'EVENT 3 -1\n']));
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 2', 'ACK 3']);
  t.same(readStore(db), {
    last: 3,
    total: -1,
    ledger: [
      [0, -1000],
      [1, 1000],
      [2, 0],
      [3, -1],
    ],
  });
});

forEachConsumer(t, '10 KiB without LF, connection kept open: the consumer closes without waiting', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  let sentAt = 0;
  const server = await startServer(t, async (conn) => {
    if (!(await conn.lineCount(1))) return;
    conn.send('EVENT 0 5\n');
    if (!(await conn.lineCount(2))) return;
    sentAt = Date.now();
    conn.send(`EVENT 1 2${'7'.repeat(10 * 1024)}`); // never an LF, never a close from us
    await conn.closedWithin(15000);
  });
  // A timeout this long would make "waited for more" obvious.
  const exit = await runConsumer(t, c, { port: server.port, db, timeoutMs: 20000 }).exit;
  await server.scripts();
  t.equal(exit.code, 2, exit.stderr);
  t.ok(sentAt > 0 && exit.endedAt - sentAt < 5000, `closed within 5 s of the junk (took ${exit.endedAt - sentAt} ms)`);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] });
});

forEachConsumer(t, 'final fragment without LF, then the publisher closes: non-zero, nothing applied', async (t, c) => {
  const dir = t.testdir();
  // Only a fragment.
  const db = join(dir, 'only.db');
  const s1 = await startServer(t, async (conn) => {
    if (!(await conn.lineCount(1))) return;
    conn.send('EVENT 0 7');
    conn.end();
    await conn.closedWithin();
  });
  const e1 = await runConsumer(t, c, { port: s1.port, db }).exit;
  await s1.scripts();
  t.not(e1.code, 0);
  t.equal(e1.code, 2, e1.stderr);
  t.same(s1.conns[0]!.lines, ['RESUME -1']);
  t.same(readStore(db), EMPTY);
  // A fragment after a good line: the good one stays, the fragment is not applied.
  const db2 = join(dir, 'after.db');
  const s2 = await startServer(t, async (conn) => {
    if (!(await conn.lineCount(1))) return;
    conn.send('EVENT 0 7\n');
    if (!(await conn.lineCount(2))) return;
    conn.send('EVENT 1 2');
    conn.end();
    await conn.closedWithin();
  });
  const e2 = await runConsumer(t, c, { port: s2.port, db: db2 }).exit;
  await s2.scripts();
  t.equal(e2.code, 2, e2.stderr);
  t.same(s2.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db2), { last: 0, total: 7, ledger: [[0, 7]] });
});

forEachConsumer(t, 'lines split across TCP writes are joined; no line, no action', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, async (conn) => {
    if (!(await conn.lineCount(1))) return;
    conn.send('EVENT 0 ');
    await new Promise((r) => setTimeout(r, 150));
    const early = conn.lines.length; // nothing may be ACKed before the LF
    conn.send('3\nEVENT 1');
    await new Promise((r) => setTimeout(r, 150));
    conn.send(' 4\n');
    await conn.lineCount(3);
    conn.end();
    await conn.closedWithin();
    if (early !== 1) conn.lines.unshift('EARLY ACK');
  });
  const exit = await runConsumer(t, c, { port: server.port, db }).exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1']);
  t.same(readStore(db), {
    last: 1,
    total: 7,
    ledger: [
      [0, 3],
      [1, 4],
    ],
  });
});
