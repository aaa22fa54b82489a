// The probes' wire checks, on journals written by hand: the first frame after a subscribe
// against its `due:` notes (either note may be met: the outbox can move between the subscribe and
// the answer), partial history, revoke points, skipped rows, cursor order, resets only when due,
// and `reset shutdown` to every connection an instance served when it got SIGTERM.
import t from 'tap';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import { instanceSignal, instanceTag, SERVER_SIGNAL } from '../../../../../../harness/labs/feed/server/wire/names.js';
import { probeConnsOf, probeWireProblems } from '../../../../../../harness/labs/feed/server/wire/wire-checks.js';
import { dueNote, parseDueNote } from '../../../../../../harness/labs/feed/server/wire/wire-due.js';

const c = (block: number, log: number) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const H = `0x${'ab'.repeat(32)}`;
const event = (cursor: string) =>
  `{"op":"event","cursor":"${cursor}","type":"Transfer","payload":{"from":"0x${'1'.repeat(40)}","to":"0x${'2'.repeat(40)}","amount":"5","txHash":"0x${'3'.repeat(64)}","blockHash":"${H}"}}`;

/** One connection of probe `probe` to instance `instance`: its subscribe, notes and frames, timed 1 ms apart. */
function conn(
  n: number,
  parts: (string | { note: string } | 'close')[],
  opts: { probe?: number; instance?: number; cursor?: string | null; t0?: number } = {},
): JournalEntry[] {
  const probe = opts.probe ?? 1;
  const stream = probe === 1 ? 'probe' : `probe-${probe}`;
  let t = opts.t0 ?? 0;
  const base = { type: 'wire' as const, stream, conn: n };
  const cursor = opts.cursor === undefined ? null : opts.cursor;
  const out: JournalEntry[] = [
    { ...base, t: t++, kind: 'open', tag: instanceTag(opts.instance ?? 1), owner: { role: 'control', incarnation: probe } },
    {
      ...base,
      t: t++,
      kind: 'recv',
      line: `{"op":"subscribe","client":"p","topics":["0x${'1'.repeat(40)}"],"cursor":${cursor === null ? 'null' : `"${cursor}"`},"blockHash":${cursor === null ? 'null' : `"${H}"`}}\n`,
    },
  ];
  for (const p of parts) {
    if (p === 'close') out.push({ ...base, t: t++, kind: 'close', by: 'publisher', reason: 'closed' });
    else if (typeof p === 'string') out.push({ ...base, t: t++, kind: 'send', line: `${p}\n` });
    else out.push({ ...base, t: t++, kind: 'note', text: p.note });
  }
  return out;
}

const check = (journal: JournalEntry[], forkPoints: number[] = []) => probeWireProblems({ journal, chainId: 1, forkPoints });
const codes = (journal: JournalEntry[], forkPoints: number[] = []) => check(journal, forkPoints).map((f) => f.code);
const SNAPSHOT = `{"op":"snapshot","cursor":"${c(7, 0)}","blockHash":"${H}","state":{"balances":{}}}`;
const STALE = '{"op":"reset","reason":"stale-cursor"}';
const PING = '{"op":"ping","id":1}';

t.test('due notes round-trip', async (t) => {
  t.match(parseDueNote(dueNote({ kind: 'revoke', from: c(15, 0), why: 'block 16 was abandoned' })), { kind: 'revoke', cursor: c(15, 0) });
  t.match(parseDueNote(dueNote({ kind: 'replay' })), { kind: 'replay' });
  t.notOk(parseDueNote(dueNote({ kind: 'replay' }))?.cursor);
  t.match(parseDueNote(dueNote({ kind: 'stale', why: 'x' })), { kind: 'stale' });
  t.equal(parseDueNote('snapshot at 1:…'), undefined, 'the publisher’s own notes are not due notes');
});

t.test('answers as due pass; a heartbeat before the answer is no answer', async (t) => {
  const journal = [
    ...conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, PING, SNAPSHOT, event(c(8, 0)), event(c(8, 2))]),
    ...conn(2, [{ note: dueNote({ kind: 'replay', first: c(9, 1) }) }, event(c(9, 1)), event(c(10, 0))], { cursor: c(8, 2), t0: 100 }),
    ...conn(3, [{ note: dueNote({ kind: 'stale', why: 'retention deleted 1:…' }) }, STALE, 'close'], { cursor: c(2, 0), t0: 200 }),
    ...conn(4, [{ note: dueNote({ kind: 'revoke', from: c(15, 0), why: 'abandoned' }) }, `{"op":"revoke","fromCursor":"${c(15, 0)}"}`, event(c(15, 0))], {
      cursor: c(16, 0),
      t0: 300,
    }),
  ];
  t.same(check(journal, [15]), []);
  t.equal(probeConnsOf(journal, 1).length, 4);
});

t.test('a stale cursor answered with events: a partial history served as complete', async (t) => {
  const [f] = check(
    conn(1, [{ note: dueNote({ kind: 'stale', why: 'retention deleted 1:00000000000034:0000 of 0xcb…' }) }, event(c(37, 0))], { cursor: c(12, 1) }),
  );
  t.equal(f?.code, 'partial-history');
  t.match(
    f?.text,
    /^a partial history served as complete: probe 1 \(connection 1 to instance 1\): its subscribe with cursor 1:00000000000012:0001 was due `reset stale-cursor` \(retention deleted .*\), but the server sent event 1:00000000000037:0000 \(server contract §3/,
  );
  t.match(f?.subject, { process: { role: 'control', incarnation: 1 } });
});

t.test('the answer may meet the second note (the outbox moved between subscribe and answer)', async (t) => {
  const moved = conn(1, [{ note: dueNote({ kind: 'replay', first: c(9, 0) }) }, { note: dueNote({ kind: 'stale', why: 'retention moved' }) }, STALE], {
    cursor: c(8, 0),
  });
  t.same(codes(moved), []);
});

t.test('a revoke from the cursor’s block instead of the fork point', async (t) => {
  const [f] = check(
    conn(
      1,
      [
        { note: dueNote({ kind: 'revoke', from: c(15, 0), why: 'block 16 0x… was abandoned; its branch left the chain at block 15' }) },
        `{"op":"revoke","fromCursor":"${c(16, 0)}"}`,
      ],
      { cursor: c(16, 0) },
    ),
    [15],
  );
  t.equal(f?.code, 'revoke-wrong-point');
  t.match(f?.text, /revoke from 1:00000000000016:0000 is not the fork point: block 16 .* so the revoke must be from 1:00000000000015:0000/);
  const live = check(conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT, event(c(9, 0)), `{"op":"revoke","fromCursor":"${c(9, 0)}"}`]), [8]);
  t.match(live, [
    { code: 'revoke-wrong-point', text: /revoke from 1:00000000000009:0000 is not the fork point of any reorganisation of the chain \(fork points: block 8\)/ },
  ]);
});

t.test('a resume that skips rows names the first one skipped', async (t) => {
  const [f] = check(conn(1, [{ note: dueNote({ kind: 'replay', first: c(14, 0) }) }, event(c(17, 0))], { cursor: c(13, 0) }));
  t.equal(f?.code, 'replay-gap');
  t.match(f?.text, /resumed after 1:00000000000013:0000, the server skipped 1:00000000000014:0000 and what follows: its first event was 1:00000000000017:0000/);
});

t.test('events out of cursor order; after a revoke the fork block may come again', async (t) => {
  const out = check(conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT, event(c(8, 0)), event(c(9, 1)), event(c(9, 0)), event(c(9, 2))]));
  t.match(out, [{ code: 'event-order', text: /the server sent 1:00000000000009:0000 after 1:00000000000009:0001: out of cursor order/ }]);
  t.equal(out.length, 1, 'one finding per kind per connection');
  const revoked = conn(1, [
    { note: dueNote({ kind: 'snapshot' }) },
    SNAPSHOT,
    event(c(8, 0)),
    event(c(9, 1)),
    `{"op":"revoke","fromCursor":"${c(9, 0)}"}`,
    event(c(9, 0)),
  ]);
  t.same(codes(revoked, [9]), []);
});

t.test('resets only when due: stale-cursor mid-stream, shutdown only after SIGTERM', async (t) => {
  const early = conn(1, [
    { note: dueNote({ kind: 'snapshot' }) },
    SNAPSHOT,
    event(c(8, 0)),
    { note: dueNote({ kind: 'nothing', why: 'retention deleted no row of its accounts above 1:…' }) },
    STALE,
  ]);
  t.match(check(early), [{ code: 'reset-not-due', text: /reset stale-cursor in mid-stream, but retention deleted no row/ }]);
  const due = conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT, { note: dueNote({ kind: 'stale', why: 'retention deleted …' }) }, STALE]);
  t.same(codes(due), []);
  const shutdown = conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT, '{"op":"reset","reason":"shutdown"}']);
  t.match(check(shutdown), [{ code: 'reset-not-due', text: /reset shutdown, but the harness had not sent SIGTERM to instance 1/ }]);
});

/** Probe `incarnation`'s process ended with status 0 at `t`. */
const exited = (incarnation: number, t: number): JournalEntry => ({
  t,
  type: 'process-exit',
  role: 'control',
  incarnation,
  code: 0,
  signal: null,
  durationMs: 40,
  stderrTail: '',
  stdoutTail: '',
  stdoutBytes: 0,
  stderrBytes: 0,
});

t.test('a lone server’s SIGTERM at the end of the run makes reset shutdown due; it owes none to a probe that had exited', async (t) => {
  // Seen under load (slow-reader, Python reference): the probe exited, the server got SIGTERM
  // before the probe's close came through the proxy, and said reset shutdown on that connection.
  const endOfRun: JournalEntry = { t: 50, type: 'fault', action: 'apply', name: SERVER_SIGNAL.sigterm, kind: 'signal', detail: '' };
  const probeExit = exited(1, 49);
  const served = conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT]);
  const reset = { t: 52, type: 'wire', stream: 'probe', conn: 1, kind: 'send', line: '{"op":"reset","reason":"shutdown"}\n' } as JournalEntry;
  t.same(check([...served, probeExit, endOfRun, reset]), [], 'the reset after the SIGTERM was due');
  t.match(check([...served, { ...reset, t: 48 }, probeExit, endOfRun]), [{ code: 'reset-not-due' }], 'before it, it was not');
  t.same(check([...served, probeExit, endOfRun]), [], 'and a probe gone before the SIGTERM is owed no reset');
});

t.test('SIGTERM: every connection the instance served hears reset shutdown; another instance’s need not', async (t) => {
  const sigterm = (instance: number, t: number): JournalEntry => ({
    t,
    type: 'fault',
    action: 'apply',
    name: instanceSignal('sigterm', instance),
    kind: 'signal',
    detail: '',
  });
  const journal: JournalEntry[] = [
    ...conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT], { probe: 1 }),
    ...conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT], { probe: 2, t0: 10 }),
    ...conn(1, [{ note: dueNote({ kind: 'snapshot' }) }, SNAPSHOT], { probe: 3, instance: 2, t0: 20 }),
    sigterm(1, 50),
    ...conn(1, ['{"op":"reset","reason":"shutdown"}', 'close'], { probe: 1, t0: 51 })
      .slice(2)
      .map((e) => ({ ...e, conn: 1 })),
    { t: 60, type: 'wire', stream: 'probe-2', conn: 1, kind: 'close', by: 'publisher', reason: 'closed' },
  ];
  const out = check(journal);
  t.match(out, [
    { code: 'no-shutdown-reset', text: /probe 2 \(connection 1 to instance 1\): it was connected when instance 1 got SIGTERM, but no `reset shutdown` came/ },
  ]);
  t.equal(out.length, 1, 'probe 1 heard it; probe 3 was on instance 2');

  // Probe 2's process had ended before the SIGTERM; the relay saw its close only later (it had stopped reading it).
  const ended = exited(2, 45);
  t.same(check([...journal, ended]), [], 'a probe that had ended is owed no reset shutdown');
});
