// The feed lab end to end: the real CLI, the real Toxiproxy, both reference consumers as real
// long-running processes, real SQLite files. Every shipped feed scenario must pass both; the
// journal must show what each scenario is about (the cut and the replay after it, the resends,
// the crashes and the durable cursors after them), and nothing may be left running.
import t, { type Test } from 'tap';
import type { JournalEntry } from '../../harness/record/journal.js';
import { chaoslab, onlyRun, survivors } from '../helpers/cli.js';

t.setTimeout(1_200_000);

// The TypeScript reference passes feed-happy-path and feed-acceptance in make test's mutant
// matrix (test/e2e/matrix.test.ts: the references pass the happy path and every killer), and
// what a consumer does there (a null cursor at first, a pong for each ping) is its direct test's
// (test/consumer/feed/consumer.test.ts, both languages): those two run the Python reference
// only here, 26 s of a chain less. What this file checks of the journal holds whichever consumer.
const consumers = [
  { name: 'TypeScript reference', args: [] as string[], inMatrix: true },
  { name: 'Python reference', args: ['--consumer', 'python3 consumer/feed/python/client.py'], inMatrix: false },
];

type Wire = Extract<JournalEntry, { type: 'wire' }>;
const wire = (journal: JournalEntry[], stream = 'consumer'): Wire[] => journal.filter((e): e is Wire => e.type === 'wire' && e.stream === stream);
const lineOf = (e: Wire): string => ('line' in e ? e.line : '');
const blockOf = (line: string): number => Number(/"cursor":"\d+:(\d{14}):/.exec(line)?.[1] ?? -1);
const sentEvents = (journal: JournalEntry[], conn: number): string[] =>
  wire(journal)
    .filter((e) => e.conn === conn && e.kind === 'send' && lineOf(e).startsWith('{"op":"event"'))
    .map(lineOf);
const subscribeOf = (journal: JournalEntry[], conn: number): { cursor: string | null; blockHash: string | null } => {
  const line = wire(journal).find((e) => e.conn === conn && e.kind === 'recv' && /"op"\s*:\s*"subscribe"/.test(lineOf(e)));
  return JSON.parse(line ? lineOf(line) : 'null');
};

async function run(t: Test, scenario: string, args: string[]): Promise<JournalEntry[]> {
  const reports = t.testdir();
  const result = await chaoslab(['run', scenario, '--reports', reports, ...args], { timeout: 180_000 });
  t.equal(result.exitCode, 0, `exit 0\n${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, new RegExp(`PASS {2}${scenario}`));
  const { journal } = onlyRun(reports);
  t.match(
    journal.find((e) => e.type === 'verdict'),
    { verdict: { status: 'pass', findings: [], harnessErrors: [] } },
  );
  const final = journal.find((e) => e.type === 'store-read' && e.role === 'consumer' && e.when === 'final');
  t.match(final, { db: /\/rooms\/consumer\/consumer\.db$/ }, "the consumer's database is in its own room");
  const stops = journal.filter((e) => e.type === 'fault' && /^end-of-run/.test(e.name));
  t.equal(stops.length, 2, 'both consumers got SIGTERM at the end');
  const exits = journal.filter((e) => e.type === 'process-exit');
  t.ok(
    exits
      .filter((e) => e.type === 'process-exit' && (e.role === 'control' || e === exits.at(-1)))
      .every((e) => e.type === 'process-exit' && e.code === 0 && !e.killedBy),
    'the control and the last consumer process exit 0 on their own',
  );
  t.same(survivors(journal), [], 'no consumer, control or toxiproxy process left');
  return journal;
}

/** The 30 s cut: the connection dies at the cut, the next one subscribes with a durable cursor and gets the blocks mined meanwhile. */
function cutAndReplay(t: Test, journal: JournalEntry[]): void {
  const down = journal.find((e) => e.type === 'fault' && e.name === 'cut-30s' && e.action === 'apply');
  const up = journal.find((e) => e.type === 'fault' && e.name === 'cut-30s' && e.action === 'lift');
  t.ok(down && up, 'the proxy went down and came back');
  if (!down || !up) return;
  t.match(up, { detail: /before block 34/ });
  const closes = wire(journal).filter((e) => e.kind === 'close');
  const opens = wire(journal).filter((e) => e.kind === 'open');
  // The fault entries are written once Toxiproxy has answered, a moment after the cut took effect.
  t.ok(
    closes.some((e) => e.t > down.t - 1000 && e.t < down.t + 2000),
    'the open connection ended at the cut',
  );
  t.notOk(
    opens.some((e) => e.t > down.t && e.t < up.t - 300),
    'no connection got through while the proxy was down',
  );
  const after = opens.find((e) => e.t > up.t);
  t.ok(after, 'the consumer reconnected by itself after the cut');
  if (!after) return;
  const sub = subscribeOf(journal, after.conn);
  t.match(sub.cursor, /^1:\d{14}:\d{4}$/, 'with its durable cursor, not null (no unneeded snapshot)');
  t.type(sub.blockHash, 'string');
  t.ok(
    wire(journal).some((e) => e.conn === after.conn && e.kind === 'note' && /^replay page: \d+ events after/.test(e.text)),
    'the server replayed from that cursor',
  );
  const later = opens.filter((e) => e.t >= after.t).flatMap((e) => sentEvents(journal, e.conn));
  const duringCut = new Set(later.filter((l) => blockOf(l) >= 22 && blockOf(l) <= 33).map((l) => /"cursor":"([^"]+)"/.exec(l)?.[1]));
  t.equal(duringCut.size, 12, 'the 12 events of the blocks mined during the cut were delivered after it');
}

for (const consumer of consumers) {
  if (!consumer.inMatrix)
    t.test(`feed-happy-path passes the ${consumer.name}`, async (t) => {
      const journal = await run(t, 'feed-happy-path', consumer.args);
      t.match(subscribeOf(journal, 1), { cursor: null, blockHash: null }, 'a fresh store subscribes with cursor null');
      t.equal(wire(journal).filter((e) => e.kind === 'open').length, 1, 'one connection, no reconnect');
      const pings = wire(journal).filter((e) => e.kind === 'send' && lineOf(e).startsWith('{"op":"ping"'));
      t.equal(pings.length, 0, 'a busy feed and no quiet moment (expect.quiet_ping is off): the server never pinged');
    });

  t.test(`feed-cut-30s passes the ${consumer.name}`, async (t) => {
    const journal = await run(t, 'feed-cut-30s', consumer.args);
    cutAndReplay(t, journal);
  });

  if (!consumer.inMatrix)
    t.test(`feed-acceptance passes the ${consumer.name}`, async (t) => {
      const journal = await run(t, 'feed-acceptance', consumer.args);
      for (const name of ['latency-down', 'latency-up', 'starved'])
        t.ok(
          journal.some((e) => e.type === 'fault' && e.name === name && e.action === 'apply'),
          `${name} applied`,
        );
      cutAndReplay(t, journal);
      // The quiet moment (expect.quiet_ping): after the last event, the idle server pinged before
      // SIGTERM, and that ping's id came back in a pong.
      const sigterm = journal.find((e) => e.type === 'fault' && e.name === 'end-of-run-consumer')?.t ?? Infinity;
      const lastEvent =
        wire(journal)
          .filter((e) => e.kind === 'send' && lineOf(e).startsWith('{"op":"event"'))
          .at(-1)?.t ?? 0;
      const idOf = (e: Wire) => (JSON.parse(lineOf(e)) as { id?: string }).id;
      const quietPings = wire(journal).filter((e) => e.kind === 'send' && lineOf(e).startsWith('{"op":"ping"') && e.t > lastEvent && e.t < sigterm);
      const pongs = new Set(
        wire(journal)
          .filter((e) => e.kind === 'recv' && /"op"\s*:\s*"pong"/.test(lineOf(e)))
          .map((e) => `${e.conn}:${idOf(e)}`),
      );
      t.ok(
        quietPings.some((p) => pongs.has(`${p.conn}:${idOf(p)}`)),
        `the quiet moment: after the last event the server pinged and the pong came, before SIGTERM (${quietPings.length} pings then)`,
      );
      const resends = wire(journal).filter((e) => e.kind === 'send' && /^misbehaviour: resend at /.test(e.note ?? ''));
      t.ok(
        resends.some((e) => e.conn === 1),
        'events resent on the first connection',
      );
      t.ok(
        resends.some((e) => e.conn > 1),
        'and after the cut',
      );
      t.ok(
        wire(journal).some((e) => e.kind === 'note' && /^misbehaviour: resend at /.test(e.text)),
        'the resends are marked for the diagram',
      );
    });

  t.test(`feed-crash-apply passes the ${consumer.name}`, async (t) => {
    const journal = await run(t, 'feed-crash-apply', consumer.args);
    const exits = journal.filter((e) => e.type === 'process-exit' && e.role === 'consumer').map((e) => (e as { code: number }).code);
    t.same(exits, [86, 86, 0], 'two injected exits, then SIGTERM');
    const stopped = journal.findIndex((e) => e.type === 'process-stopped' && e.incarnation === 3);
    t.ok(stopped > 0, 'process 3 stopped itself');
    t.match(journal[stopped + 1], { type: 'store-read', role: 'consumer', incarnation: 3, when: 'while-stopped' }, 'and was read while stopped');
    t.ok(
      journal.some((e) => e.type === 'process-continued' && e.incarnation === 3),
      'then continued',
    );
    // Each restarted process subscribes with the cursor its predecessor left durable.
    for (const n of [2, 3]) {
      const left = journal.find((e) => e.type === 'store-read' && e.role === 'consumer' && e.incarnation === n - 1 && e.when === 'after-exit');
      const cursor = (left as { store: { state: { cursor: string }[] } } | undefined)?.store.state[0]?.cursor;
      const conn = wire(journal).find((e) => e.kind === 'open' && e.owner?.incarnation === n);
      t.ok(cursor && conn, `process ${n - 1} left a cursor, process ${n} connected`);
      if (conn) t.equal(subscribeOf(journal, conn.conn).cursor, cursor, `process ${n} subscribed from it`);
    }
  });
}
