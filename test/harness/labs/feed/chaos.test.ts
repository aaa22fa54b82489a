// The feed lab's chaos model keeps its fairness rules (harness/labs/feed/chaos/place.ts) in every
// schedule it draws, read off the scenario each one makes: what a correct consumer could fail
// through no fault of its own never turns up. test/harness/chaos/model.test.ts checks that they load.
import fc from 'fast-check';
import t from 'tap';
import { type SimulatedChain, simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { feedChaos } from '../../../../harness/labs/feed/chaos/chaos.js';
import { chainPlanOf } from '../../../../harness/labs/feed/scenario/load.js';
import type { FeedFile } from '../../../../harness/labs/feed/scenario/schema.js';

interface Fault {
  name: string;
  network?: { down?: boolean; toxic?: string; stream?: string };
  process?: { signal: string };
  loss?: unknown;
  start: { before_block?: number };
  end?: { before_block?: number; after_ms?: number };
}
type Drawn = FeedFile & { faults?: Fault[]; socket_buffer_bytes?: number; time_scale?: number };

const drawn = fc
  .sample(feedChaos.schedules(), { seed: 11, numRuns: 1500 })
  .filter((s) => s.kind === 'stream')
  .map((s) => feedChaos.scenario(s, { sealed: true }) as unknown as Drawn);

/** The chain a drawn scenario's file makes, simulated here from the file alone (once: many rules below read it). */
const simulations = new WeakMap<Drawn, SimulatedChain>();
const simulated = (f: Drawn): SimulatedChain => {
  let sim = simulations.get(f);
  if (!sim) simulations.set(f, (sim = simulate(chainPlanOf(f), f.consumer.topics)));
  return sim;
};
const hooksOf = (f: Drawn) => f.consumer.processes?.[0]?.fault?.split(',') ?? [];
const lossy = (x: Fault) => x.network?.down === true || ['timeout', 'reset_peer', 'limit_data'].includes(x.network?.toxic ?? '') || x.loss !== undefined;
const deepOrStale = (f: Drawn) => f.chain.retention_ms !== undefined || (f.chain.reorgs ?? []).some((r) => r.deep);
/** A misbehaviour rule as the scenario says it. */
type MisRule = { action: string; event: number; connection?: number; from_connection?: number };
const rulesOf = (f: Drawn) => (f.server?.misbehave ?? []) as MisRule[];
/** Whether a rule may fire on connection 1: it names it, or it takes the first connection (from 1 on) that sends its event. */
const mayTakeFirst = (m: MisRule) => (m.from_connection === undefined ? (m.connection ?? 1) === 1 : m.from_connection === 1);
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
      const sim = simulated(f);
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
      const { produced } = simulated(f);
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

// The aim (harness/labs/feed/chaos/aim.ts): each fault placed where it meets the consumer.
const down = (f: Drawn) => (f.faults ?? []).filter((x) => x.network?.down === true) as (Fault & { end: { before_block: number } })[];
const quietAccount = (f: Drawn) => f.consumer.topics.length === 1 && f.chain.retention_ms !== undefined && f.chain.accounts === 12;
/** The blocks of the events the consumer was sent that a reorganisation then abandoned. */
function abandonedEvents(f: Drawn): number[] {
  const sim = simulated(f);
  return sim.produced.filter((e) => e.payload.blockHash !== sim.canonicalHash(blockOf(e.cursor))).map((e) => blockOf(e.cursor));
}
const blockOf = (cursor: string) => Number(cursor.split(':')[1]);
/** The highest block among the events produced up to each one: the block the script had reached when it produced it. */
const reachedBlocks = (produced: readonly { cursor: string }[]): number[] => {
  let highest = 0;
  return produced.map((e) => (highest = Math.max(highest, blockOf(e.cursor))));
};

t.test('a reorganisation abandons blocks the subscribed consumer was sent, while connected or cut off after one of them', async (t) => {
  let connected = 0;
  let away = 0;
  const missed: string[] = [];
  for (const [i, f] of drawn.entries()) {
    const shallow = (f.chain.reorgs ?? []).filter((r) => !r.deep);
    if (shallow.length === 0) continue; // a quiet account is chosen to hold abandoned events (seed 20261201 run 7)
    const abandoned = abandonedEvents(f);
    for (const [k, r] of shallow.entries()) {
      const fork = r.after_block - r.depth + 1;
      // The script starts once the consumer has subscribed, above its first snapshot: every block it mines is sent.
      if (fork <= f.chain.initial_blocks!) missed.push(`#${i}: reorganisation ${k + 1} forks at ${fork}, before the script`);
      const cut = down(f).find((x) => x.start.before_block! <= r.after_block && x.end.before_block > r.after_block);
      if (cut) away++;
      else connected++;
      // Away: the consumer holds an abandoned event when the cut starts, so it resumes from a cursor the reorganisation abandoned.
      const last = cut ? cut.start.before_block! - 1 : r.after_block;
      const first = abandoned.find((b) => b >= fork && b <= last);
      if (first === undefined) missed.push(`#${i}: reorganisation after ${r.after_block} (depth ${r.depth})${cut ? ` while ${cut.name}` : ''}`);
      // A link that lets nothing through from before the first of them until the reorganisation (and the reconnect after it) hides them too.
      const closed = (f.faults ?? []).find((x) => {
        if (cut || first === undefined || !['timeout', 'reset_peer', 'limit_data'].includes(x.network?.toxic ?? '')) return false;
        const end = x.start.before_block! + Math.ceil((x as { end?: { after_ms: number } }).end!.after_ms / f.chain.block_interval_ms!) + 2;
        return x.start.before_block! <= first && end > r.after_block;
      });
      if (closed) missed.push(`#${i}: reorganisation after ${r.after_block} behind ${closed.name}`);
    }
  }
  t.ok(connected > 100 && away > 30, `${connected} reorganisations while connected, ${away} while away`);
  // A chain with no followed event in reach of a position leaves the drawn one: rare. A stale
  // cursor's cut (most of a short script) may cover one where no other place is left.
  const staleCut = missed.filter((m) => m.includes('while stale-cursor'));
  const other = missed.filter((m) => !staleCut.includes(m));
  t.ok(other.length <= (connected + away) / 25, `${other.length} of ${connected + away} missed: ${other.slice(0, 5).join('; ')}`);
  t.ok(staleCut.length <= (connected + away) / 25, `${staleCut.length} of ${connected + away} under a stale cursor's cut`);
});

t.test(
  "reorganisations keep apart: a shallow one abandons no block of the previous one's new branch, nor of the way back from its cut while away",
  async (t) => {
    let pairs = 0;
    t.same(
      breaking((f) => {
        const reorgs = f.chain.reorgs ?? [];
        for (const [k, r] of reorgs.entries()) {
          const before = reorgs[k - 1];
          if (!before || r.deep) continue;
          pairs++;
          const fork = r.after_block - r.depth + 1;
          const head = before.after_block - before.depth + (before.length ?? before.depth);
          // The cut while away of the one before ends a mined block or more after its new head, and a reconnect takes up to two.
          const cut = down(f).find((x) => x.name.endsWith('-away') && x.start.before_block! <= before.after_block && x.end.before_block > before.after_block);
          const back = cut ? cut.end.before_block + 1 : head;
          if (fork <= back) return `reorganisation after ${r.after_block} forks at ${fork}, the one before is not over until ${back}`;
        }
        return undefined;
      }),
      [],
    );
    t.ok(pairs > 50, `${pairs} reorganisations after another`);
  },
);

t.test("a toxic on what the server sends lasts where lines flow: outside a stalled server's silence and every cut", async (t) => {
  let beside = 0;
  const inside = breaking((f) => {
    const toxics = (f.faults ?? []).filter((x) => ['latency', 'slicer', 'bandwidth'].includes(x.network?.toxic ?? '') && x.network?.stream !== 'upstream');
    const stalls = rulesOf(f).filter((m) => m.action === 'stall') as (MisRule & { ms?: number })[];
    if (toxics.length === 0 || (stalls.length === 0 && down(f).length === 0)) return undefined;
    beside++;
    const period = f.chain.block_interval_ms! * f.time_scale!;
    const { produced } = simulated(f);
    const silences = [
      ...stalls.map((m) => {
        const from = blockOf(produced[m.event - 1]!.cursor);
        return { from, to: from + Math.ceil((m.ms ?? f.consumer.idle_ms!) / period) + 2 };
      }),
      ...down(f).map((x) => ({ from: x.start.before_block!, to: x.end.before_block + 2 })),
    ];
    for (const x of toxics) {
      const from = x.start.before_block!;
      const to = from + Math.ceil((x as { end?: { after_ms: number } }).end!.after_ms / f.chain.block_interval_ms!) + 1;
      let clear = 0;
      for (let b = from; b < to; b++) if (!silences.some((w) => b >= w.from && b < w.to)) clear++;
      // Two of the server's pings at least cross it (ping_ms is real time).
      if (clear < Math.ceil((2 * f.server!.ping_ms!) / period))
        return `${x.name} from block ${from} to ${to}: ${clear} blocks clear of ${JSON.stringify(silences)}`;
    }
    return undefined;
  });
  t.ok(beside > 30, `${beside} schedules with a toxic downstream beside a stall or a cut`);
  // Where no mined block leaves room (a short script full of cuts), the toxic keeps its drawn block.
  t.ok(inside.length <= beside / 10, `${inside.length} of ${beside} inside a silence: ${inside.slice(0, 5).join('; ')}`);
});

t.test("packet loss never covers a reorganisation's abandoned events or its revoke: it starts after every one's stretch", async (t) => {
  let beside = 0;
  t.same(
    breaking((f) => {
      const loss = (f.faults ?? []).find((x) => x.loss !== undefined);
      const reorgs = f.chain.reorgs ?? [];
      if (!loss || reorgs.length === 0) return undefined;
      beside++;
      const from = loss.start.before_block;
      if (from === undefined) return `${loss.name} from the start, beside ${reorgs.length} reorganisation(s)`;
      const abandoned = abandonedEvents(f);
      for (const r of reorgs) {
        const fork = r.after_block - r.depth + 1;
        const away = down(f).find((x) => /-away$/.test(x.name) && x.start.before_block! <= r.after_block && x.end.before_block > r.after_block);
        const stretchEnd = Math.max(r.after_block + 2, away ? away.end.before_block + 2 : 0);
        const firstHeld = abandoned.find((b) => b >= fork) ?? fork;
        if (from <= stretchEnd && from >= firstHeld - 2)
          return `${loss.name} from block ${from}, inside the stretch ${firstHeld - 2}..${stretchEnd} of the reorganisation after ${r.after_block}`;
        if (from < firstHeld - 2) return `${loss.name} from block ${from}, before the reorganisation after ${r.after_block}`;
      }
      return undefined;
    }),
    [],
  );
  t.ok(beside >= 10, `${beside} schedules with loss beside reorganisations (loss is a rare step)`);
});

t.test('a cut falls where events flow and the consumer is connected: within the script, outside every other cut', async (t) => {
  let cuts = 0;
  t.same(
    breaking((f) => {
      const windows = down(f);
      for (const x of windows.filter((w) => /^cut-\d+$/.test(w.name))) {
        cuts++;
        if (
          x.start.before_block! <= f.chain.initial_blocks! ||
          x.end.before_block > f.chain.initial_blocks! + (f.time as { duration_ms: number }).duration_ms / f.chain.block_interval_ms!
        )
          return `${x.name} outside the script`;
        const other = windows.find((w) => w !== x && w.start.before_block! < x.end.before_block && x.start.before_block! < w.end.before_block);
        if (other) return `${x.name} inside ${other.name}`;
      }
      return undefined;
    }),
    [],
  );
  t.ok(cuts > 60, `${cuts} cuts`);
});

t.test('a hook on a point process 1 reaches: a revoke only where a reorganisation abandons its events, an apply before any SIGKILL', async (t) => {
  t.same(
    breaking((f) => {
      const items = hooksOf(f);
      if (items.some((h) => /@revoke:/.test(h)) && abandonedEvents(f).length === 0 && !(f.chain.reorgs ?? []).some((r) => r.deep))
        return 'a revoke hook, no revoke';
      const kills = (f.faults ?? []).filter((x) => x.process?.signal === 'SIGKILL').map((x) => x.start.before_block!);
      if (kills.length === 0 || deepOrStale(f)) return undefined;
      const sim = simulated(f);
      const before = sim.events.filter((e) => blockOf(e.cursor) > f.chain.initial_blocks! - 1 && blockOf(e.cursor) < Math.min(...kills) - 1).length;
      const late = items.find((h) => /@(apply|commit):/.test(h) && Number(h.split(':')[1]) > Math.max(1, before));
      return late ? `${late}: ${before} events before the first SIGKILL` : undefined;
    }),
    [],
  );
});

t.test('a bad frame, resend or stall on connection 1 where nothing closes a connection', async (t) => {
  t.same(
    breaking((f) => {
      const closing = (f.faults ?? []).length > 0 || deepOrStale(f) || hooksOf(f).some((h) => !h.startsWith('stop@'));
      const rules = rulesOf(f);
      const elsewhere = rules.find((m) => m.from_connection !== undefined || (m.connection ?? 1) !== 1);
      return elsewhere && !closing && !rules.some((m) => ['malformed', 'number-amount', 'stall'].includes(m.action))
        ? `${elsewhere.action} on connection ${elsewhere.connection ?? `from ${elsewhere.from_connection}`}`
        : undefined;
    }),
    [],
  );
});

t.test(
  'beside anything that closes a connection, a misbehaviour fires whatever the reconnects: from a connection on, on an event the consumer is surely sent',
  async (t) => {
    const counts = { from1: 0, from2: 0, exact: 0 };
    t.same(
      breaking((f) => {
        const rules = rulesOf(f).filter((m) => m.action !== 'unknown-op');
        if (rules.length === 0) return undefined;
        const closing =
          (f.faults ?? []).some((x) => lossy(x) || x.process?.signal === 'SIGKILL' || x.name.startsWith('slow-reader')) ||
          deepOrStale(f) ||
          hooksOf(f).some((h) => !h.startsWith('stop@'));
        const sim = simulated(f);
        const { produced } = sim;
        const reached = reachedBlocks(produced);
        // Connection 1 has surely ended from: a cut (stale, away), a SIGKILL, a half-open link, a slow reader's overflow.
        const sureFrom = (f.faults ?? []).flatMap((x) => {
          if (x.name.startsWith('slow-reader')) return [x.start.before_block! + Math.ceil(1500 / (f.chain.block_interval_ms! * f.time_scale!))];
          return x.network?.down || x.network?.toxic === 'timeout' || x.process?.signal === 'SIGKILL' ? [x.start.before_block!] : [];
        });
        const sure = Math.min(...sureFrom);
        // Under a snapshot taken again: a stale cursor's cut and the confirmations above it, a deep reorganisation's new branch.
        const under: [number, number][] = (f.faults ?? []).flatMap((x) =>
          x.name.startsWith('stale-cursor') ? [[x.start.before_block! - 1, (x.end as { before_block: number }).before_block + 2] as [number, number]] : [],
        );
        for (const r of f.chain.reorgs ?? []) if (r.deep) under.push([r.after_block - r.depth + 1, r.after_block - r.depth + (r.length ?? r.depth) + 2]);
        const endsFirst = Math.min(...rules.filter((m) => mayTakeFirst(m) && ['malformed', 'number-amount', 'stall'].includes(m.action)).map((m) => m.event));
        for (const m of rules) {
          const e = produced[m.event - 1]!;
          const b = blockOf(e.cursor);
          if (m.from_connection === undefined) {
            counts.exact++;
            if (closing) return `${m.action} at event ${m.event} on connection ${m.connection ?? 1}, beside a fault that closes one`;
            continue;
          }
          if (m.from_connection === 1) counts.from1++;
          else counts.from2++;
          if (sim.canonicalHash(b) !== e.payload.blockHash) return `${m.action} at event ${m.event}: its block ${b} is abandoned`;
          if (under.some(([lo, hi]) => b >= lo && b <= hi)) return `${m.action} at event ${m.event}: block ${b} under a snapshot taken again`;
          if (m.from_connection === 2 && reached[m.event - 1]! < sure && !(m.event > endsFirst))
            return `${m.action} at event ${m.event} from connection 2: produced at block ${reached[m.event - 1]}, before connection 1 surely ends (${sure}) and after no rule that ends it`;
          if (m.from_connection > 2) return `${m.action} from connection ${m.from_connection}`;
        }
        return undefined;
      }),
      [],
    );
    t.ok(counts.from2 > 100 && counts.from1 > 100 && counts.exact > 100, `rules: ${JSON.stringify(counts)}`);
  },
);

t.test(
  'a resend rides an event with an event of the followed accounts before it on the final chain (beside retention, in its block): it has something to send again',
  async (t) => {
    let resends = 0;
    t.same(
      breaking((f) => {
        const sim = simulated(f);
        const canonical = (j: number) => sim.canonicalHash(blockOf(sim.produced[j]!.cursor)) === sim.produced[j]!.payload.blockHash;
        for (const m of rulesOf(f).filter((x) => x.action === 'resend')) {
          resends++;
          const before = sim.produced.slice(0, m.event - 1).filter((_, j) => canonical(j));
          if (before.length === 0) return `resend at event ${m.event}: every event before it is abandoned`;
          const block = blockOf(sim.produced[m.event - 1]!.cursor);
          if (f.chain.retention_ms !== undefined && !before.some((e) => blockOf(e.cursor) === block))
            return `resend at event ${m.event} beside retention: no event before it in block ${block}`;
        }
        return undefined;
      }),
      [],
    );
    t.ok(resends > 100, `${resends} resends`);
  },
);

t.test('a resend on connection 1 comes before the bad frame or stall that ends it', async (t) => {
  let resends = 0;
  t.same(
    breaking((f) => {
      const onFirst = rulesOf(f).filter(mayTakeFirst);
      const ends = Math.min(...onFirst.filter((m) => ['malformed', 'number-amount', 'stall'].includes(m.action)).map((m) => m.event));
      const resend = onFirst.find((m) => m.action === 'resend');
      if (resend && Number.isFinite(ends)) resends++;
      // Only where no event before it is left: the first event of the script.
      return resend && resend.event > ends && ends > 1 ? `resend at event ${resend.event}, connection 1 ended at ${ends}` : undefined;
    }),
    [],
  );
  t.ok(resends > 20, `${resends} resends beside a bad frame or stall on connection 1`);
});

t.test("a slow reader's stretch has no cut or SIGKILL in it: the server's queue fills only while its link is up", async (t) => {
  let slow = 0;
  t.same(
    breaking((f) => {
      if (f.socket_buffer_bytes === undefined) return undefined;
      slow++;
      const stop = (f.faults ?? []).find((x) => x.name.startsWith('slow-reader'))!.start.before_block!;
      // Its one second without reading, and as long again for the queue to fill, in blocks of 100 ms.
      const stretch = Math.ceil(1500 / (f.chain.block_interval_ms! * f.time_scale!));
      const inside = (f.faults ?? []).find(
        (x) => (x.network?.down || x.process?.signal === 'SIGKILL') && x.start.before_block! >= stop && x.start.before_block! < stop + stretch,
      );
      return inside ? `${inside.name} before block ${inside.start.before_block}, the slow reader stops before ${stop}` : undefined;
    }),
    [],
  );
  t.ok(slow > 50, `${slow} slow readers`);
});

t.test('a bad frame, resend or stall on connection 1 rides an event produced before the first fault that closes it', async (t) => {
  let rules = 0;
  const late: string[] = [];
  for (const [i, f] of drawn.entries()) {
    const closing = (f.faults ?? []).filter((x) => lossy(x) || x.process?.signal === 'SIGKILL').map((x) => x.start.before_block!);
    // Past a stall for a while, which may or may not end connection 1, a rule takes whichever connection sends its event (from 1 on), on purpose.
    const stall = rulesOf(f).find((m) => m.action === 'stall' && (m as { ms?: number }).ms !== undefined && mayTakeFirst(m));
    const onFirst = rulesOf(f).filter((m) => mayTakeFirst(m) && !(stall && m.event > stall.event));
    if (closing.length === 0 || onFirst.length === 0) continue;
    const { produced } = simulated(f);
    // The block the script had reached when it produced an event: a reorganisation's new branch comes after its block.
    const reached = reachedBlocks(produced);
    for (const m of onFirst) {
      rules++;
      if (reached[m.event - 1]! >= Math.min(...closing) - 1) late.push(`#${i}: ${m.action} at event ${m.event}`);
    }
  }
  t.ok(rules > 100, `${rules} rules on connection 1 beside a closing fault`);
  // Only where the script produced no event before the first closing fault (a stale cut, a reset
  // or a cut while away at its start): 27 of 338 at seed 11 since reorganisations keep apart.
  t.ok(late.length <= rules / 12, `${late.length} late: ${late.slice(0, 5).join('; ')}`);
});

t.test('a toxic lasts long enough to meet what crosses it: a ping after the ping_ms of its sender', async (t) => {
  let toxics = 0;
  t.same(
    breaking((f) => {
      for (const x of (f.faults ?? []) as (Fault & { network?: { stream?: string } })[]) {
        if (!x.network?.toxic || x.network.toxic === 'timeout') continue;
        toxics++;
        const realMs = x.end!.after_ms! * f.time_scale!;
        const pingMs = x.network.stream === 'upstream' ? f.consumer.ping_ms! : f.server!.ping_ms!;
        if (realMs < 2 * pingMs) return `${x.name} (${x.network.toxic} ${x.network.stream}) for ${realMs} ms, its sender's ping ${pingMs} ms`;
      }
      return undefined;
    }),
    [],
  );
  t.ok(toxics > 200, `${toxics} toxics`);
});

t.test('a slow reader follows every account (its queue fills), never a quiet one', async (t) => {
  t.same(
    breaking((f) => (f.socket_buffer_bytes !== undefined && f.consumer.topics.length !== 6 ? `topics ${f.consumer.topics}` : undefined)),
    [],
  );
});

t.test('a reorganisation while away: no other absence from before its first abandoned event until the consumer is back', async (t) => {
  let aways = 0;
  t.same(
    breaking((f) => {
      const period = f.chain.block_interval_ms! * f.time_scale!;
      const abandoned = abandonedEvents(f);
      for (const cut of down(f).filter((x) => /-away$/.test(x.name))) {
        aways++;
        const r = (f.chain.reorgs ?? []).find((x) => x.after_block >= cut.start.before_block! && x.after_block < cut.end.before_block)!;
        const first = abandoned.find((b) => b >= r.after_block - r.depth + 1 && b < cut.start.before_block!);
        const lo = Math.min(first ?? cut.start.before_block!, cut.start.before_block! - 2);
        const hi = cut.end.before_block + 2;
        for (const x of f.faults ?? []) {
          if (x === cut) continue;
          const from = x.start.before_block;
          if (from === undefined) continue;
          const end = x.network?.down
            ? x.end!.before_block!
            : x.process?.signal === 'SIGKILL'
              ? from + 2
              : x.process?.signal === 'SIGSTOP'
                ? from + Math.ceil((x.end!.after_ms! * f.time_scale!) / period) + 1
                : ['timeout', 'reset_peer', 'limit_data'].includes(x.network?.toxic ?? '')
                  ? from + Math.ceil((x.end!.after_ms! * f.time_scale!) / period) + 2
                  : undefined;
          if (end !== undefined && from < hi && end > lo) return `${x.name} (${from}..${end}) beside ${cut.name} (${lo}..${hi})`;
        }
      }
      return undefined;
    }),
    [],
  );
  t.ok(aways > 30, `${aways} reorganisations while away`);
});

t.test('an apply or commit hook beside a stale cursor or a deep reorganisation: on an event process 1 gets before its snapshot is taken again', async (t) => {
  let hooked = 0;
  t.same(
    breaking((f) => {
      const items = hooksOf(f).filter((h) => /@(apply|commit):/.test(h));
      if (items.length === 0 || !deepOrStale(f)) return undefined;
      hooked++;
      const ends = (f.faults ?? []).flatMap((x) =>
        x.process?.signal === 'SIGKILL' || (x.name.startsWith('stale-cursor') && !quietAccount(f)) ? [x.start.before_block! - 1] : [],
      );
      for (const r of f.chain.reorgs ?? []) if (r.deep) ends.push(r.after_block - 1);
      const sim = simulated(f);
      const before = sim.events.filter((e) => blockOf(e.cursor) > f.chain.initial_blocks! - 1 && blockOf(e.cursor) < Math.min(...ends)).length;
      const late = items.find((h) => Number(h.split(':')[1]) > before);
      return late ? `${late}: ${before} events before a SIGKILL, a stale cut or a deep reorganisation` : undefined;
    }),
    [],
  );
  t.ok(hooked > 20, `${hooked} such hooks`);
});

t.test("no stall on a slow reader's connection before its queue overflows", async (t) => {
  let stalls = 0;
  t.same(
    breaking((f) => {
      if (f.socket_buffer_bytes === undefined) return undefined;
      const rules = rulesOf(f);
      const stop = (f.faults ?? []).find((x) => x.name.startsWith('slow-reader'))!.start.before_block!;
      const stretch = Math.ceil(1500 / (f.chain.block_interval_ms! * f.time_scale!));
      const { produced } = simulated(f);
      for (const m of rules.filter((r) => r.action === 'stall')) {
        stalls++;
        if (mayTakeFirst(m)) return `a stall at event ${m.event} that may take connection 1`;
        const block = blockOf(produced[m.event - 1]!.cursor);
        if (block < stop + stretch) return `a stall at event ${m.event} (block ${block}), the slow reader's stretch ${stop}..${stop + stretch}`;
      }
      return undefined;
    }),
    [],
  );
  t.ok(stalls > 5, `${stalls} stalls beside a slow reader`);
});

t.test('no apply or commit hook after one that ends process 1 (an exit or a raise)', async (t) => {
  const pos = (h: string) => {
    const [, point, n] = /@(\w+):(\d+)$/.exec(h)!;
    return point === 'apply' ? 2 * Number(n) : point === 'commit' ? 2 * Number(n) + 1 : point === 'snapshot' && n === '1' ? 0 : undefined;
  };
  let multi = 0;
  t.same(
    breaking((f) => {
      const items = hooksOf(f);
      if (items.length < 2) return undefined;
      multi++;
      const ends = Math.min(...items.filter((h) => !h.startsWith('stop@')).flatMap((h) => pos(h) ?? []));
      const late = items.find((h) => /@(apply|commit):/.test(h) && pos(h)! > ends);
      return late ? `${late} after the end of process 1: ${items}` : undefined;
    }),
    [],
  );
  // A slow reader has none (its stretch may stop a restarted process 1 before it connects).
  t.ok(multi > 5, `${multi} schedules with two hooks or more`);
});

t.test('past a stall for a while on connection 1, a rule takes whichever connection sends its event: the stall may not end it', async (t) => {
  // Schedules with a stall and another misbehaviour, and nothing that surely ends connection 1 (a
  // cut, a half-open link, a SIGKILL: rules drawn for a later connection may take 2 on past those).
  const rules = ['stall', 'resend', 'malformed', 'number-amount'];
  const sure = ['cut', 'half-open', 'kill', 'stale-cursor', 'reorg', 'deep-reorg', 'loss', 'slow-reader'];
  const withStall = fc
    .sample(feedChaos.schedules(), { seed: 12, numRuns: 6000 })
    .filter((s) => s.kind === 'stream' && s.steps.some((x) => x.layer === 'stall') && s.steps.filter((x) => rules.includes(x.layer)).length > 1)
    .filter((s) => s.kind === 'stream' && !s.slow && !s.steps.some((x) => sure.includes(x.layer)))
    .map((s) => feedChaos.scenario(s, { sealed: true }) as unknown as Drawn);
  let past = 0;
  const broken = withStall.flatMap((f) => {
    const ordered = [...rulesOf(f)].sort((a, b) => a.event - b.event);
    const end = ordered.find((m) => ['malformed', 'number-amount', 'stall'].includes(m.action) && mayTakeFirst(m));
    if (end?.action !== 'stall' || (end as { ms?: number }).ms === undefined) return [];
    const later = ordered.filter((m) => m.event > end.event);
    past += later.length;
    const second = later.find((m) => m.from_connection === 2);
    return second ? [`${second.action} at event ${second.event} from connection 2, past the stall at event ${end.event}`] : [];
  });
  t.same(broken, []);
  t.ok(past > 5, `${past} rules past a stall for a while`);
});

t.test('a slow reader has no hook: one that ends process 1 restarts it, and the stretch may stop the new one before it connects', async (t) => {
  const slow = drawn.filter((f) => f.socket_buffer_bytes !== undefined);
  t.ok(slow.length > 50, `${slow.length} slow readers`);
  t.same(
    slow.flatMap((f) => hooksOf(f)),
    [],
  );
});

t.test("a stall's silence keeps clear of a connected reorganisation's abandoned blocks", async (t) => {
  let beside = 0;
  const hiding = breaking((f) => {
    const stalls = rulesOf(f).filter((m) => m.action === 'stall') as (MisRule & { ms?: number })[];
    const connected = (f.chain.reorgs ?? []).filter(
      (r) => !r.deep && !down(f).some((x) => x.name.endsWith('-away') && x.start.before_block! <= r.after_block && x.end.before_block > r.after_block),
    );
    if (stalls.length === 0 || connected.length === 0) return undefined;
    beside++;
    const period = f.chain.block_interval_ms! * f.time_scale!;
    const { produced } = simulated(f);
    for (const m of stalls) {
      const from = blockOf(produced[m.event - 1]!.cursor);
      const to = from + Math.ceil((m.ms ?? 4000) / period) + 2;
      const r = connected.find((x) => from <= x.after_block && to >= x.after_block - x.depth + 1);
      if (r) return `the stall at event ${m.event} (blocks ${from}–${to}) over the reorganisation after ${r.after_block}`;
    }
    return undefined;
  });
  t.ok(beside > 8, `${beside} schedules with a stall beside a connected reorganisation`);
  // Where every event the stall may ride is near one, it keeps its drawn event.
  t.ok(hiding.length <= beside / 10, `${hiding.length} of ${beside}: ${hiding.slice(0, 5).join('; ')}`);
});

t.test("a slow reader's reorganisations come after its stretch (its reset takes the consumer away in it)", async (t) => {
  let reorgs = 0;
  t.same(
    breaking((f) => {
      if (f.socket_buffer_bytes === undefined) return undefined;
      const stop = (f.faults ?? []).find((x) => x.name.startsWith('slow-reader'))!.start.before_block!;
      const stretch = Math.ceil(1500 / (f.chain.block_interval_ms! * f.time_scale!));
      for (const r of (f.chain.reorgs ?? []).filter((x) => !x.deep)) {
        reorgs++;
        if (r.after_block - r.depth + 1 < stop + stretch)
          return `reorganisation after ${r.after_block} (depth ${r.depth}), the stretch ${stop}..${stop + stretch}`;
      }
      return undefined;
    }),
    [],
  );
  t.ok(reorgs > 30, `${reorgs} reorganisations beside a slow reader`);
});
