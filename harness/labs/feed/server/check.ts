// The server run's verdict. The server under test is judged by what its probe holds: the probe's
// store, read through an independent read-only connection, against the state derived from the
// canonical chain (count, order, content, balances, cursor: the consumer run's own judgeStore),
// with the events committed while the server was stopped after its snapshot named when they are
// missing. Its snapshot must be the chain's own at the safe point of a block. Then the server as a
// process (server-problems.ts); the probe's own troubles are the harness's. The findings are
// ranked by the server's table (server-priorities.ts): the server author's mistake leads, what it
// left in the probe's store comes last.

import { formatCursor } from '../../../../protocol/feed/cursor.js';
import { rankFindings } from '../../../findings/priority.js';
import { type Finding, statusOf, type Verdict } from '../../../findings/verdict.js';
import type { JournalEntry } from '../../../record/journal.js';
import type { Scenario } from '../../../scenario/types.js';
import { smallestDiff } from '../check/diff.js';
import { factsOf, lastLine, type ProcessFacts, SIGTERM_EXIT_MS } from '../check/facts.js';
import { expectedOf, judgeStore, type Judgement, type SentSnapshot, viewOf } from '../check/state.js';
import type { FeedStoreSnapshot } from '../check/store-reader.js';
import { activityTable, storesStateTable } from '../report/tables.js';
import { blockOf, cursorList, cursorSubject, plural, seconds, shortCursor } from '../report/words.js';
import { type SimulatedChain, simulate } from '../scenario/chain-script.js';
import type { FeedPlan, ServerUnderTestPlan } from '../scenario/plan.js';
import { SERVER_PRIORITIES } from '../server-priorities.js';
import { PROBE_STREAM } from './probe.js';
import { blocksWhileStopped } from './scenario.js';
import { checkClients } from './clients/check.js';
import { type ServerFacts, serverFactsOf, serverProblems } from './server-problems.js';
import { probeWireProblems } from './wire/wire-checks.js';
import { deliveryTable } from './wire/tally.js';
import { clientStream } from './clients/streams.js';
import { lagVerdict } from './wire/lag-verdict.js';
import { checkCrowd } from './clients/crowds/crowd-check.js';
import { clientCoverage } from './clients/coverage.js';
import { reorgCoverage } from './wire/coverage.js';
import { probeConnsOf } from './wire/wire-checks.js';
import type { FaultCoverage } from '../../../findings/coverage.js';

/**
 * The snapshot the server had to send for `cursor`'s block: the safe point's cursor (the block's
 * last log, or position 0), its hash and the followed accounts' balances there, from the
 * simulated chain; none when `cursor` is not such a point.
 */
export function chainSnapshotAt(sim: SimulatedChain, cursor: string | null): SentSnapshot[] {
  const number = cursor === null ? undefined : blockOf(cursor);
  const block = number === undefined ? undefined : sim.chain.canonicalAt(number);
  if (number === undefined || !block) return [];
  const safe = formatCursor({ chainId: sim.chain.chainId, blockNumber: number, logIndex: Math.max(0, block.logs.length - 1) });
  const all = sim.chain.balancesAt(number);
  return [{ cursor: safe, blockHash: block.hash, balances: Object.fromEntries(sim.topics.map((a) => [a, (all.get(a) ?? 0n).toString()])) }];
}

export interface ServerCheckInput {
  journal: readonly JournalEntry[];
  plan: Scenario<FeedPlan>;
  under: ServerUnderTestPlan;
  /** Reads the probe's store through an independent connection (and journals the read). */
  read(db: string): FeedStoreSnapshot;
}

/** Events committed while the server was stopped after its snapshot that the probe never got: the race, lost. */
function raceProblems(judged: Judgement, facts: ServerFacts, plan: FeedPlan, under: ServerUnderTestPlan): Finding[] {
  if (facts.committedAt === undefined) return [];
  const { from, to } = blocksWhileStopped(plan.chain, under);
  const lost = judged.summary.missing.filter((c) => {
    const block = blockOf(c) ?? -1;
    return block >= from && block <= to;
  });
  if (lost.length === 0) return [];
  return [
    {
      code: 'lost-in-snapshot-race',
      text: `the snapshot was taken before following the outbox: the probe's store misses ${plural(lost.length, 'event')} committed while the server was stopped after the snapshot (blocks ${from}..${to}): ${cursorList(lost)} — they came after the snapshot was read and before the server followed the outbox, and were never sent; a server must start buffering before it reads the snapshot, then release what is after its cursor (server contract §3)`,
      subject: { ...cursorSubject(lost), t: facts.committedAt },
    },
  ];
}

/** The store's findings, in a probe's words: the server sent what the probe holds. */
export function storeFindings(judged: Judgement, snapshotBlockHash: string | null): Finding[] {
  return judged.problems.map((p) => ({
    code: p.code,
    text:
      p.code === 'snapshot-not-sent'
        ? `the probe: its snapshot at ${p.cursors?.[0] ?? '?'} (block hash ${snapshotBlockHash ?? 'NULL'}) is not the chain's safe point of that block: the server's snapshot named a cursor or block hash the chain does not have there`
        : p.text,
    ...(p.cursors ? { subject: cursorSubject(p.cursors) } : {}),
  }));
}

/** The probe is the harness's own reference consumer: its ending early or badly makes the run unjudgeable. */
export function probeErrors(probe: ProcessFacts): Finding[] {
  const e = probe.exit;
  if (!e) return probe.startedAt === undefined ? [] : [{ code: 'probe-never-ended', text: 'the probe (the reference consumer) has no recorded exit' }];
  const how = e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`;
  const said = lastLine(e.stderrTail) ? ` ("${lastLine(e.stderrTail)}")` : '';
  if (probe.sigtermAt === undefined) return [{ code: 'probe-ended-early', text: `the probe (the reference consumer) ${how} before the end${said}` }];
  if (e.killedBy || e.code !== 0)
    return [
      {
        code: 'probe-sigterm',
        text: `the probe (the reference consumer) ${e.killedBy ? `did not exit within ${SIGTERM_EXIT_MS / 1000} s of SIGTERM` : how} after SIGTERM${said}`,
      },
    ];
  return [];
}

export function checkServerRun({ journal, plan, under, read }: ServerCheckInput): Verdict {
  const lab = plan.lab;
  const sim = simulate(lab.chain, lab.topicIndexes);
  const expected = expectedOf(sim);
  const server = serverFactsOf(journal);
  const clients = checkClients(journal, lab, under, expected);
  const crowd = under.crowd === undefined ? undefined : checkCrowd(journal, under.crowd, expected.events);
  const lag = lagVerdict(journal, under.maxLagP99Ms);
  const probe = factsOf(journal, expected.chainId).control;
  const db = journal.flatMap((e) => (e.type === 'stream' && e.stream === PROBE_STREAM ? [e.db] : [])).at(0);
  const view = db === undefined ? undefined : viewOf(read(db));
  const judged = view && judgeStore('the probe', view, expected, chainSnapshotAt(sim, view.snapshotCursor));
  const found: Finding[] = [
    ...(judged ? raceProblems(judged, server, lab, under) : []),
    ...probeWireProblems({ journal, chainId: expected.chainId, forkPoints: sim.reorgs.map((r) => r.forkNumber) }),
    ...serverProblems(server, view?.snapshotCursor != null, clients.badFrames),
    // A server that never listened left the probe nothing to connect to: its store says nothing more.
    ...(judged && server.notListeningAt === undefined && db !== undefined ? storeFindings(judged, view!.snapshotBlockHash) : []),
    ...clients.findings,
    ...(crowd?.findings ?? []),
    ...lag.findings,
  ];
  // The cause first (the race lost, the probe's or a subscriber's, before what it left in the probe's store).
  const findings = rankFindings(found, SERVER_PRIORITIES);
  const harnessErrors: Finding[] = [
    ...journal.flatMap((e) => (e.type === 'harness-error' ? [{ code: 'harness-error', text: `harness: ${e.message}` }] : [])),
    // The probe's ending matters only while the server lived to the end.
    ...(server.sigtermAt !== undefined ? probeErrors(probe) : []),
  ];
  const status = statusOf(findings, harnessErrors);
  const summary = judged?.summary;
  const coverage = [
    ...stopHookCoverage(server, lab, under),
    ...reorgCoverage(journal, probeConnsOf(journal, expected.chainId), sim.reorgs),
    ...clientCoverage(journal, lab, under, expected),
  ];
  return {
    status,
    headline:
      status === 'pass' && summary
        ? [
            passHeadline(summary, server, lab, under),
            ...clients.words,
            ...(crowd ? [`each of the crowd's ${crowd.clients} clients got every event due, in order`] : []),
            ...(lag.words ? [lag.words] : []),
          ].join('; ')
        : ((harnessErrors[0] ?? findings[0])?.text ?? 'the server run was judged'),
    findings,
    harnessErrors,
    diff: status === 'pass' || !judged ? [] : smallestDiff({ consumer: judged, findings, harnessErrors, label: 'probe' }),
    state: storesStateTable(expected, summary ? [['probe (the reference consumer)', summary]] : [], "Final state: the chain's end vs the probe's store"),
    tables: [
      ...(summary ? [{ ...activityTable(summary), title: 'Activity list: the probe vs the chain' }] : []),
      serverTable(server),
      deliveryTable(journal, expected, new Set(under.clients.filter((c) => c.quiet).map((c) => clientStream(c.name)))),
      ...clients.tables,
      ...(crowd?.table ? [crowd.table] : []),
      ...(lag.table ? [lag.table] : []),
    ],
    ...(clients.figures.length || lag.figure ? { figures: [...clients.figures, ...(lag.figure ? [lag.figure] : [])] } : {}),
    coverage,
  };
}

/** The server's `stop@` hook: it took effect when the server stopped itself there and the harness committed blocks meanwhile (the snapshot race). */
export function stopHookCoverage(server: ServerFacts, plan: FeedPlan, under: ServerUnderTestPlan): FaultCoverage[] {
  const hooks = (under.fault ?? '').split(',').filter((item) => item.startsWith('stop@'));
  if (hooks.length === 0) return [];
  const { from, to } = blocksWhileStopped(plan.chain, under);
  const base = { fault: hooks.join(','), kind: 'stop-hook' };
  return [
    server.committedAt === undefined
      ? {
          ...base,
          took: false,
          how: `the server never stopped itself at its hook (${hooks.join(', ')}): no block was committed while it was stopped, so the snapshot race was not run`,
        }
      : {
          ...base,
          took: true,
          how: `the server stopped itself at its hook (${hooks.join(', ')}) and blocks ${from}..${to} were committed to the outbox at ${seconds(server.committedAt)}, while it was stopped`,
        },
  ];
}

function passHeadline(s: NonNullable<Judgement['summary']>, server: ServerFacts, plan: FeedPlan, under: ServerUnderTestPlan): string {
  const { from, to } = blocksWhileStopped(plan.chain, under);
  const race = server.committedAt !== undefined ? `, those of blocks ${from}..${to} (committed while the server was stopped after the snapshot) included` : '';
  return `the server delivered the chain: the probe's store holds ${plural(s.events, 'event')} after its snapshot at ${shortCursor(s.snapshotCursor)}${race}, cursor ${shortCursor(s.cursor)}, balances as the chain says; the server exited 0 on SIGTERM`;
}

function serverTable(f: ServerFacts): Verdict['tables'][number] {
  const e = f.exit;
  return {
    id: 'server',
    title: 'The server under test',
    columns: ['command', 'pid', 'stopped itself', 'ended'],
    rows: [
      {
        label: 'server',
        cells: [
          f.command ?? '—',
          f.pid ?? null,
          f.stops.length ? f.stops.map((t) => seconds(t)).join(', ') : 'never',
          e ? `${e.signal ? `killed by ${e.signal}` : `status ${e.code}`}${e.killedBy ? ` (${e.killedBy})` : ''} at ${seconds(e.t)}` : '—',
        ],
      },
    ],
  };
}
