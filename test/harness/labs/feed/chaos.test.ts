// The feed lab's chaos model keeps its fairness rules (harness/labs/feed/chaos/place.ts) in every
// schedule it draws, read off the scenario each one makes: what a correct consumer could fail
// through no fault of its own never turns up. test/harness/chaos/model.test.ts checks that they load.
import fc from 'fast-check';
import t from 'tap';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { feedChaos } from '../../../../harness/labs/feed/chaos/chaos.js';
import { chainPlanOf } from '../../../../harness/labs/feed/scenario/load.js';
import type { FeedFile } from '../../../../harness/labs/feed/scenario/schema.js';

interface Fault {
  name: string;
  network?: { down?: boolean; toxic?: string };
  process?: { signal: string };
  loss?: unknown;
  start: { before_block?: number };
}
type Drawn = FeedFile & { faults?: Fault[]; socket_buffer_bytes?: number; time_scale?: number };

const drawn = fc
  .sample(feedChaos.schedules(), { seed: 11, numRuns: 1500 })
  .filter((s) => s.kind === 'stream')
  .map((s) => feedChaos.scenario(s, { sealed: true }) as unknown as Drawn);

const hooksOf = (f: Drawn) => f.consumer.processes?.[0]?.fault?.split(',') ?? [];
const lossy = (x: Fault) => x.network?.down === true || ['timeout', 'reset_peer', 'limit_data'].includes(x.network?.toxic ?? '') || x.loss !== undefined;
const deepOrStale = (f: Drawn) => f.chain.retention_ms !== undefined || (f.chain.reorgs ?? []).some((r) => r.deep);
/** The schedules (by index) breaking a rule, and why: the rule holds when there are none. */
const breaking = (why: (f: Drawn) => string | undefined) => drawn.flatMap((f, i) => (why(f) ? [`#${i}: ${why(f)}`] : []));

t.test('nothing lossy, no signal, in the first second of the script', async (t) => {
  t.same(
    breaking((f) => {
      const slow = f.socket_buffer_bytes !== undefined;
      const first = f.chain.initial_blocks! + Math.ceil((slow ? 500 : 1000) / (f.chain.block_interval_ms! * f.time_scale!));
      return (f.faults ?? []).find((x) => x.start.before_block !== undefined && (lossy(x) || x.process) && x.start.before_block < first)?.name;
    }),
    [],
  );
});

t.test('a half-open link stands alone: no cut, no pause, no loss; its own heartbeats', async (t) => {
  const halfOpen = drawn.filter((f) => (f.faults ?? []).some((x) => x.network?.toxic === 'timeout'));
  t.ok(halfOpen.length > 20, `${halfOpen.length} half-open schedules`);
  t.same(
    breaking((f) => {
      const faults = f.faults ?? [];
      if (!faults.some((x) => x.network?.toxic === 'timeout')) return undefined;
      const beside = faults.find((x) => x.network?.down || x.loss || x.process?.signal === 'SIGSTOP');
      if (beside) return `${beside.name} beside it`;
      const beats = [f.server?.ping_ms, f.server?.idle_ms, f.consumer.ping_ms, f.consumer.idle_ms];
      return beats.join() === '500,20000,1000,2000' ? undefined : `heartbeats ${beats.join()}`;
    }),
    [],
  );
});

t.test('an exit hook only where it must fire; one stop at most', async (t) => {
  t.ok(drawn.filter((f) => hooksOf(f).some((h) => h.startsWith('exit@'))).length > 30, 'exit hooks are drawn');
  t.same(
    breaking((f) => {
      const items = hooksOf(f);
      if (items.filter((h) => h.startsWith('stop@')).length > 1) return `two stops: ${items}`;
      // The events process 1 surely applies: above block 9 (the first snapshot, at most two blocks late).
      const sim = simulate(chainPlanOf(f), f.consumer.topics);
      const applied = sim.events.filter((e) => Number(e.cursor.split(':')[1]) > f.chain.initial_blocks! - 1).length;
      for (const h of items.filter((x) => x.startsWith('exit@'))) {
        const [, point, n] = /^exit@(\w+):(\d+)$/.exec(h)!;
        if (point !== 'apply' && point !== 'commit') {
          if (n !== '1') return h;
        } else if (Number(n) > applied) return `${h}: ${applied} events surely applied`;
        else if (deepOrStale(f)) return `${h}: a later snapshot may skip events`;
        else if (point === 'commit' && items.includes(`raise@apply:${n}`)) return `${h}: its event is rolled back`;
      }
      return undefined;
    }),
    [],
  );
});

t.test('an unknown op only where nothing else closes a connection; no toxic, no bad frame for a slow reader', async (t) => {
  t.same(
    breaking((f) => {
      const misbehave = f.server?.misbehave ?? [];
      const slow = f.socket_buffer_bytes !== undefined;
      if (slow && misbehave.some((m) => m.action === 'malformed' || m.action === 'number-amount')) return 'a bad frame for a slow reader';
      if (slow && (f.faults ?? []).some((x) => x.network?.toxic)) return 'a toxic for a slow reader';
      if (!misbehave.some((m) => m.action === 'unknown-op')) return undefined;
      const closing = (f.faults ?? []).find((x) => lossy(x) || x.process?.signal === 'SIGKILL');
      if (closing) return closing.name;
      if (misbehave.some((m) => m.action !== 'unknown-op' && m.action !== 'resend')) return 'another bad frame or a stall';
      if (hooksOf(f).some((h) => !h.startsWith('stop@'))) return 'an exit or raise hook';
      if (deepOrStale(f)) return 'a stale cursor or a deep reorganisation';
      return f.consumer.idle_ms! >= 4000 ? undefined : `idle_ms ${f.consumer.idle_ms}`;
    }),
    [],
  );
});

t.test('the oversized frame never through a slicer, a starved link or loss', async (t) => {
  t.same(
    breaking((f) =>
      (f.server?.misbehave ?? []).some((m) => m.form === 'oversized')
        ? (f.faults ?? []).find((x) => x.loss || ['slicer', 'bandwidth'].includes(x.network?.toxic ?? ''))?.name
        : undefined,
    ),
    [],
  );
});

t.test("each misbehaviour's event is the first with its cursor (the server finds it by cursor); an amount's is a Transfer", async (t) => {
  type Rule = { action: string; event?: number; form?: string };
  const withRules = drawn.filter((f) => ((f.server as { misbehave?: Rule[] } | undefined)?.misbehave ?? []).length > 0);
  t.ok(withRules.length > 200, `${withRules.length} schedules with misbehaviour`);
  t.ok(
    withRules.some((f) => (f.chain.reorgs ?? []).length > 0),
    'some of them reorganise the chain (a cursor then comes again, on another event)',
  );
  t.same(
    breaking((f) => {
      const rules = (f.server as { misbehave?: Rule[] } | undefined)?.misbehave ?? [];
      if (rules.length === 0) return undefined;
      const { produced } = simulate(chainPlanOf(f), f.consumer.topics);
      for (const rule of rules) {
        const e = produced[rule.event! - 1];
        if (!e) return `${rule.action} at event ${rule.event}: no such event`;
        if (produced.findIndex((p) => p.cursor === e.cursor) !== rule.event! - 1) return `${rule.action} at event ${rule.event}: ${e.cursor} came before`;
        if ((rule.action === 'number-amount' || rule.form === 'noncanonical-amount') && e.type !== 'Transfer')
          return `${rule.action} at event ${rule.event}: a ${e.type}`;
      }
      return undefined;
    }),
    [],
  );
});
