// The feed-lab checker. It reads only what the harness itself saw (the journal: what the publisher
// sent and received, the stores read at each subscribe, while a process stopped itself, after a
// crash, while waiting for convergence) and the final stores, read through independent
// read-only connections. The expected state is the canonical chain at the script's end,
// simulated from the scenario; the always-connected control consumer must reach it too, and a
// control that does not is a harness error, never the consumer's failure.

import type { SubscribeFrame } from '../../../../protocol/feed/frames.js';
import type { JournalEntry } from '../../../record/journal.js';
import { consumerRefusal, STORE_REFUSED, withRefusedStore } from '../../../judge/refused-store.js';
import { stoppedLockWords } from '../../../judge/stopped-lock.js';
import { describeRefusal, refusalRule, type StoreRefusal } from '../../../sandbox/store-file.js';
import type { Scenario } from '../../../scenario/types.js';
import { type Finding, type ProcessRef, statusOf, type Verdict } from '../../../findings/verdict.js';
import { failHeadline, rankFindings } from '../../../findings/priority.js';
import { FEED_PRIORITIES } from '../priorities.js';
import { badFrameProblems } from './bad-frames.js';
import { type SimulatedChain, simulate } from '../scenario/chain-script.js';
import { feedCoverage } from './coverage.js';
import { smallestDiff } from './diff.js';
import { environmentVerdict } from './environment.js';
import { type ConnFacts, factsOf, lastLine, lossyFaultBetween, type ProcessFacts, type RunFacts, SIGTERM_EXIT_MS } from './facts.js';
import { faultSteps } from '../scenario/fault-plan.js';
import { halfOpenProblems } from './half-open.js';
import { describeModel, hookMoments, hookReadProblem, transactionWords } from './hooks.js';
import type { FeedPlan } from '../scenario/plan.js';
import {
  atChainEnd,
  consistencyProblems,
  describeView,
  type Expected,
  expectedOf,
  judgeStore,
  type SentSnapshot,
  type StoreSummary,
  type StoreView,
  viewOf,
} from './state.js';
import type { FeedStoreSnapshot } from './store-reader.js';
import { activityTable, balancesTable, connectionsTable, processesTable, stateTable } from '../report/tables.js';
import { cursorSubject, plural, seconds, shortCursor } from '../report/words.js';

type Plan = Scenario<FeedPlan>;

/** Slack for the harness's own measurement of "exit within 2 s" (process exit to its journal entry). */
const EXIT_SLACK_MS = 250;

const who = (p: Pick<ProcessFacts, 'role' | 'incarnation'>): string => (p.role === 'control' ? 'the control consumer' : `process ${p.incarnation}`);
const ref = (p: Pick<ProcessFacts, 'role' | 'incarnation'>): ProcessRef => ({ role: p.role, incarnation: p.incarnation });

/** Snapshots the publisher sent on a role's stream. */
export function sentSnapshots(conns: readonly ConnFacts[]): SentSnapshot[] {
  return conns.flatMap((c) =>
    c.sent.flatMap((s) => (s.frame?.op === 'snapshot' ? [{ cursor: s.frame.cursor, blockHash: s.frame.blockHash, balances: s.frame.state.balances }] : [])),
  );
}

export interface FeedCheckInput {
  journal: readonly JournalEntry[];
  plan: Plan;
  /** Reads a store through an independent connection (and journals the read). */
  read(role: 'consumer' | 'control', db: string): FeedStoreSnapshot;
}

export function checkFeedRun({ journal, plan, read }: FeedCheckInput): Verdict {
  const lab = plan.lab;
  const sim = simulate(lab.chain, lab.topicIndexes);
  const expected = expectedOf(sim);
  const facts = factsOf(journal, expected.chainId);
  const consumerDb = facts.streams.consumer?.db;
  const controlDb = facts.streams.control?.db;
  if (!consumerDb || !controlDb) throw new Error('the journal does not name the consumer and control streams');
  const bad = lab.consumer.badEnvironment;
  if (bad) {
    const store = read('consumer', consumerDb);
    const verdict = { ...environmentVerdict(facts, bad, store, plan.deadlineMs), coverage: feedCoverage({ journal, plan, facts, sim }) };
    const refused = consumerRefusal(journal, store);
    return refused ? withRefusedStore(verdict, refusedStoreFinding(refused)) : verdict;
  }
  const sent = { consumer: sentSnapshots(facts.conns.consumer), control: sentSnapshots(facts.conns.control) };
  const runEnd = journal.at(-1)?.t ?? 0;
  const consumerStore = read('consumer', consumerDb);
  const consumerView = viewOf(consumerStore);
  const consumerJudged = judgeStore('consumer', consumerView, expected, sent.consumer);
  const controlJudged = judgeStore('control consumer', viewOf(read('control', controlDb)), expected, sent.control);
  const storeFinding = (p: { code: string; text: string; cursors?: string[] }, process?: ProcessRef): Finding => ({
    code: p.code,
    text: p.text,
    ...(p.cursors || process ? { subject: { ...(p.cursors ? cursorSubject(p.cursors) : {}), ...(process ? { process } : {}) } } : {}),
  });

  // In the order they are looked for; the lab's table then puts the cause first (priorities.ts).
  const found: Finding[] = [
    ...badFrameProblems({ facts, chainAmount: chainAmounts(sim), viewAfter: (conn) => viewAfter(facts, conn, consumerView) }),
    ...processProblems(facts.consumers, lab),
    ...facts.consumers.flatMap((p) => hookProblems(p, facts)),
    ...facts.consumers.flatMap((p) => midRunProblems(p, expected.topics, sent.consumer)),
    ...facts.consumers.flatMap((p) => subscribeProblems(p, facts, lab, lab.consumer.clientId)),
    ...convergenceProblems(
      facts.consumers.flatMap((p) => p.reads),
      'consumer',
      expected,
      sent.consumer,
      lab,
    ),
    ...consumerJudged.problems.map((p) => storeFinding(p)),
    ...facts.consumers.flatMap((p) => p.conns.flatMap((c) => wireProblems(c, p, plan, runEnd, facts))),
    ...halfOpenProblems(facts, lab.consumer, runEnd),
    ...facts.consumers.flatMap((p) => sigtermProblems(p)),
  ];
  const control = facts.control;
  const asHarness = (f: Finding): Finding => ({
    ...f,
    code: `control-${f.code}`,
    text: f.text.startsWith('the control') ? f.text : `the control consumer: ${f.text}`,
  });
  const harnessErrors: Finding[] = [
    ...journal.flatMap((e) => (e.type === 'harness-error' ? [{ code: 'harness-error', text: `harness: ${e.message}` }] : [])),
    ...controlProcessProblems(control),
    ...midRunProblems(control, expected.topics, sent.control).map(asHarness),
    ...subscribeProblems(control, facts, lab, `${lab.consumer.clientId}-control`).map(asHarness),
    ...controlJudged.problems.map((p) => ({ ...storeFinding(p, ref(control)), code: `control-${p.code}` })),
  ];
  const findings = rankFindings(found, FEED_PRIORITIES);
  const status = statusOf(findings, harnessErrors);
  const verdict: Verdict = {
    status,
    headline: status === 'pass' ? passHeadline(consumerJudged.summary, controlJudged.summary, facts) : failHeadline({ findings, harnessErrors }),
    findings,
    harnessErrors,
    coverage: feedCoverage({ journal, plan, facts, sim }),
    diff: status === 'pass' ? [] : smallestDiff({ consumer: consumerJudged, control: controlJudged, findings, harnessErrors }),
    state: stateTable(expected, consumerJudged.summary, controlJudged.summary),
    tables: [
      activityTable(consumerJudged.summary),
      balancesTable(consumerJudged.summary, controlJudged.summary),
      processesTable([...facts.consumers, control], lab),
      connectionsTable(facts.conns.consumer),
    ],
  };
  // A store the harness refused to read decides alone: nothing else can be said of it.
  const refused = consumerRefusal(journal, consumerStore);
  return refused ? withRefusedStore(verdict, refusedStoreFinding(refused)) : verdict;
}

/** "consumer.db is a named pipe (FIFO): the harness reads only a regular file …". */
export function refusedStoreFinding(refusal: StoreRefusal): Finding {
  return { code: STORE_REFUSED, text: `${describeRefusal(refusal)}: ${refusalRule(refusal.kind)} (CONTRACT.md §3)` };
}

/** Every Transfer amount the script produced, by cursor (abandoned branches included). */
function chainAmounts(sim: SimulatedChain): (cursor: string) => string | undefined {
  const amounts = new Map<string, string>();
  for (const e of [...sim.events, ...sim.produced]) if (typeof e.payload.amount === 'string') amounts.set(e.cursor, e.payload.amount);
  return (cursor) => amounts.get(cursor);
}

/** The consumer's store as read when its next connection subscribed, else at the end. */
function viewAfter(facts: RunFacts, conn: ConnFacts, final: StoreView): StoreView {
  const conns = facts.conns.consumer;
  const next = conns.slice(conns.indexOf(conn) + 1).find((c) => c.atSubscribe);
  return next?.atSubscribe ? viewOf(next.atSubscribe.store) : final;
}

function passHeadline(consumer: StoreSummary, control: StoreSummary, facts: RunFacts): string {
  const again = facts.conns.consumer.reduce((n, c) => n + redelivered(c), 0);
  const cuts = facts.faultWindows.filter((w) => w.kind === 'proxy-down').length;
  const restarts = facts.consumers.length - 1;
  const ordeal = [
    cuts ? plural(cuts, 'cut') : '',
    restarts ? plural(restarts, 'restart') : '',
    again ? `${plural(again, 'resent event')} dropped by cursor` : '',
  ].filter(Boolean);
  return (
    `the consumer's activity list matches the chain: ${plural(consumer.events, 'event')} after its snapshot at ${shortCursor(consumer.snapshotCursor)}, ` +
    `cursor ${shortCursor(consumer.cursor)}, balances as the chain says${ordeal.length ? ` (after ${ordeal.join(', ')})` : ''}; ` +
    `the always-connected control consumer holds ${plural(control.events, 'event')} after its snapshot at ${shortCursor(control.snapshotCursor)}`
  );
}

/** Events a connection sent again after sending them itself (at-least-once resends). */
export function redelivered(c: ConnFacts): number {
  const seen = new Set<string>();
  let n = 0;
  for (const s of c.sent) {
    if (s.frame?.op !== 'event') continue;
    if (seen.has(s.frame.cursor)) n++;
    seen.add(s.frame.cursor);
  }
  return n;
}

// ------------------------------------------------------------------------------ processes

function processProblems(consumers: readonly ProcessFacts[], lab: FeedPlan): Finding[] {
  const out: Finding[] = [];
  for (const p of consumers) {
    const steps = faultSteps(p.fault);
    const exitHook = steps.find((s) => s.action === 'exit');
    const raiseHook = steps.some((s) => s.action === 'raise');
    const process = ref(p);
    const name = who(p);
    if (!p.exit) {
      out.push({ code: 'never-ended', text: `${name} has no recorded exit (the run was cut short)`, subject: { process } });
      continue;
    }
    const e = p.exit;
    const at = { process, t: e.t };
    if (p.sigtermAt !== undefined) {
      if (exitHook)
        out.push({
          code: 'hook-not-fired',
          text: `${name} ran with CHAOSLAB_FAULT=${p.fault}, but was still running when the script ended: its hook ${exitHook.action}@${exitHook.point}:${exitHook.n} should have ended it with status 86`,
          subject: { process },
        });
      continue; // judged by sigtermProblems
    }
    if (e.killedBy === 'deadline') {
      out.push({ code: 'deadline', text: `${name} was killed at the deadline (${e.durationMs} ms after it started)`, subject: at });
      continue;
    }
    if (e.killedBy === 'harness') continue; // a process fault of the scenario (SIGKILL): the restart is the point
    const how = e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`;
    const said = lastLine(e.stderrTail);
    if (exitHook && e.code !== 86)
      out.push({
        code: 'hook-exit-status',
        text: `${name} ${how}; with CHAOSLAB_FAULT=${p.fault} its exit hook must end it with status 86`,
        subject: at,
      });
    else if (!exitHook && e.code === 0)
      out.push({
        code: 'exited-early',
        text: `${name} exited with status 0 before the end: a feed consumer runs until SIGTERM and reconnects by itself`,
        subject: at,
      });
    else if (!exitHook && e.code === 64)
      out.push({ code: 'bad-environment', text: `${name} exited with status 64 (bad environment or store)${said ? `: "${said}"` : ''}`, subject: at });
    else if (!exitHook && !raiseHook)
      out.push({ code: 'crashed', text: `${name} ${how} while the feed was running${said ? ` ("${said}")` : ''}; nothing asked it to end`, subject: at });
  }
  const last = consumers.at(-1);
  if (last?.exit && last.sigtermAt === undefined && consumers.length >= lab.consumer.restart.max && last.exit.killedBy !== 'harness')
    out.push({
      code: 'restarts-exhausted',
      text: `${plural(consumers.length, 'consumer process', 'consumer processes')} ran (restart.max), the last one ended before the script did: nothing was left to reach the chain's end`,
      subject: { process: ref(last) },
    });
  if (lab.expect.processes !== undefined && consumers.length !== lab.expect.processes)
    out.push({
      code: 'process-count',
      text: `${plural(consumers.length, 'consumer process', 'consumer processes')} ran, the scenario expects ${lab.expect.processes}`,
    });
  return out;
}

function sigtermProblems(p: ProcessFacts): Finding[] {
  if (p.sigtermAt === undefined || !p.exit) return [];
  const e = p.exit;
  const process = ref(p);
  const name = who(p);
  if (e.killedBy)
    return [
      {
        code: 'sigterm-ignored',
        text: `${name} did not exit within ${SIGTERM_EXIT_MS / 1000} s of SIGTERM: the harness killed it ${seconds(e.t - p.sigtermAt)} after`,
        subject: { process, t: p.sigtermAt },
      },
    ];
  if (e.code !== 0)
    return [
      {
        code: 'sigterm-status',
        text: `${name} ${e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`} after SIGTERM, expected status 0`,
        subject: { process, t: e.t },
      },
    ];
  const took = (p.startedAt ?? 0) + e.durationMs - p.sigtermAt;
  if (p.startedAt !== undefined && took > SIGTERM_EXIT_MS + EXIT_SLACK_MS)
    return [
      {
        code: 'sigterm-slow',
        text: `${name} took ${seconds(took)} to exit after SIGTERM, more than ${SIGTERM_EXIT_MS / 1000} s`,
        subject: { process, t: e.t },
      },
    ];
  return [];
}

function controlProcessProblems(c: ProcessFacts): Finding[] {
  if (!c.exit) return c.startedAt === undefined ? [] : [{ code: 'control-never-ended', text: 'the control consumer has no recorded exit' }];
  if (c.sigtermAt === undefined)
    return [
      {
        code: 'control-ended-early',
        text: `the control consumer ${c.exit.signal ? `was killed by ${c.exit.signal}` : `exited with status ${c.exit.code}`} before the end${lastLine(c.exit.stderrTail) ? ` ("${lastLine(c.exit.stderrTail)}")` : ''}`,
        subject: { process: ref(c), t: c.exit.t },
      },
    ];
  return sigtermProblems(c).map((f) => ({ ...f, code: `control-${f.code}` }));
}

// ------------------------------------------------------------------------------ mid-run reads

const MOMENT: Record<string, string> = {
  'at-subscribe': 'when its subscribe arrived',
  'while-stopped': 'while it was stopped by its own hook',
  'after-exit': 'after it ended',
  converging: 'while the harness waited for convergence',
};

function midRunProblems(p: ProcessFacts, topics: readonly string[], sent: readonly SentSnapshot[]): Finding[] {
  const out: Finding[] = [];
  for (const r of p.reads) {
    const view = viewOf(r.store);
    const moment = `${MOMENT[r.when] ?? r.when} (${seconds(r.t)})`;
    if (view.error) {
      const locked = r.when === 'while-stopped' ? stoppedLockWords(view.error) : undefined;
      out.push({
        code: 'unreadable-mid-run',
        text: `${who(p)}: ${moment}, ${locked ?? `its file could not be read through an independent connection (${view.error})`}`,
        subject: { process: ref(p), t: r.t },
      });
      continue;
    }
    for (const problem of consistencyProblems(view, topics, sent))
      out.push({
        code: 'inconsistent-store',
        text: `${who(p)}: ${moment}, an independent read found ${problem.text} — every committed state holds its events above the snapshot, the cursor on the greatest, and balances equal to the snapshot's plus the events'`,
        subject: { process: ref(p), t: r.t, ...(problem.cursors ? cursorSubject(problem.cursors) : {}) },
      });
  }
  return out;
}

function hookProblems(p: ProcessFacts, facts: RunFacts): Finding[] {
  const out: Finding[] = [];
  const moments = hookMoments(p, (from, to) => lossyFaultBetween(facts, from, to) !== undefined);
  const stopped = p.reads.filter((r) => r.when === 'while-stopped');
  // The read after an exit hook stands for that hook only when the hook ended the process (a
  // SIGKILL fault may have come first).
  const afterExit = p.exit?.code === 86 && !p.exit.killedBy ? p.reads.find((r) => r.when === 'after-exit') : undefined;
  let stops = 0;
  for (const m of moments) {
    const read = m.step.action === 'stop' ? stopped[stops++] : m.step.action === 'exit' ? afterExit : undefined;
    if (!read || !m.certain || read.store.error || !read.store.exists) continue;
    const problem = hookReadProblem(m, viewOf(read.store));
    if (!problem) continue;
    const where = transactionWords(m);
    const committed = m.step.point === 'commit';
    const subject = { process: ref(p), t: read.t, ...cursorSubject([m.cursor]) };
    if (m.step.action === 'stop')
      out.push({
        code: committed ? 'commit-not-visible' : 'uncommitted-visible',
        text: committed
          ? `${who(p)} stopped itself right after ${where}, but an independent read saw ${describeModel(problem.got)}; a committed transaction must be visible: ${describeModel(problem.want)}`
          : `a frame's changes not in one transaction: ${who(p)} stopped itself inside ${where}, and an independent read saw ${describeModel(problem.got)}; uncommitted work must be invisible: it must see ${describeModel(problem.want)} — every frame that changes the store is handled in one transaction, the cursor included (CONTRACT.md §3)`,
        subject,
      });
    else
      out.push({
        code: committed ? 'commit-not-durable' : 'uncommitted-survived',
        text: committed
          ? `${who(p)} was ended right after ${where}, but its file then held ${describeModel(problem.got)}; the committed event must survive: ${describeModel(problem.want)}`
          : `${who(p)} was ended inside ${where}, and its file then held ${describeModel(problem.got)}; nothing of an uncommitted transaction may survive: ${describeModel(problem.want)}`,
        subject,
      });
  }
  return out;
}

// ------------------------------------------------------------------------------ subscribes

/** What the process needed to subscribe with (a snapshot, after a stale-cursor reset or a revoke into its snapshot), and when it learnt it. */
type SnapshotNeed = { why: string; t: number; certain: boolean; stale?: boolean };

/** A subscribe against the store read when it arrived: the durable cursor and hash, or null exactly when a snapshot is needed. */
function cursorProblem(
  f: SubscribeFrame,
  read: StoreView,
  need: SnapshotNeed | undefined,
  resetBefore: { reason: string; t: number } | undefined,
  where: string,
  subject: Finding['subject'],
): Finding | undefined {
  const durable = read.cursor;
  if (f.cursor === null) {
    if (durable !== null && !need)
      return {
        code: 'unneeded-snapshot',
        text:
          resetBefore && resetBefore.reason !== 'stale-cursor'
            ? `after \`reset ${resetBefore.reason}\` at ${seconds(resetBefore.t)}, ${where} subscribed with cursor null, but its store held cursor ${durable}: that reset asks to resume from the stored cursor, and nothing called for a snapshot (no stale-cursor reset, no revoke into its snapshot): an unneeded snapshot empties the user's activity list (CONTRACT.md §4: after a slow-consumer or shutdown reset, reconnect with the stored cursor)`
            : `${where} subscribed with cursor null, but its store held cursor ${durable} and nothing called for a snapshot (no stale-cursor reset, no revoke into its snapshot since it started): an unneeded snapshot empties the user's activity list — subscribe with the stored cursor and its block hash; cursor null only when a snapshot is needed (CONTRACT.md §2, A snapshot is needed)`,
        subject: { ...subject, ...cursorSubject([durable]) },
      };
  } else if (need?.certain)
    return {
      code: 'snapshot-needed',
      text: need.stale
        ? `after \`reset stale-cursor\` at ${seconds(need.t)}, ${where} subscribed with the stale cursor ${f.cursor} again, and no snapshot was installed since: it must subscribe with cursor null — resuming from beyond the server's window, it would silently believe it is up to date (CONTRACT.md §4: after a stale-cursor reset the next subscribe carries cursor null)`
        : `${where} subscribed with cursor ${f.cursor}, but ${need.why} at ${seconds(need.t)} and no snapshot was installed since: it must subscribe with cursor null (CONTRACT.md §2, A snapshot is needed)`,
      subject: { ...subject, ...cursorSubject([f.cursor]) },
    };
  else if (durable === null)
    return {
      code: 'not-durable-cursor',
      text: `${where} subscribed with cursor ${f.cursor}, but its store held no cursor at that moment (a fresh store needs cursor null)`,
      subject: { ...subject, ...cursorSubject([f.cursor]) },
    };
  else if (f.cursor !== durable)
    return {
      code: 'not-durable-cursor',
      text: `${where} subscribed with cursor ${f.cursor}, but the cursor durable in its store at that moment was ${durable}`,
      subject: { ...subject, ...cursorSubject([f.cursor, durable]) },
    };
  else if (f.blockHash !== read.blockHash)
    return {
      code: 'wrong-subscribe-hash',
      text: `${where} subscribed from ${f.cursor} with block hash ${f.blockHash}, but its store held block hash ${read.blockHash ?? 'NULL'} for that cursor — a subscribe carries the stored cursor and the stored hash of its block, as committed with it (CONTRACT.md §2)`,
      subject: { ...subject, ...cursorSubject([f.cursor]) },
    };
  return undefined;
}

/**
 * Each subscribe must carry the cursor and block hash durable at that moment (the store read when
 * it arrived), or null when a snapshot is needed: a store without a cursor, or — in this
 * process's memory — a `stale-cursor` reset or a revoke into the snapshot not yet followed by an
 * installed snapshot. A null subscribe without such a reason is an unneeded snapshot.
 */
function subscribeProblems(p: ProcessFacts, facts: RunFacts, lab: FeedPlan, clientId: string): Finding[] {
  const out: Finding[] = [];
  let need: SnapshotNeed | undefined;
  let pendingSnapshot: { cursor: string; index: number } | undefined;
  /** The reset that ended the previous connection, if one did. */
  let lastReset: { reason: string; t: number } | undefined;
  for (const conn of p.conns) {
    const resetBefore = lastReset;
    lastReset = undefined;
    const sub = conn.subscribe;
    const subject = { process: ref(p), ...(sub ? { t: sub.t } : {}) };
    const where = `${who(p)}, connection ${conn.conn}`;
    if (!sub) {
      // A link that drops bytes may have swallowed the subscribe: the consumer cannot be blamed.
      const lost = lossyFaultBetween(facts, conn.openedAt, conn.closedAt ?? conn.openedAt);
      if (conn.closedBy === 'publisher' && /^idle/.test(conn.closeReason ?? '') && !lost)
        out.push({
          code: 'no-subscribe',
          text: `${where}: connected but never sent subscribe (the server closed it as idle)`,
          subject: { process: ref(p), t: conn.openedAt },
        });
      continue;
    }
    if (sub.error || !sub.frame) {
      out.push({
        code: 'invalid-subscribe',
        text: `${where}: its subscribe breaks the protocol (${sub.error ?? 'unreadable'}): ${sub.line.trim().slice(0, 200)}`,
        subject,
      });
      continue;
    }
    const f = sub.frame;
    if (f.client !== clientId || JSON.stringify(sub.topics) !== JSON.stringify(lab.topics))
      out.push({
        code: 'wrong-subscribe',
        text: `${where}: subscribed as ${JSON.stringify(f.client)} to ${JSON.stringify(sub.topics)}, expected ${JSON.stringify(clientId)} and CHAOSLAB_TOPICS in order ${JSON.stringify(lab.topics)}`,
        subject,
      });
    const read = conn.atSubscribe ? viewOf(conn.atSubscribe.store) : undefined;
    // A snapshot sent on the previous connection ends the need once the store shows it installed.
    if (pendingSnapshot && read && read.snapshotCursor === pendingSnapshot.cursor) need = undefined;
    pendingSnapshot = undefined;
    if (read && !read.error) {
      const problem = cursorProblem(f, read, need, resetBefore, where, subject);
      if (problem) out.push(problem);
    }
    // What this connection told the process: frames up to the first one it must close on.
    let snapshotAt = read?.snapshotCursor ?? null;
    for (const [index, s] of conn.sent.entries()) {
      if (s.invalid !== undefined) break;
      const frame = s.frame;
      if (!frame) continue;
      const certain = !lossyFaultBetween(facts, s.t, conn.closedAt ?? s.t);
      if (frame.op === 'snapshot') {
        pendingSnapshot = { cursor: frame.cursor, index };
        snapshotAt = frame.cursor;
      } else if (frame.op === 'reset') {
        lastReset = { reason: frame.reason, t: s.t };
        if (frame.reason === 'stale-cursor') {
          need = { why: 'the server sent `reset stale-cursor`', t: s.t, certain, stale: true };
          pendingSnapshot = undefined;
        }
        break;
      } else if (frame.op === 'revoke' && snapshotAt !== null && frame.fromCursor <= snapshotAt) {
        need = { why: `the server revoked from ${frame.fromCursor}, into its snapshot at ${snapshotAt}`, t: s.t, certain };
        pendingSnapshot = undefined;
        break;
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------------------ the wire

function wireProblems(c: ConnFacts, p: ProcessFacts, plan: Plan, runEnd: number, facts: RunFacts): Finding[] {
  const out: Finding[] = [];
  const where = `${who(p)}, connection ${c.conn}`;
  if (c.recvErrors.length) {
    const e = c.recvErrors[0]!;
    out.push({
      code: 'invalid-frame',
      text: `${where} sent ${plural(c.recvErrors.length, 'line')} that break the protocol, first at ${seconds(e.t)}: ${e.line.trim().slice(0, 120)} (${e.error})`,
      subject: { process: ref(p), t: e.t },
    });
  }
  // A ping must be answered: unanswered while a later one was, or while the connection stayed open long enough.
  const window = plan.lab.server.idleMs + plan.lab.time.latencyMs;
  const end = c.closedAt ?? p.sigtermAt ?? runEnd;
  const unanswered = c.pings.filter((ping, i) => {
    if (c.pongs.has(ping.id)) return false;
    // A link that drops bytes (a cut, a half-open link) may have swallowed the ping or its pong.
    if (lossyFaultBetween(facts, ping.t, Math.min(end, ping.t + window))) return false;
    const later = c.pings.slice(i + 1).some((q) => c.pongs.has(q.id));
    return later || end - ping.t >= window;
  });
  if (unanswered.length) {
    const first = unanswered[0]!;
    out.push({
      code: 'ping-unanswered',
      text: `${where} left ${plural(unanswered.length, 'ping')} of ${c.pings.length} unanswered, first ping ${first.id} at ${seconds(first.t)}: every ping must be answered with a pong carrying the same id, as soon as it arrives (CONTRACT.md §4, §5)`,
      subject: { process: ref(p), t: first.t },
    });
  }
  return out;
}

// ------------------------------------------------------------------------------ convergence

function convergenceProblems(
  reads: readonly { t: number; when: string; store: FeedStoreSnapshot }[],
  role: 'consumer' | 'control',
  expected: Expected,
  sent: readonly SentSnapshot[],
  lab: FeedPlan,
): Finding[] {
  const last = reads.filter((r) => r.when === 'converging').at(-1);
  if (!last) return [];
  const view = viewOf(last.store);
  const judged = judgeStore(role, view, expected, sent);
  if (judged.problems.length === 0) return [];
  const whose = role === 'consumer' ? "consumer's" : "control consumer's";
  // At the chain's end, the wait may have ended before converge_ms (converge.ts): nothing more could reach that store.
  const what = atChainEnd(judged)
    ? `${whose} store stands at the chain's end (cursor ${view.cursor}) but does not match the chain`
    : `${whose} store did not reach the chain's end within ${seconds(lab.time.convergeMs)} after the script`;
  return [
    {
      code: 'not-converged',
      text: `the ${what}: its last read (${seconds(last.t)}) showed ${describeView(view)} — ${judged.summary.line}`,
      subject: { t: last.t, ...(judged.summary.missing.length ? cursorSubject(judged.summary.missing) : {}) },
    },
  ];
}
