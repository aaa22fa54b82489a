// The mutants of consumer/ledger/mutants/ (see its README.md): near misses that pass a normal run
// but break one sentence of the seed. For each mutant, in TypeScript and in Python:
//   - a plain happy run passes, exactly like the references (the "near miss" half);
//   - one direct behavioural test shows the bug through the wire, the file or the exit
//     status, side by side with the reference consumer of the same language (the "miss").
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import {
  CONSUMERS,
  EMPTY,
  MUTANT_NAMES,
  commitBlockedScript,
  forEachMutantLang,
  lockstep,
  mutant,
  readStore,
  replay,
  runConsumer,
  contractEnv,
  seedStore,
  startConsumer,
  startServer,
  windowed,
  type Consumer,
  type Script,
} from '../../helpers/consumer-rig.js';

t.jobs = 2;
// About 80 consumer processes: on a loaded machine this file needs more than the 60 s of
// .taprc (the timing checks below measure from the moment the consumer is up, not from spawn).
t.setTimeout(240_000);

const fileName = (c: Consumer): string => `${c.name.replace(/\W+/g, '-')}.db`;

/** Runs `c` once against `script` on a fresh (or seeded) file; returns exit, lines and store. */
async function session(t: Test, c: Consumer, script: Script, opts: { db?: string; timeoutMs?: number; fault?: string } = {}) {
  const db = opts.db ?? join(t.testdir(), fileName(c));
  const server = await startServer(t, script);
  const started = Date.now();
  const exit = await runConsumer(t, c, {
    port: server.port,
    db,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.fault ? { fault: opts.fault } : {}),
  }).exit;
  await server.scripts();
  return { exit, lines: server.conns[0]?.lines ?? [], closed: server.conns[0]?.closed, store: readStore(db), started, db };
}

// ---------------------------------------------------------------- near miss: the happy run

for (const name of MUTANT_NAMES) {
  t.test(`${name}: passes a plain happy run (RESUME -1, every event once, exit 0)`, async (t) => {
    for (const lang of ['ts', 'python'] as const) {
      const m = mutant(name, lang);
      const r = await session(t, m, windowed(['EVENT 0 7\n', 'EVENT 1 -3\n', 'EVENT 2 4\n']));
      t.equal(r.exit.code, 0, `${m.name}: exit 0 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 2'], `${m.name}: RESUME -1 and one ACK per event`);
      t.same(
        r.store,
        {
          last: 2,
          total: 8,
          ledger: [
            [0, 7],
            [1, -3],
            [2, 4],
          ],
        },
        `${m.name}: store`,
      );
    }
  });
}

// ---------------------------------------------------------------- ack-before-commit

const ABC_TS = mutant('ack-before-commit', 'ts');
const ABC_PY = mutant('ack-before-commit', 'python');
const isAbc = (c: Consumer): boolean => c === ABC_TS || c === ABC_PY;

t.test('ack-before-commit: a normal run with a duplicate looks like the references', async (t) => {
  for (const c of [ABC_TS, ABC_PY, ...CONSUMERS]) {
    const r = await session(t, c, windowed(['EVENT 0 7\n', 'EVENT 1 -3\n', 'EVENT 1 -3\n', 'EVENT 2 4\n']));
    t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
    t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 1', 'ACK 2'], `${c.name}: ACKs`);
    t.same(
      r.store,
      {
        last: 2,
        total: 8,
        ledger: [
          [0, 7],
          [1, -3],
          [2, 4],
        ],
      },
      `${c.name}: store`,
    );
  }
});

t.test('ack-before-commit: exit@ack:1: the mutant has already sent ACK 1, the references have not', async (t) => {
  for (const c of [ABC_TS, ABC_PY, ...CONSUMERS]) {
    const r = await session(t, c, lockstep(['EVENT 0 4\n', 'EVENT 1 5\n'], 'wait'), { fault: 'exit@ack:1' });
    t.equal(r.exit.code, 86, `${c.name}: exit 86 ${r.exit.stderr}`);
    t.same(r.lines, isAbc(c) ? ['RESUME -1', 'ACK 0', 'ACK 1'] : ['RESUME -1', 'ACK 0'], `${c.name}: ACKs seen by the publisher`);
    t.same(
      r.store,
      {
        last: 1,
        total: 9,
        ledger: [
          [0, 4],
          [1, 5],
        ],
      },
      `${c.name}: 1 committed`,
    );
  }
});

t.test('ack-before-commit: while a reader blocks its COMMIT, the mutant ACKs anyway; the references wait', async (t) => {
  for (const c of [ABC_TS, ABC_PY, ...CONSUMERS]) {
    const db = join(t.testdir(), fileName(c));
    const seen: { ackWhileLocked?: boolean } = {};
    const r = await session(t, c, commitBlockedScript(t, db, seen), { db });
    t.equal(seen.ackWhileLocked, isAbc(c), `${c.name}: ACK 1 arrived before COMMIT could finish: ${isAbc(c)}`);
    t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
    t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 1'], `${c.name}: one ACK each`);
    t.same(
      r.store,
      {
        last: 1,
        total: 3,
        ledger: [
          [0, 1],
          [1, 2],
        ],
      },
      `${c.name}: store`,
    );
  }
});

// ---------------------------------------------------------------- split-commit

forEachMutantLang(t, 'split-commit', 'exit@apply:1 leaves 1 counted with last 0, and the restart cannot finish', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const crash = await session(t, c, lockstep(['EVENT 0 4\n', 'EVENT 1 5\n'], 'wait'), { fault: 'exit@apply:1' });
    t.equal(crash.exit.code, 86, `${c.name}: exit 86 ${crash.exit.stderr}`);
    t.same(crash.lines, ['RESUME -1', 'ACK 0'], `${c.name}: no ACK 1`);
    const restart = await session(t, c, replay([4, 5, 6]), { db: crash.db });
    if (c === m) {
      t.same(
        crash.store,
        {
          last: 0,
          total: 9,
          ledger: [
            [0, 4],
            [1, 5],
          ],
        },
        `${c.name}: 1 committed without its cursor`,
      );
      t.not(restart.exit.code, 0, `${c.name}: the restart fails on the redelivered 1 (${restart.exit.stderr.trim()})`);
      t.same(restart.lines, ['RESUME 0'], `${c.name}: no ACK after RESUME 0`);
    } else {
      t.same(crash.store, { last: 0, total: 4, ledger: [[0, 4]] }, `${c.name}: nothing of 1 survives`);
      t.equal(restart.exit.code, 0, `${c.name}: the restart finishes ${restart.exit.stderr}`);
      t.same(restart.lines, ['RESUME 0', 'ACK 1', 'ACK 2'], `${c.name}: 1 and 2 applied once`);
      t.same(
        restart.store,
        {
          last: 2,
          total: 15,
          ledger: [
            [0, 4],
            [1, 5],
            [2, 6],
          ],
        },
        `${c.name}: store`,
      );
    }
  }
});

// ---------------------------------------------------------------- reset-on-open

forEachMutantLang(t, 'reset-on-open', 'an existing checkpoint (1, 12) is reset: RESUME -1, then a collision', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const db = join(t.testdir(), fileName(c));
    seedStore(db, 1, 12, [
      [0, 7],
      [1, 5],
    ]);
    const r = await session(t, c, replay([7, 5, -3]), { db });
    if (c === m) {
      t.same(r.lines, ['RESUME -1'], `${c.name}: RESUME -1 on a file that says last = 1, no ACK`);
      t.not(r.exit.code, 0, `${c.name}: EVENT 0 collides with the kept ledger row (${r.exit.stderr.trim()})`);
      t.same(
        r.store,
        {
          last: -1,
          total: 0,
          ledger: [
            [0, 7],
            [1, 5],
          ],
        },
        `${c.name}: checkpoint reset, ledger kept`,
      );
    } else {
      t.same(r.lines, ['RESUME 1', 'ACK 2'], `${c.name}: RESUME 1`);
      t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
      t.same(
        r.store,
        {
          last: 2,
          total: 9,
          ledger: [
            [0, 7],
            [1, 5],
            [2, -3],
          ],
        },
        `${c.name}: store`,
      );
    }
  }
});

// ---------------------------------------------------------------- resume-from-scratch

forEachMutantLang(t, 'resume-from-scratch', 'on a file with last = 1 it still sends RESUME -1 (and dedupes the replay)', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const db = join(t.testdir(), fileName(c));
    seedStore(db, 1, 12, [
      [0, 7],
      [1, 5],
    ]);
    const r = await session(t, c, replay([7, 5, -3]), { db });
    t.same(r.lines, c === m ? ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 2'] : ['RESUME 1', 'ACK 2'], `${c.name}: cursor on the wire`);
    t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
    t.same(
      r.store,
      {
        last: 2,
        total: 9,
        ledger: [
          [0, 7],
          [1, 5],
          [2, -3],
        ],
      },
      `${c.name}: the same final store`,
    );
  }
});

// ---------------------------------------------------------------- no-dedupe

forEachMutantLang(t, 'no-dedupe', 'EVENT 0 7 twice: total 14 with one ledger row', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(['EVENT 0 7\n', 'EVENT 0 7\n']));
    t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
    t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 0'], `${c.name}: both copies ACKed`);
    t.same(r.store, { last: 0, total: c === m ? 14 : 7, ledger: [[0, 7]] }, `${c.name}: total`);
  }
});

// ---------------------------------------------------------------- no-duplicate-ack

forEachMutantLang(t, 'no-duplicate-ack', 'the second EVENT 0 7 gets no ACK', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(['EVENT 0 7\n', 'EVENT 0 7\nEVENT 1 2\n']));
    t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
    t.same(r.lines, c === m ? ['RESUME -1', 'ACK 0', 'ACK 1'] : ['RESUME -1', 'ACK 0', 'ACK 0', 'ACK 1'], `${c.name}: ACKs`);
    t.same(
      r.store,
      {
        last: 1,
        total: 9,
        ledger: [
          [0, 7],
          [1, 2],
        ],
      },
      `${c.name}: store right either way`,
    );
  }
});

// ---------------------------------------------------------------- conflict-as-duplicate

forEachMutantLang(t, 'conflict-as-duplicate', 'EVENT 0 7 then EVENT 0 9: ACKed and carried on instead of a conflict', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(['EVENT 0 7\n', 'EVENT 0 9\n', 'EVENT 1 2\n']));
    if (c === m) {
      t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 0', 'ACK 1'], `${c.name}: the conflicting line is ACKed`);
      t.same(
        r.store,
        {
          last: 1,
          total: 9,
          ledger: [
            [0, 7],
            [1, 2],
          ],
        },
        `${c.name}: store`,
      );
    } else {
      t.equal(r.exit.code, 4, `${c.name}: exit 4 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: no ACK for the conflict`);
      t.same(r.store, { last: 0, total: 7, ledger: [[0, 7]] }, `${c.name}: store`);
    }
  }
});

// ---------------------------------------------------------------- gap-skip

forEachMutantLang(t, 'gap-skip', 'EVENT 0 1 then EVENT 2 5: applied, last jumps to 2', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(['EVENT 0 1\n', 'EVENT 2 5\n']));
    if (c === m) {
      t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 2'], `${c.name}: ACK 2 across the gap`);
      t.same(
        r.store,
        {
          last: 2,
          total: 6,
          ledger: [
            [0, 1],
            [2, 5],
          ],
        },
        `${c.name}: seq 1 now looks done`,
      );
    } else {
      t.equal(r.exit.code, 3, `${c.name}: exit 3 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: no ACK 2`);
      t.same(r.store, { last: 0, total: 1, ledger: [[0, 1]] }, `${c.name}: store`);
    }
  }
});

// ---------------------------------------------------------------- lenient-parser

// Each line after EVENT 0 5 is refused by the strict grammar (consumer-wire.test.ts shows
// every one of them separately for the references) but "converts to numbers".
const LENIENT: [string, string, number][] = [
  ['CRLF', 'EVENT 1 5\r\n', 5],
  ["'+' sign", 'EVENT 2 +5\n', 5],
  ['-0', 'EVENT 3 -0\n', 0],
  ['leading zero in seq', 'EVENT 04 5\n', 5],
  ['leading zero in delta', 'EVENT 5 05\n', 5],
  ['tab', 'EVENT\t6 5\n', 5],
  ['double space', 'EVENT 7  5\n', 5],
  ['trailing space', 'EVENT 8 5 \n', 5],
];
// Python's int() also takes non-ASCII digits: U+FF19 is a fullwidth 9.
const LENIENT_PY: [string, string, number][] = [...LENIENT, ['non-ASCII digit (U+FF19)', 'EVENT \uff19 5\n', 5]];

forEachMutantLang(t, 'lenient-parser', 'lines that only "convert to numbers" are applied and ACKed, one by one', async (t, m, ref) => {
  const cases = m.name.endsWith('[python]') ? LENIENT_PY : LENIENT;
  const steps = ['EVENT 0 5\n', ...cases.map(([, line]) => Buffer.from(line, 'utf8'))];
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(steps));
    if (c === m) {
      t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0', ...cases.map((_, i) => `ACK ${i + 1}`)], `${c.name}: ${cases.map(([what]) => what).join(', ')}: each ACKed`);
      t.same(
        r.store,
        { last: cases.length, total: 5 + cases.reduce((sum, [, , d]) => sum + d, 0), ledger: [[0, 5], ...cases.map(([, , d], i) => [i + 1, d])] },
        `${c.name}: each applied`,
      );
    } else {
      t.equal(r.exit.code, 2, `${c.name}: exit 2 at the CRLF line ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: refused`);
      t.same(r.store, { last: 0, total: 5, ledger: [[0, 5]] }, `${c.name}: store`);
    }
  }
});

// ---------------------------------------------------------------- continue-after-malformed

forEachMutantLang(t, 'continue-after-malformed', 'the valid line after a malformed one is applied and ACKed', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const r = await session(t, c, lockstep(['EVENT 0 5\n', 'EVENT 1 +5\nEVENT 1 2\n']));
    if (c === m) {
      t.equal(r.exit.code, 0, `${c.name}: exit 0 ${r.exit.stderr}`);
      t.match(r.exit.stderr, /skipping/, `${c.name}: logged the bad line`);
      t.same(r.lines, ['RESUME -1', 'ACK 0', 'ACK 1'], `${c.name}: ACK 1 for the line after it`);
      t.same(
        r.store,
        {
          last: 1,
          total: 7,
          ledger: [
            [0, 5],
            [1, 2],
          ],
        },
        `${c.name}: store`,
      );
    } else {
      t.equal(r.exit.code, 2, `${c.name}: exit 2 ${r.exit.stderr}`);
      t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: nothing after the bad line`);
      t.same(r.store, { last: 0, total: 5, ledger: [[0, 5]] }, `${c.name}: store`);
    }
  }
});

// ---------------------------------------------------------------- no-timeout

forEachMutantLang(t, 'no-timeout', 'a silent publisher (timeout 300 ms) is waited for until it closes 3 s later', async (t, m, ref) => {
  for (const c of [m, ref]) {
    let resumeAt = 0;
    const r = await session(
      t,
      c,
      async (conn) => {
        if (!(await conn.lineCount(1))) return;
        resumeAt = Date.now();
        if (await conn.closedWithin(3000)) return; // silent, connection open
        conn.end();
        await conn.closedWithin();
      },
      { timeoutMs: 300 },
    );
    const took = r.exit.endedAt - resumeAt;
    t.same(r.lines, ['RESUME -1'], `${c.name}: RESUME only`);
    t.same(r.store, EMPTY, `${c.name}: store`);
    if (c === m) {
      t.equal(r.exit.code, 0, `${c.name}: still there when the publisher closed: exit 0 ${r.exit.stderr}`);
      t.ok(took >= 2900, `${c.name}: waited ${took} ms after RESUME, far beyond its 300 ms timeout`);
    } else {
      t.equal(r.exit.code, 5, `${c.name}: exit 5 ${r.exit.stderr}`);
      t.ok(took < 2500, `${c.name}: gave up ${took} ms after RESUME`);
    }
  }
});

// ---------------------------------------------------------------- unbounded-line

forEachMutantLang(t, 'unbounded-line', '10 KiB without LF: waits for the rest until its timeout instead of closing at once', async (t, m, ref) => {
  for (const c of [m, ref]) {
    let sentAt = 0;
    const r = await session(
      t,
      c,
      async (conn) => {
        if (!(await conn.lineCount(1))) return;
        conn.send('EVENT 0 5\n');
        if (!(await conn.lineCount(2))) return;
        sentAt = Date.now();
        conn.send(`EVENT 1 2${'7'.repeat(10 * 1024)}`); // never an LF, never a close from us
        await conn.closedWithin(15000);
      },
      { timeoutMs: 3000 },
    );
    const took = r.exit.endedAt - sentAt;
    t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: nothing after ACK 0`);
    t.same(r.store, { last: 0, total: 5, ledger: [[0, 5]] }, `${c.name}: store`);
    if (c === m) {
      t.equal(r.exit.code, 5, `${c.name}: ended by the read timeout: exit 5 ${r.exit.stderr}`);
      t.ok(took >= 2800, `${c.name}: waited ${took} ms for an LF`);
    } else {
      t.equal(r.exit.code, 2, `${c.name}: exit 2 ${r.exit.stderr}`);
      t.ok(took < 2500, `${c.name}: closed ${took} ms after the junk`);
    }
  }
});

// ---------------------------------------------------------------- swallow-error

forEachMutantLang(t, 'swallow-error', 'raise@apply:1 is logged and the session carries on to exit 0', async (t, m, ref) => {
  for (const c of [m, ref]) {
    let closedByConsumer: boolean | undefined;
    const r = await session(
      t,
      c,
      async (conn) => {
        if (!(await conn.lineCount(1))) return;
        conn.send('EVENT 0 4\n');
        if (!(await conn.lineCount(2))) return;
        conn.send('EVENT 1 5\nEVENT 2 6\n');
        closedByConsumer = await conn.closedWithin(2000);
        conn.end();
        await conn.closedWithin();
      },
      { fault: 'raise@apply:1' },
    );
    t.same(r.lines, ['RESUME -1', 'ACK 0'], `${c.name}: no ACK 1, no ACK 2`);
    t.match(r.exit.stderr, /injected raise at apply:1/, `${c.name}: the raise was reported`);
    t.same(r.store, { last: 0, total: 4, ledger: [[0, 4]] }, `${c.name}: nothing of 1 or 2 in the file`);
    if (c === m) {
      t.equal(closedByConsumer, false, `${c.name}: kept the connection open after the error`);
      t.equal(r.exit.code, 0, `${c.name}: exit 0 although 1 and 2 were not handled`);
    } else {
      t.equal(closedByConsumer, true, `${c.name}: closed at once`);
      t.equal(r.exit.code, 1, `${c.name}: exit 1 ${r.exit.stderr}`);
    }
  }
});

// ---------------------------------------------------------------- timeout-default

forEachMutantLang(t, 'timeout-default', 'CHAOSLAB_TIMEOUT_MS=0 becomes a default: it connects instead of exiting 64', async (t, m, ref) => {
  for (const c of [m, ref]) {
    const server = await startServer(t, windowed(['EVENT 0 7\n']));
    const db = join(t.testdir(), fileName(c));
    const exit = await startConsumer(t, c, { ...contractEnv({ port: server.port, db }), CHAOSLAB_TIMEOUT_MS: '0' }).exit;
    await server.scripts();
    if (c === m) {
      t.equal(exit.code, 0, `${c.name}: exit 0 ${exit.stderr}`);
      t.same(server.conns[0]?.lines, ['RESUME -1', 'ACK 0'], `${c.name}: connected and processed the stream`);
      t.same(readStore(db), { last: 0, total: 7, ledger: [[0, 7]] }, `${c.name}: wrote its store`);
    } else {
      t.equal(exit.code, 64, `${c.name}: exit 64`);
      t.match(exit.stderr, /CHAOSLAB_TIMEOUT_MS/, `${c.name}: names the variable`);
      t.equal(server.conns.length, 0, `${c.name}: nothing connected`);
      t.equal(readStore(db), undefined, `${c.name}: no store`);
    }
  }
});
