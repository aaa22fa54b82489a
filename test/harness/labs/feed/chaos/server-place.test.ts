// Where server chaos steps land: a cut of probe 1 holds instance 1 too (probe 1 follows it), so
// no kill or pause falls while it is away; and each window keeps the next step on its instance or
// probe SETTLE_SPANS away, so that the probe is back and subscribed when that step comes.
import t from 'tap';
import { placeServer, SETTLE_SPANS, type ServerSchedule, type ServerStep } from '../../../../../harness/labs/feed/chaos/server-place.js';

/** 18 script blocks at the normal pace: blocks 11..28, steps from block 12 (a step at `at` n lands at 12 + n % room). */
const schedule = (...steps: ServerStep[]): ServerSchedule => ({ kind: 'server', seed: 1, blocks: 18, dense: false, steps });
const words = (...steps: ServerStep[]) => placeServer(schedule(...steps)).placed.map((p) => p.words);

t.test('a cut of probe 1 and a kill of instance 1 never overlap; a cut of probe 2 may', async (t) => {
  const kill: ServerStep = { layer: 'kill', at: 0, down: 2 };
  t.same(words(kill, { layer: 'cut', at: 3, probe: 1, span: 1 }), ['SIGKILL to instance 1 before block 12, started again before block 14']);
  t.same(words({ layer: 'cut', at: 0, probe: 1, span: 2 }, { layer: 'pause', at: 1, span: 1 }), ["probe 1's proxy down before block 12 until before block 14"]);
  t.same(words(kill, { layer: 'cut', at: 3, probe: 2, span: 1 }), [
    'SIGKILL to instance 1 before block 12, started again before block 14',
    "probe 2's proxy down before block 15 until before block 16",
  ]);
});

t.test('the next step on an instance waits SETTLE_SPANS blocks after a window ends', async (t) => {
  t.equal(SETTLE_SPANS, 3);
  const kill: ServerStep = { layer: 'kill', at: 0, down: 2 };
  // Ends before block 14: a kill from block 17 is within the settling time, from 18 it is not.
  t.same(words(kill, { layer: 'kill', at: 5, down: 2 }).length, 1, 'from block 17: left out');
  t.same(words(kill, { layer: 'kill', at: 6, down: 2 }), [
    'SIGKILL to instance 1 before block 12, started again before block 14',
    'SIGKILL to instance 1 before block 18, started again before block 20',
  ]);
  // A later window placed before an earlier one keeps the same distance.
  t.same(
    words({ layer: 'kill', at: 6, down: 2 }, { layer: 'pause', at: 3, span: 1 }).length,
    1,
    'a pause ending before block 16, then settling, would meet the kill at 18',
  );
});
