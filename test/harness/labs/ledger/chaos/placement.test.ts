// Where the ledger chaos model places a schedule's steps: each where it can meet the consumer.
import fc from 'fast-check';
import t from 'tap';
import { ledgerChaos } from '../../../../../harness/labs/ledger/chaos/chaos.js';
import { endsConnection, exitsInError, type LedgerSchedule, placedSteps, type Step } from '../../../../../harness/labs/ledger/chaos/placement.js';
import { ledgerChaosScenario } from '../../../../../harness/labs/ledger/chaos/scenario.js';

type Stream = Extract<LedgerSchedule, { kind: 'stream' }>;
const stream = (steps: Step[], more: Partial<Stream> = {}): Stream => ({
  kind: 'stream',
  count: 60,
  seed: 1,
  window: 4,
  redeliver: false,
  forgetAcked: false,
  patient: false,
  steps,
  ...more,
});
const byHarness = (x: Step) => ['cut', 'lost-ack', 'reset', 'half-open', 'kill', 'pause'].includes(x.layer);
const at = (x: Step) => ('at' in x ? x.at : -1);
const onAck = (x: Step) => x.layer === 'kill' && x.onAck;
/** Faults the harness starts before an EVENT: a window after the previous end (a kill at an ACK needs only the ACK). */
const windowed = (x: Step) => byHarness(x) && !onAck(x);

t.test('the cases chaos met: a misbehaviour names the connection live at its EVENT, hooks come first', async (t) => {
  // Run 2 of seed 11: the duplicate on connection 2 came before the kill that opens connection 2.
  t.same(
    placedSteps(
      stream([
        { layer: 'kill', at: 6, onAck: false },
        { layer: 'duplicate', at: 0, connection: 2 },
      ]),
      { sealed: true },
    ),
    [
      { layer: 'kill', at: 6, onAck: false },
      { layer: 'duplicate', at: 0, connection: 1 },
    ],
  );
  // Run 11: two raise hooks; the second could never fire.
  const hooks = placedSteps(
    stream([
      { layer: 'hook', action: 'raise', point: 'apply', at: 59 },
      { layer: 'hook', action: 'raise', point: 'apply', at: 30 },
    ]),
    { sealed: true },
  );
  t.same(hooks, [{ layer: 'hook', action: 'raise', point: 'apply', at: 30 }]);
  // A malformed line before the hook would end process 1 first: it goes after it, on connection 2.
  t.same(
    placedSteps(
      stream([
        { layer: 'hook', action: 'exit', point: 'ack', at: 10 },
        { layer: 'malformed', at: 4, form: 0, connection: 1 },
      ]),
      { sealed: true },
    ),
    [
      { layer: 'hook', action: 'exit', point: 'ack', at: 10 },
      { layer: 'malformed', at: 15, form: 0, connection: 2 },
    ],
  );
  // Run 1: a retention move before the end of the stream's other steps; it goes to the connection after the last end.
  t.same(
    placedSteps(
      stream([
        { layer: 'gap', at: 18, connection: 1 },
        { layer: 'retention', connection: 2, to: 3 },
        { layer: 'kill', at: 20, onAck: true },
      ]),
      { sealed: true },
    ),
    [
      { layer: 'gap', at: 18, connection: 1 },
      { layer: 'retention', connection: 3, to: 28 },
      // ACK 20 comes from connection 2 (it resumes from 17): the kill needs no window after the gap.
      { layer: 'kill', at: 20, onAck: true },
    ],
  );
  t.same(
    placedSteps(stream([{ layer: 'gap', at: 59, connection: 1 }]), { sealed: true }),
    [{ layer: 'gap', at: 0, connection: 1 }],
    'a gap never skips the last EVENT',
  );
  // Seed 12, run 3: a kill when ACK 2 arrived found the consumer a window further (it resumed from 15).
  t.same(
    placedSteps(
      stream([
        { layer: 'duplicate', at: 5, connection: 2 },
        { layer: 'kill', at: 2, onAck: true },
      ]),
      { sealed: true },
    ),
    [
      { layer: 'duplicate', at: 7, connection: 2 },
      { layer: 'kill', at: 2, onAck: true },
    ],
  );
});

t.test('every schedule drawn: hooks first, connections walked in order, harness faults a window after an end', async (t) => {
  let walked = 0;
  for (const s of fc.sample(ledgerChaos.schedules(), { seed: 11, numRuns: 3000 })) {
    if (s.kind !== 'stream') continue;
    const placed = placedSteps(s, { sealed: true });
    const hooks = placed.filter((x): x is Extract<Step, { layer: 'hook' }> => x.layer === 'hook');
    const ending = hooks.filter((h) => h.action !== 'stop');
    t.ok(ending.length <= 1, 'at most one hook ends process 1');
    const lastHook = Math.max(-1, ...hooks.map((h) => h.at));
    if (ending.length) t.equal(ending[0]!.at, lastHook, 'and no hook comes after it');
    const order = (x: Step) => at(x) * 3 + (x.layer === 'hook' || onAck(x) ? 2 : byHarness(x) ? 0 : 1);
    const conn = (x: Step) => ('connection' in x ? x.connection : 0);
    const seqOrder = placed.filter((x) => 'at' in x).sort((a, b) => order(a) - order(b) || conn(a) - conn(b));
    let connection = 1;
    let lastEnd = -1;
    let cursor = -1;
    let busy = false;
    for (const x of seqOrder) {
      busy = !endsConnection(x);
      if (lastHook >= 0 && x.layer !== 'hook' && (endsConnection(x) || byHarness(x)))
        t.ok(at(x) >= lastHook + (windowed(x) ? s.window : 1), `${x.layer} at ${at(x)} after the hooks (last ${lastHook})`);
      if (windowed(x) && lastEnd >= 0) t.ok(at(x) >= lastEnd + s.window, `${x.layer} at ${at(x)}: a window (${s.window}) after the end at ${lastEnd}`);
      if (onAck(x)) t.ok(at(x) > cursor, `a kill at ACK ${at(x)}: an ACK still to come past the cursor (${cursor})`);
      if ('connection' in x) t.equal(x.connection, connection, `${x.layer} at ${at(x)} on the connection live then`);
      if ('connection' in x) t.ok(at(x) > cursor, `${x.layer} at ${at(x)} past the cursor (${cursor}) its connection resumed from`);
      if (x.layer === 'gap') t.ok(x.at < s.count - 1, 'a gap before the last EVENT');
      if (endsConnection(x)) {
        connection++;
        // An upstream byte limit lets up to `bytes` of ACKs through; a kill at ACK k finds the consumer up to a window past k.
        // A skipped EVENT lets one more out.
        lastEnd =
          x.layer === 'lost-ack' ? x.at + Math.ceil(x.bytes / 5) : x.layer === 'kill' && x.onAck ? x.at + s.window : x.layer === 'gap' ? x.at + 1 : at(x);
        const committed = x.layer === 'lost-ack' || (x.layer === 'kill' && x.onAck) || (x.layer === 'hook' && x.point === 'ack');
        cursor = committed ? lastEnd : at(x) - 1;
        walked++;
      }
    }
    const move = placed.find((x) => x.layer === 'retention');
    if (move?.layer === 'retention') {
      t.equal(move.connection, connection, 'a retention move on the connection after the last end');
      t.ok(
        move.to > cursor + (s.forgetAcked ? 1 : 0) && move.to < s.count,
        'to a start past that connection cursor (and past the log a forgetful publisher kept)',
      );
      t.notOk(busy, 'and no step after that end: a RESYNC sends no EVENT');
    }
  }
  t.ok(walked > 1000, `${walked} connection ends walked`);
});

t.test('a retention move only where it moves the log, and no step waits for an EVENT after it', async (t) => {
  // Seed 20261204, run 43: the pause before EVENT 11 waited on connection 2, which RESYNC ended.
  t.same(
    placedSteps(
      stream([
        { layer: 'retention', connection: 2, to: 11 },
        { layer: 'pause', at: 11, ms: 777 },
        { layer: 'hook', action: 'raise', point: 'ack', at: 4 },
      ]),
      { sealed: true },
    ),
    [
      { layer: 'pause', at: 11, ms: 777 },
      { layer: 'hook', action: 'raise', point: 'ack', at: 4 },
    ],
  );
  // Seed 20261203, run 16: the last end left the cursor at 9 of 11 EVENTs; a publisher that
  // forgets what was acknowledged already starts at 10.
  const run16 = (forgetAcked: boolean) =>
    placedSteps(
      stream(
        [
          { layer: 'malformed', at: 10, form: 2, connection: 1 },
          { layer: 'retention', connection: 2, to: 6 },
        ],
        { count: 12, forgetAcked },
      ),
      { sealed: true },
    ).find((x) => x.layer === 'retention');
  t.same(run16(false), { layer: 'retention', connection: 2, to: 10 }, 'the boundary: RESUME 9 against a log from 10');
  t.same(run16(true), { layer: 'retention', connection: 2, to: 11 }, 'past what the publisher forgot');
});

t.test('a kill when an ACK arrives is kept wherever that ACK is still to come (the race that catches ack-before-commit)', async (t) => {
  // Seed 3, run 10: gaps at 0 and 1 and a cut pushed to 16 left no room for a kill at ACK 22
  // a whole window (15) after the cut; the ACK itself shows a live, connected process.
  t.same(
    placedSteps(
      stream(
        [
          { layer: 'kill', at: 70, onAck: true },
          { layer: 'gap', at: 1, connection: 1 },
          { layer: 'cut', at: 102, ms: 1013 },
          { layer: 'gap', at: 70, connection: 1 },
          { layer: 'gap', at: 24, connection: 1 },
        ],
        { count: 24, window: 15 },
      ),
      { sealed: true },
    ).filter((x) => x.layer === 'kill' || x.layer === 'cut'),
    [
      { layer: 'kill', at: 22, onAck: true },
      // Not 16: with EVENT 1 skipped, connection 2 had EVENTs up to 16 in flight, and the cut
      // before EVENT 16 met it (processes 3–5 then found no proxy, and the gap at 22 none).
      { layer: 'cut', at: 17, ms: 1013 },
    ],
  );
  let drawn = 0;
  let kept = 0;
  for (const s of fc.sample(ledgerChaos.schedules(), { seed: 11, numRuns: 3000 })) {
    if (s.kind !== 'stream' || !s.steps.some(onAck)) continue;
    drawn++;
    if (placedSteps(s, { sealed: true }).some(onAck)) kept++;
  }
  // Kept only a window after the previous end, 202 of 258 (78 %); now only past the last hook and the cursor.
  t.ok(kept >= 0.95 * drawn, `${kept} of ${drawn} kills at an ACK kept`);
});

t.test('a process that a hook or a refused line ends must exit non-zero, up to the first fault the harness starts', async (t) => {
  const expected = (steps: Step[], more: Partial<Stream> = {}) =>
    (ledgerChaosScenario(stream(steps, more), { sealed: true }).consumer as { incarnations: { expect_exit: string }[] }).incarnations.map((i) => i.expect_exit);
  // Seed 1, run 2: process 1 exits at its hook, process 2 meets a conflict and swallow-error stayed
  // connected until the publisher gave up, then exited 0 unjudged.
  const run2: Step[] = [
    { layer: 'conflict', at: 30, back: 0, delta: -722, connection: 1 },
    { layer: 'hook', action: 'exit', point: 'apply', at: 110 },
    { layer: 'conflict', at: 14, back: 8, delta: 847, connection: 1 },
  ];
  t.same(expected(run2, { count: 12, window: 14 }), ['nonzero', 'nonzero', 'nonzero']);
  t.same(expected([...run2, { layer: 'loss', percent: 5 }], { count: 12, window: 14 }), ['any'], 'packet loss may close any connection');
  t.same(
    expected([
      { layer: 'gap', at: 10, connection: 1 },
      { layer: 'cut', at: 30, ms: 500 },
      { layer: 'malformed', at: 50, form: 0, connection: 3 },
    ]),
    ['nonzero'],
    'after a cut a restart may find no proxy: connection 3 need not be process 3',
  );
  t.same(
    expected([
      { layer: 'stall', at: 5, connection: 1 },
      { layer: 'gap', at: 20, connection: 2 },
    ]),
    ['any', 'nonzero'],
    'a stall ends process 1 on its own timeout; process 2 meets the gap',
  );
  t.same(expected([{ layer: 'duplicate', at: 5, connection: 1 }]), ['any']);
  t.same(exitsInError([{ layer: 'hook', action: 'stop', point: 'ack', at: 3 }]), []);
});
