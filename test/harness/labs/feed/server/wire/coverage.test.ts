// Whether a reorganisation reached a probe, on hand-made journals: live, a revoke from its fork
// point after its commit took effect, none did not; with a probe cut off across it
// (`reorg-away`), only a resume due a revoke from that fork point and answered with a revoke
// counts. Live subscriptions and resumes as the rows read them.
import t from 'tap';
import { liveAt, reorgCommits, reorgCoverage, resumedAfter } from '../../../../../../harness/labs/feed/server/wire/coverage.js';
import { probeConnsOf } from '../../../../../../harness/labs/feed/server/wire/wire-checks.js';
import { dueNote } from '../../../../../../harness/labs/feed/server/wire/wire-due.js';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import { cursor } from '../../../../../helpers/feed-events.js';
import { byTime, commit, ev, fault, probeConn, revoke, send, snapshot } from '../../../../../helpers/probe-journal.js';

/** A reorganisation after block 18 of depth 2: blocks 17 and 18 abandoned, fork point block 17. */
const REORG = [{ ordinal: 1, afterBlock: 18, forkNumber: 17, headAfter: 18, deep: false }];
const chain = [commit(100, 11), commit(200, 12), commit(300, 17), commit(400, 18), commit(500, 17, 18)];
const rows = (journal: JournalEntry[]) => reorgCoverage(journal, probeConnsOf(journal, 1), REORG);

t.test('the reorganisation is the commit that goes back below the head', async (t) => {
  t.same(
    reorgCommits(chain, REORG).map((r) => r.t),
    [500],
  );
  t.equal(reorgCommits(chain.slice(0, 4), REORG)[0]!.t, undefined, 'not committed: no time');
});

t.test('live: a revoke from the fork point after the commit took effect', async (t) => {
  const late = byTime(chain, probeConn(1, 50, [snapshot(10), ev(11), ev(12), ev(17), ev(18)]), [send(510, revoke(17)), send(520, ev(17))]);
  const [row] = rows(late);
  t.equal(row?.kind, 'reorg');
  t.equal(row?.took, true);
  t.match(row?.how, /^the reorganisation after block 18 \(fork point block 17\) at 0\.500 s reached probe 1 \(connection 1\) as revoke from 17:0 at 0\.510 s$/);
});

t.test('live: no revoke reached a probe — took no effect, and says who followed then', async (t) => {
  const journal = byTime(chain, probeConn(1, 50, [snapshot(10), ev(11), ev(12)]), [send(490, ev(13))]);
  const [row] = rows(journal);
  t.equal(row?.took, false);
  t.match(row?.how, /reached no probe: probe 1 followed then, and none was sent a revoke/);
  const [never] = rows(byTime(chain));
  t.match(never?.how, /reached no probe: no probe held a live subscription then/);
});

t.test('away: the probe cut off across it resumes from an abandoned cursor and is revoked from the fork point', async (t) => {
  const away = [fault(450, 'away-probe-2'), fault(600, 'away-probe-2', 'lift')];
  const first = probeConn(1, 50, [snapshot(10), ev(11), ev(12), ev(17), 'close'], { probe: 2 });
  // An attempt while its proxy was down: its subscribe got no answer.
  const attempt = probeConn(2, 520, [{ note: dueNote({ kind: 'revoke', from: cursor(17, 0), why: 'block 17 was abandoned' }) }, 'close'], {
    probe: 2,
    cursor: cursor(17, 0),
  });
  const resume = probeConn(3, 700, [{ note: dueNote({ kind: 'revoke', from: cursor(17, 0), why: 'block 17 was abandoned' }) }, revoke(17), ev(17)], {
    probe: 2,
    cursor: cursor(17, 0),
  });
  const [row] = rows(byTime(chain, away, first, attempt, resume));
  t.equal(row?.kind, 'reorg-away');
  t.equal(row?.took, true);
  t.match(
    row?.how,
    /^probe 2 was cut off across the reorganisation after block 18 \(fork point block 17\) at 0\.500 s and resumed from 17:0, an abandoned cursor: its first answer was revoke from 17:0/,
  );

  // Its resume was below the fork point: a replay was due, no revoke — the reorganisation tested nothing of it.
  const below = probeConn(3, 700, [{ note: dueNote({ kind: 'replay', first: cursor(12, 1) }) }, ev(12, 1)], { probe: 2, cursor: cursor(12, 0) });
  const [missed] = rows(byTime(chain, away, first, below));
  t.equal(missed?.took, false);
  t.match(missed?.how, /reached no probe that was cut off across it \(probe 2\) as a revoke at its resume: probe 2 resumed from 12:0, which was due replay/);
  const [gone] = rows(byTime(chain, away, first));
  t.match(gone?.how, /probe 2 never subscribed again/);
});

t.test('live subscriptions and resumes', async (t) => {
  const journal = byTime(probeConn(1, 0, [snapshot(10), ev(11), 'close']), probeConn(2, 100, [ev(12)], { cursor: cursor(11, 0), instance: 2 }));
  const conns = probeConnsOf(journal, 1);
  t.same(
    liveAt(conns, 25).map((c) => c.conn),
    [1],
    'served and open',
  );
  t.same(liveAt(conns, 15), [], 'subscribed, nothing sent yet');
  t.same(liveAt(conns, 50), [], 'closed by then');
  t.equal(resumedAfter(conns, 1, 40)?.conn.conn, 2);
  t.equal(resumedAfter(conns, 1, 40, 1), undefined, 'not on instance 1');
  t.equal(resumedAfter(conns, 1, 200), undefined);
});
