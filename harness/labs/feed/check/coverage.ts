// Whether each fault of a feed scenario took effect on the consumer under test (never the
// control), from what the harness saw: the shared `faults` layer's rows (cuts, toxics, signals,
// packet loss: harness/judge/fault-coverage.ts), then one row for every fault of the lab's own.
// "Took effect" is what the consumer met: a revoke of the abandoned blocks delivered to it (or,
// back from away, the revoke or reset its abandoned cursor asks for); a bad frame, a resend or a
// stall on its connection; its own hook firing in it; a reset reaching it; a ping in the quiet.
// A reorganisation whose revoke never reached it tests nothing about revokes, and says so.

import type { FaultCoverage } from '../../../findings/coverage.js';
import { sharedFaultCoverage } from '../../../judge/fault-coverage.js';
import type { BadEnvironment } from '../../../judge/environment-duty.js';
import type { JournalEntry } from '../../../record/journal.js';
import type { FaultPlan, Scenario } from '../../../scenario/types.js';
import type { SimulatedChain } from '../scenario/chain-script.js';
import { faultSteps, type FaultStep } from '../scenario/fault-plan.js';
import { FEED_FAULT_POINTS } from '../scenario/fault-points.js';
import type { FeedPlan } from '../scenario/plan.js';
import { blockOf, seconds, shortAmount, shortCursor } from '../report/words.js';
import { type ConnFacts, lossyFaultBetween, type ProcessFacts, type RunFacts } from './facts.js';
import { hookMoments, transactionWords } from './hooks.js';

type Plan = Scenario<FeedPlan>;
type Row = (took: boolean, how: string) => FaultCoverage;
const rowOf =
  (fault: string, kind: string): Row =>
  (took, how) => ({ fault, kind, took, how });

export interface FeedCoverageInput {
  journal: readonly JournalEntry[];
  plan: Plan;
  facts: RunFacts;
  sim: SimulatedChain;
}

/** Every fault of the plan, one row each: the shared layer's, then the lab's own. */
export function feedCoverage({ journal, plan, facts, sim }: FeedCoverageInput): FaultCoverage[] {
  const lab = plan.lab;
  if (lab.consumer.badEnvironment) return [badEnvironmentRow(facts, lab.consumer.badEnvironment)];
  return [
    ...sharedFaultCoverage(plan.faults, journal, FEED_FAULT_POINTS),
    ...reorgRows(facts, sim, plan),
    ...lab.server.misbehaviour.map((rule, i) => misbehaviourRow(facts, rule, lab.server.anchors[i] ?? rule.at)),
    ...lab.consumer.processes.flatMap((p, i) => (p.fault === undefined ? [] : hookRows(facts, journal, i + 1, p.fault))),
    ...(lab.chain.retentionMs === undefined ? [] : [retentionRow(facts, lab)]),
    ...(lab.consumer.applyDelayMs > 0 ? [slowReaderRow(facts, lab.consumer.applyDelayMs)] : []),
    ...(lab.expect.quietPing ? [quietPingRow(facts, journal)] : []),
    ...(lab.chain.amountBits === undefined || lab.chain.amountBits > 53 ? [bigAmountsRow(facts)] : []),
  ];
}

const who = (p: Pick<ProcessFacts, 'incarnation'>): string => `process ${p.incarnation}`;
const ownerOf = (facts: RunFacts, c: ConnFacts): string => {
  const p = facts.consumers.find((x) => x.conns.includes(c));
  return p ? who(p) : 'the consumer';
};

// ------------------------------------------------------------------------------ reorganisations

interface Reorg {
  ordinal: number;
  after: number;
  fork: number;
  depth: number;
  deep: boolean;
  /** When the server learnt of it (its first `reorg from` note on any connection). */
  t?: number;
  /** Drawn inside a cut of the plan: the consumer meets it when it comes back. */
  away: boolean;
}

const REORG_NOTE = /^reorg from (\S+) \(depth (\d+)(, deep)?\): (revoke|nothing sent here yet, no revoke)$/;

/** A cut of the plan from `before_block` s to `before_block` e holds a reorganisation after block a when s <= a < e. */
function inCut(faults: readonly FaultPlan[], after: number): boolean {
  const block = (t: FaultPlan['start'] | undefined) => (t?.kind === 'point' && t.point === 'before_block' ? t.value : undefined);
  return faults.some((f) => f.effect.kind === 'proxy-down' && (block(f.start) ?? Infinity) <= after && after < (block(f.end) ?? -Infinity));
}

/** The scripted reorganisations, each with the moment the server's connections learnt of it. */
export function reorgsOf(facts: RunFacts, sim: SimulatedChain, plan: Plan): Reorg[] {
  const notes = [...facts.conns.consumer, ...facts.conns.control]
    .flatMap((c) => c.notes.map((n) => ({ t: n.t, m: REORG_NOTE.exec(n.text) })))
    .filter((n) => n.m)
    .sort((a, b) => a.t - b.t);
  let since = Number.NEGATIVE_INFINITY;
  return plan.lab.chain.reorgs.map((r, i) => {
    const done = sim.reorgs.find((x) => x.ordinal === i + 1);
    const fork = done?.forkNumber ?? r.afterBlock - r.depth + 1;
    const t = notes.find((n) => n.t >= since && blockOf(n.m![1]) === fork && Number(n.m![2]) === r.depth)?.t;
    if (t !== undefined) since = t;
    return {
      ordinal: i + 1,
      after: r.afterBlock,
      fork,
      depth: r.depth,
      deep: r.deep,
      away: inCut(plan.faults, r.afterBlock),
      ...(t === undefined ? {} : { t }),
    };
  });
}

function reorgRows(facts: RunFacts, sim: SimulatedChain, plan: Plan): FaultCoverage[] {
  const reorgs = reorgsOf(facts, sim, plan);
  return reorgs.map((r) => {
    const twice = reorgs.filter((x) => x.after === r.after).length > 1;
    const name = `reorganisation after block ${r.after}${twice ? ` (#${r.ordinal})` : ''}`;
    const row = rowOf(name, r.deep ? 'deep-reorg' : r.away ? 'reorg-away' : 'reorg');
    const what = `the ${r.deep ? 'deep ' : ''}reorganisation after block ${r.after} (blocks ${r.fork}–${r.after} abandoned)`;
    if (r.t === undefined) return row(false, `${what} never reached the server's connections: the script ended before it`);
    return reorgMet(facts, r, what, row) ?? row(false, `${what} reached no consumer: ${whyMissed(facts, r)}`);
  });
}

/** The revoke or reset that brought the reorganisation to the consumer under test, if one did. */
function reorgMet(facts: RunFacts, r: Reorg, what: string, row: Row): FaultCoverage | undefined {
  const t = r.t!;
  for (const c of facts.conns.consumer) {
    const revoke = c.sent.find((s) => s.t >= t && s.frame?.op === 'revoke' && blockOf(s.frame.fromCursor) === r.fork);
    if (revoke?.frame?.op !== 'revoke') continue;
    const from = revoke.frame.fromCursor;
    const how = c.notes.some((n) => n.text.startsWith(`revoke from ${from} at subscribe`))
      ? `at its subscribe from the abandoned ${shortCursor(c.subscribe?.frame?.cursor)}`
      : 'live';
    return row(
      true,
      `${what} reached ${ownerOf(facts, c)}: the revoke from ${shortCursor(from)} was delivered on its connection ${c.conn} at ${seconds(revoke.t)}, ${how}`,
    );
  }
  for (const c of facts.conns.consumer) {
    const cursor = c.subscribe?.frame?.cursor;
    const block = blockOf(cursor);
    if (!c.subscribe || c.subscribe.t < t || block === undefined) continue;
    const reset = c.sent.find((s) => s.frame?.op === 'reset' && s.frame.reason === 'stale-cursor');
    if (reset && block >= r.fork && block <= r.after)
      return row(
        true,
        `${what} reached ${ownerOf(facts, c)}: it resumed from the abandoned ${shortCursor(cursor)} and got \`reset stale-cursor\` at ${seconds(reset.t)}`,
      );
    // Back from a cut across it, from below the fork: the replay is the new branch, and no revoke is due.
    const away = !facts.conns.consumer.some((o) => o.openedAt <= t && (o.closedAt ?? Number.POSITIVE_INFINITY) >= t);
    if (r.away && away && !reset && block < r.fork && heldBefore(facts, cursor!, t))
      return row(
        true,
        `${what} came while ${ownerOf(facts, c)} was away: it came back across it, resubscribing at ${seconds(c.subscribe.t)} from ${shortCursor(cursor)}, below the fork, and was replayed the new branch with no revoke (its block is still canonical)`,
      );
    if (r.away) break; // its return: later subscribes no longer cross it
  }
  return undefined;
}

/** The consumer had been sent `cursor` (an event or snapshot) before `t`. */
const heldBefore = (facts: RunFacts, cursor: string, t: number): boolean =>
  facts.conns.consumer.some((c) => c.sent.some((s) => s.t < t && (s.frame?.op === 'event' || s.frame?.op === 'snapshot') && s.frame.cursor === cursor));

/** Where the consumer was when the reorganisation came, in words. */
function whyMissed(facts: RunFacts, r: Reorg): string {
  const t = r.t!;
  const at = seconds(t);
  const first = facts.conns.consumer.find((c) => c.subscribe);
  if (!first || first.subscribe!.t > t)
    return `it came at ${at}, before the consumer subscribed${first ? ` (at ${seconds(first.subscribe!.t)})` : ' (it never did)'}`;
  const open = facts.conns.consumer.find((c) => c.openedAt <= t && (c.closedAt ?? Number.POSITIVE_INFINITY) >= t);
  if (open) {
    const note = open.notes.find((n) => n.t >= t && blockOf(REORG_NOTE.exec(n.text)?.[1]) === r.fork);
    if (note?.text.endsWith(': revoke'))
      return `the revoke for it was queued on ${ownerOf(facts, open)}'s connection ${open.conn} at ${seconds(note.t)}, but the connection ended (${open.closeReason ?? 'closed'}) before it was written`;
    return `${ownerOf(facts, open)}'s connection ${open.conn} had been sent nothing of the abandoned blocks when it came at ${at}`;
  }
  const before = facts.conns.consumer.filter((c) => c.openedAt <= t).at(-1);
  const next = facts.conns.consumer.find((c) => c.subscribe && c.subscribe.t > t);
  const left = before?.closedAt === undefined ? '' : ` (its connection ${before.conn} had closed at ${seconds(before.closedAt)})`;
  if (!next) return `the consumer was away when it came at ${at}${left}, and never subscribed again`;
  const cursor = next.subscribe?.frame?.cursor;
  const from =
    cursor === null || cursor === undefined
      ? 'with cursor null (a fresh snapshot)'
      : `from ${shortCursor(cursor)}, ${blockOf(cursor)! < r.fork ? 'below the fork' : 'past it'}`;
  return `${ownerOf(facts, next)} was away when it came at ${at}${left} and resumed at ${seconds(next.subscribe!.t)} ${from}`;
}

// ------------------------------------------------------------------------------ server misbehaviour

type Rule = FeedPlan['server']['misbehaviour'][number];

/** Whether `c` sent an event frame at `cursor`. */
const sentEventAt = (c: ConnFacts, cursor: string): boolean => c.sent.some((s) => s.frame?.op === 'event' && s.frame.cursor === cursor);

/**
 * The consumer's connection a rule is about: the one it names, or for `{ from: n }` the one the
 * publisher's transcript says it fired on (its note), else the first from n on that sent its event.
 */
function ruleConnection(facts: RunFacts, rule: Rule): { n: number; exact: boolean; conn: ConnFacts | undefined } {
  const c = rule.connection ?? 1;
  const conns = facts.conns.consumer;
  if (typeof c === 'number') return { n: c, exact: true, conn: conns.find((x) => x.conn === c) };
  const later = conns.filter((x) => x.conn >= c.from);
  const fired = later.find((x) => x.notes.some((note) => note.text.startsWith(`misbehaviour: ${rule.action} at ${rule.at}`)));
  return { n: c.from, exact: false, conn: fired ?? later.find((x) => sentEventAt(x, rule.at)) };
}

function misbehaviourRow(facts: RunFacts, rule: Rule, anchor: string): FaultCoverage {
  const { n, exact, conn } = ruleConnection(facts, rule);
  const form = rule.action === 'malformed' ? ` (${rule.form ?? 'trailing-comma'})` : '';
  const words = { resend: 'resend', malformed: 'malformed frame', 'number-amount': 'JSON-number amount', 'unknown-op': 'unknown op', stall: 'stall' }[
    rule.action
  ];
  const onConn = !exact ? ` from connection ${n} on` : n === 1 ? '' : ` on connection ${n}`;
  const row = rowOf(`${words}${form} at ${anchor}${onConn}`, rule.action);
  const what = `the ${words}${form} at ${anchor} (cursor ${shortCursor(rule.at)})`;
  const count = facts.conns.consumer.length;
  if (!conn)
    return row(
      false,
      exact
        ? `${what} never reached the consumer: its stream had ${count} connection(s), not ${n}`
        : `${what} never reached the consumer: no connection from ${n} on sent that event (its stream had ${count} connection(s))`,
    );
  const notes = conn.notes.filter((x) => x.text.startsWith(`misbehaviour: ${rule.action} at ${rule.at}`));
  const skipped = notes.find((x) => x.text.includes('skipped'));
  if (skipped) return row(false, `${what} never reached the consumer: ${skipped.text.replace(/^misbehaviour: /, '')}`);
  const where = `${ownerOf(facts, conn)} on connection ${conn.conn} at ${seconds(notes[0]?.t ?? 0)}`;
  if (notes.length > 0)
    switch (rule.action) {
      case 'resend':
        return row(true, `${what} reached ${where}: ${notes.length} event${notes.length === 1 ? '' : 's'} it had been sent, sent again`);
      case 'stall':
        return row(true, `${what} reached ${where}: the server fell silent on it${rule.ms === undefined ? ' for good' : ` for ${rule.ms} ms`}`);
      default:
        return row(true, `${what} was delivered to ${where}`);
    }
  if (sentEventAt(conn, rule.at))
    return row(
      false,
      rule.action === 'resend'
        ? `${what} resent nothing: no event of the consumer's accounts came before it`
        : `${what} did not fire: the event went out as it is on connection ${conn.conn}`,
    );
  const elsewhere = facts.conns.consumer.find((c) => c !== conn && sentEventAt(c, rule.at));
  const closed = conn.closedAt === undefined ? '' : `, which closed at ${seconds(conn.closedAt)} (${conn.closeReason ?? conn.closedBy ?? 'closed'})`;
  return row(
    false,
    `${what} never reached the consumer: that event was never sent on connection ${n}${closed}${elsewhere ? `; it went out on connection ${elsewhere.conn}` : ''}`,
  );
}

// ------------------------------------------------------------------------------ the contract's hooks

function hookRows(facts: RunFacts, journal: readonly JournalEntry[], incarnation: number, plan: string): FaultCoverage[] {
  const steps = faultSteps(plan);
  const p = facts.consumers.find((x) => x.incarnation === incarnation && x.startedAt !== undefined);
  const stops = journal.filter((e) => e.type === 'process-stopped' && e.role === 'consumer' && e.incarnation === incarnation).length;
  const moments = p ? hookMoments(p, (from, to) => lossyFaultBetween(facts, from, to) !== undefined) : [];
  const exited = p?.exit?.code === 86 && !p.exit.killedBy;
  const exits = steps.filter((s) => s.action === 'exit');
  const stopSteps = steps.filter((s) => s.action === 'stop');
  return steps.map((step) => {
    const item = `${step.action}@${step.point}:${step.n}`;
    const row = rowOf(`${item} in process ${incarnation}`, 'hook');
    if (!p) return row(false, `the hook ${item} never fired: consumer process ${incarnation} never ran (${facts.consumers.length} did)`);
    const moment = moments.find((m) => sameStep(m.step, step));
    const inside = moment ? ` in ${transactionWords(moment)}` : '';
    if (step.action === 'exit' && exited && (moment || exits.length === 1))
      return row(true, `the hook ${item} fired in ${who(p)}${inside}: it ended itself with status 86 at ${seconds(p.exit!.t)}`);
    if (step.action === 'stop' && (moment || stops >= stopSteps.length) && stops > 0)
      return row(
        true,
        `the hook ${item} fired in ${who(p)}${inside}: it stopped itself (${stops} self-stop${stops === 1 ? '' : 's'}), and the harness read its file from outside`,
      );
    if (step.action === 'raise' && moment) return row(true, `the hook ${item} fired in ${who(p)}${inside}: it raised and rolled that transaction back`);
    return row(false, `the hook ${item} never fired in ${who(p)}: ${processEnd(p)} before its ${step.point} ${step.n} came`);
  });
}

const sameStep = (a: FaultStep, b: FaultStep): boolean => a.action === b.action && a.point === b.point && a.n === b.n;

function processEnd(p: ProcessFacts): string {
  const e = p.exit;
  if (!e) return 'it ran to the end of the run';
  if (p.sigtermAt !== undefined) return `it ran until the end-of-run SIGTERM at ${seconds(p.sigtermAt)}`;
  if (e.killedBy) return `it was killed (${e.killedBy}) at ${seconds(e.t)}`;
  return `it ${e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`} at ${seconds(e.t)}`;
}

// ------------------------------------------------------------------------------ resets, retention, heartbeats, amounts

const resetsOf = (facts: RunFacts, reason: string) =>
  facts.conns.consumer.flatMap((c) => c.sent.filter((s) => s.frame?.op === 'reset' && s.frame.reason === reason).map((s) => ({ c, s })));

/** Retention took effect when the consumer came back from behind it: `reset stale-cursor`, or a resume past deleted rows of other accounts. */
function retentionRow(facts: RunFacts, lab: FeedPlan): FaultCoverage {
  const { retentionMs, blockIntervalMs, confirmations } = lab.chain;
  const blocks = Math.ceil(retentionMs! / blockIntervalMs);
  const row = rowOf(`retention of ${blocks} block${blocks === 1 ? '' : 's'}`, 'retention');
  const reset = resetsOf(facts, 'stale-cursor')[0];
  if (reset)
    return row(
      true,
      `\`reset stale-cursor\` reached ${ownerOf(facts, reset.c)} on connection ${reset.c.conn} at ${seconds(reset.s.t)}: retention had deleted what it needed`,
    );
  for (const c of facts.conns.consumer) {
    const block = blockOf(c.subscribe?.frame?.cursor);
    const head = Number(/^caught up at block (\d+)/.exec(c.notes.find((n) => n.text.startsWith('caught up at block'))?.text ?? '')?.[1]);
    if (block === undefined || !Number.isFinite(head)) continue;
    // As the outbox prunes (chain-script.ts): confirmed blocks older than retention behind the head.
    const pruned = Math.min(Math.ceil(head - retentionMs! / blockIntervalMs) - 1, head - confirmations);
    if (block <= pruned)
      return row(
        true,
        `${ownerOf(facts, c)} came back at ${seconds(c.subscribe!.t)} from ${shortCursor(c.subscribe!.frame!.cursor)}, behind what retention had deleted (through block ${pruned}); none of its accounts' rows were gone, so it was replayed without a reset`,
      );
  }
  return row(false, 'retention never reached the consumer: no `reset stale-cursor` came, and it never resubscribed from behind the deleted blocks');
}

function slowReaderRow(facts: RunFacts, delayMs: number): FaultCoverage {
  const row = rowOf(`apply delay of ${delayMs} ms`, 'slow-reader');
  const reset = resetsOf(facts, 'slow-consumer')[0];
  return reset
    ? row(
        true,
        `the slow reader's queue overflowed: \`reset slow-consumer\` reached ${ownerOf(facts, reset.c)} on connection ${reset.c.conn} at ${seconds(reset.s.t)}`,
      )
    : row(false, `the slow reader never fell behind far enough: no \`reset slow-consumer\` reached the consumer`);
}

function quietPingRow(facts: RunFacts, journal: readonly JournalEntry[]): FaultCoverage {
  const row = rowOf('quiet ping', 'quiet-ping');
  const quiet = Math.max(...journal.flatMap((e) => (e.type === 'store-read' && e.when === 'converging' ? [e.t] : [])));
  if (!Number.isFinite(quiet)) return row(false, 'the quiet ping never came: the run never waited for convergence');
  for (const c of facts.conns.consumer) {
    const ping = c.pings.find((p) => p.t >= quiet);
    if (ping)
      return row(
        true,
        `after convergence (${seconds(quiet)}) the idle server's ping ${ping.id} reached ${ownerOf(facts, c)} on connection ${c.conn} at ${seconds(ping.t)}`,
      );
  }
  return row(false, `the quiet ping never came: no ping was sent to the consumer after convergence (${seconds(quiet)})`);
}

const DOUBLE_EXACT = 2n ** 53n;
const isBig = (v: unknown): boolean => typeof v === 'string' && /^[0-9]{1,78}$/.test(v) && BigInt(v) > DOUBLE_EXACT;

function bigAmountsRow(facts: RunFacts): FaultCoverage {
  const row = rowOf('amounts over the uint256 range', 'big-amounts');
  const sent = facts.conns.consumer.flatMap((c) => c.sent.map((s) => ({ c, s, f: s.frame })));
  // An event's amount first (the scenario's point), else a snapshot's balance.
  const event = sent.find(({ f }) => f?.op === 'event' && isBig(f.payload.amount));
  if (event?.f?.op === 'event')
    return row(
      true,
      `an amount above 2^53 (${shortAmount(String(event.f.payload.amount))}, event ${shortCursor(event.f.cursor)}) reached ${ownerOf(facts, event.c)} at ${seconds(event.s.t)}`,
    );
  for (const { c, s, f } of sent) {
    const big = f?.op === 'snapshot' ? Object.values(f.state.balances).find(isBig) : undefined;
    if (big !== undefined && f?.op === 'snapshot')
      return row(true, `a balance above 2^53 (${shortAmount(big)}) reached ${ownerOf(facts, c)} in the snapshot at ${shortCursor(f.cursor)}, ${seconds(s.t)}`);
  }
  return row(false, 'no amount or balance above 2^53 reached the consumer');
}

function badEnvironmentRow(facts: RunFacts, bad: BadEnvironment): FaultCoverage {
  const vars = [...Object.keys(bad.set), ...bad.unset].join(', ');
  const row = rowOf(`bad environment (${vars})`, 'bad-environment');
  const p = facts.consumers.find((x) => x.env !== undefined);
  if (!p?.env) return row(false, 'the bad environment reached no consumer: no consumer process started');
  const wrong = [...Object.entries(bad.set).filter(([k, v]) => p.env![k] !== v), ...bad.unset.filter((k) => k in p.env!).map((k) => [k])].map(([k]) => k);
  return wrong.length === 0
    ? row(true, `${who(p)} started with it: ${vars} ${Object.keys(bad.set).length + bad.unset.length === 1 ? 'was' : 'were'} as the scenario sets them`)
    : row(false, `${who(p)} started without it: ${wrong.join(', ')} not as the scenario sets them`);
}
