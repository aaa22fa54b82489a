// Whether each step of a server scene took effect, on hand-made journals: a SIGKILL or SIGTERM
// that ends an instance while a probe is subscribed and is followed by the probe's resume (a
// handover: on the instance it was repointed to); a SIGSTOP while a probe is subscribed; a cut
// that closes a probe's live subscription (a cut across a reorganisation is the reorganisation's
// row); a probe seeded with another chain's cursor that subscribed with it. Each also without its
// effect, said in words.
import t from 'tap';
import { sceneCoverage } from '../../../../../../harness/labs/feed/server/scene/coverage.js';
import { probeConnsOf } from '../../../../../../harness/labs/feed/server/wire/wire-checks.js';
import type { ScenePlan } from '../../../../../../harness/labs/feed/scenario/plan.js';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import { cursor } from '../../../../../helpers/feed-events.js';
import { byTime, commit, ev, fault, probeConn, snapshot } from '../../../../../helpers/probe-journal.js';

const plan = (steps: ScenePlan['steps'], probes: ScenePlan['probes'] = [{ instance: 1, store: 'empty' }]): ScenePlan => ({ instances: 2, probes, steps });
const rows = (journal: JournalEntry[], p: ScenePlan, reorgs = [] as Parameters<typeof sceneCoverage>[3]) =>
  sceneCoverage(journal, p, probeConnsOf(journal, 1), reorgs, 1);

const KILL = plan([
  { beforeBlock: 14, action: { kind: 'kill', instance: 1 } },
  { beforeBlock: 17, action: { kind: 'start', instance: 1 } },
]);
/** Probe 1 on instance 1 from 0 ms: its snapshot and events at 20..50 ms. */
const following = probeConn(1, 0, [snapshot(10), ev(11), ev(12), ev(13), 'close'], { instance: 1 });
/** Its resume from 13:0 at 200 ms, answered. */
const resume = (instance = 1) => probeConn(2, 200, [ev(14)], { cursor: cursor(13, 0), instance });

t.test('kill: the SIGKILL ended instance 1 while probe 1 followed it, and probe 1 resumed from its cursor', async (t) => {
  const [row] = rows(byTime(following, [fault(45, 'kill-instance-1')], resume()), KILL);
  t.same(
    { kind: row?.kind, took: row?.took, fault: row?.fault },
    { kind: 'kill', took: true, fault: 'SIGKILL to instance 1 before block 14, started again before block 17' },
  );
  t.match(
    row?.how,
    /^the SIGKILL at 0\.045 s ended server instance 1 while probe 1 was subscribed to it \(connection 1 to instance 1, 3 frames sent on it before\); probe 1 resumed from 13:0 on instance 1, answered at 0\.220 s$/,
  );
});

t.test('kill without effect: no probe subscribed then, no resume, or never sent', async (t) => {
  const [early] = rows(byTime([fault(5, 'kill-instance-1')], following, resume()), KILL);
  t.equal(early?.took, false);
  t.match(early?.how, /ended server instance 1 while no probe held a live subscription to it$/);
  const [noResume] = rows(byTime(following, [fault(45, 'kill-instance-1')]), KILL);
  t.equal(noResume?.took, false);
  t.match(noResume?.how, /while probe 1 was subscribed to it, but no resume from its cursor was answered afterwards$/);
  const [unsent] = rows(following, KILL);
  t.equal(unsent?.took, false);
  t.match(unsent?.how, /was never sent: the instance was not running then/);
});

t.test('sigterm: its own kind, judged as a kill', async (t) => {
  const p = plan([
    { beforeBlock: 14, action: { kind: 'sigterm', instance: 1 } },
    { beforeBlock: 16, action: { kind: 'start', instance: 1 } },
  ]);
  const [row] = rows(byTime(following, [fault(45, 'sigterm-instance-1')], resume()), p);
  t.same([row?.kind, row?.took], ['sigterm', true]);
  t.match(row?.how, /^the SIGTERM at 0\.045 s ended server instance 1/);
});

t.test('handover: repointed probes resume on the other instance; a resume on the old one does not count', async (t) => {
  const p = plan(
    [
      { beforeBlock: 14, action: { kind: 'repoint', probe: 1, to: 2 } },
      { beforeBlock: 14, action: { kind: 'kill', instance: 1 } },
    ],
    [{ instance: 1, store: 'empty' }],
  );
  const [row] = rows(byTime(following, [fault(44, 'repoint-probe-1'), fault(45, 'kill-instance-1')], resume(2)), p);
  t.same(
    { kind: row?.kind, took: row?.took, fault: row?.fault },
    { kind: 'handover', took: true, fault: 'before block 14: probe 1 repointed to instance 2, instance 1 killed (SIGKILL)' },
  );
  t.match(row?.how, /probe 1 resumed from 13:0 on instance 2/);
  const [wrong] = rows(byTime(following, [fault(44, 'repoint-probe-1'), fault(45, 'kill-instance-1')], resume(1)), p);
  t.equal(wrong?.took, false);
  t.match(wrong?.how, /no resume from its cursor on instance 2 was answered afterwards$/);
});

t.test('pause: SIGSTOP while a probe followed the instance', async (t) => {
  const p = plan([
    { beforeBlock: 14, action: { kind: 'stop', instance: 1 } },
    { beforeBlock: 16, action: { kind: 'cont', instance: 1 } },
  ]);
  const journal = byTime(following, [fault(45, 'stop-instance-1'), commit(46, 14), commit(47, 15), fault(48, 'cont-instance-1', 'lift')]);
  const [row] = rows(journal, p);
  t.same([row?.kind, row?.took, row?.fault], ['pause', true, 'SIGSTOP to instance 1 before block 14, SIGCONT before block 16']);
  t.match(
    row?.how,
    /^the SIGSTOP at 0\.045 s froze server instance 1 while probe 1 was subscribed to it \(connection 1 to instance 1, 3 frames sent on it before\); 2 commits to the outbox came before its SIGCONT at 0\.048 s$/,
  );
  const [idle] = rows(byTime(following, [fault(80, 'stop-instance-1'), fault(90, 'cont-instance-1', 'lift')]), p);
  t.equal(idle?.took, false);
  t.match(idle?.how, /froze server instance 1 while no probe held a live subscription to it; 0 commits/);
});

t.test('cut: the live subscription closed while the proxy was down, even journaled just before the fault', async (t) => {
  const p = plan([
    { beforeBlock: 14, action: { kind: 'away', probe: 1 } },
    { beforeBlock: 16, action: { kind: 'back', probe: 1 } },
  ]);
  // The commit of block 13 at 40 ms, the close at 60 ms, the fault once Toxiproxy answered at 62 ms.
  const [row] = rows(byTime([commit(40, 13)], following, [fault(62, 'away-probe-1'), fault(300, 'away-probe-1', 'lift')]), p);
  t.same([row?.kind, row?.took], ['cut', true]);
  t.match(
    row?.how,
    /^probe 1's proxy went down at 0\.062 s and its live subscription \(connection 1 to instance 1, 3 frames sent on it before\) closed at 0\.060 s; the proxy came up again at 0\.300 s$/,
  );
  const [nothing] = rows(byTime([commit(70, 13)], following, [fault(72, 'away-probe-1'), fault(300, 'away-probe-1', 'lift')]), p);
  t.equal(nothing?.took, false);
  t.match(nothing?.how, /while it held no live subscription \(none since the last commit before, at 0\.070 s\): there was no stream to cut$/);
  const open = probeConn(1, 0, [snapshot(10), ev(11), ev(12)], { instance: 1 });
  const [kept] = rows(byTime([commit(40, 13)], open, [fault(62, 'away-probe-1'), fault(300, 'away-probe-1', 'lift')]), p);
  t.equal(kept?.took, false);
  t.match(kept?.how, /was not closed while it was down$/);
  const reorg = [{ ordinal: 1, afterBlock: 14, forkNumber: 13, headAfter: 14, deep: false }];
  t.same(
    rows(byTime([commit(40, 13), commit(100, 14), commit(150, 13, 14)], following, [fault(62, 'away-probe-1'), fault(300, 'away-probe-1', 'lift')]), p, reorg),
    [],
    'a cut across a reorganisation is the reorganisation’s',
  );
});

t.test('a probe given another chain’s cursor subscribed with it', async (t) => {
  const p = plan(
    [],
    [
      { instance: 1, store: 'empty' },
      { instance: 1, store: 'other-chain' },
    ],
  );
  const other = probeConn(1, 0, ['{"op":"reset","reason":"stale-cursor"}\n', 'close'], { probe: 2, cursor: `2:${'0'.repeat(13)}5:0000` });
  const [row] = rows(other, p);
  t.same([row?.kind, row?.took], ['other-chain', true]);
  t.match(row?.how, /^probe 2 subscribed with 2:00000000000005:0000, a cursor of another chain, at 0\.010 s/);
  const [never] = rows([], p);
  t.equal(never?.took, false);
});
