// A server scene's verdict: the probes' wire record against the contract first (wire-checks.ts:
// the first frame after each subscribe, revokes from the fork point, order, resets when due, the
// shutdown reset), then each probe's store against the chain's end (the consumer run's
// judgeStore), the harness's own clients (clients/check.ts), then every server process's end
// against what the harness did to it, ranked by the server's table (server-priorities.ts: the
// server author's mistake leads). A probe (the harness's own reference consumer) ending badly
// makes the run unjudgeable: a harness error.

import { rankFindings } from '../../../../findings/priority.js';
import { statusOf, type Finding, type Verdict } from '../../../../findings/verdict.js';
import { SERVER_PRIORITIES } from '../../server-priorities.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { exitFacts, type ProcessFacts, SIGTERM_FAULT } from '../../check/facts.js';
import { expectedOf, judgeStore, type Judgement, viewOf } from '../../check/state.js';
import { smallestDiff } from '../../check/diff.js';
import { activityTable, storesStateTable } from '../../report/tables.js';
import { plural, shortCursor } from '../../report/words.js';
import { simulate } from '../../scenario/chain-script.js';
import { chainSnapshotAt, probeErrors, type ServerCheckInput, storeFindings } from '../check.js';
import { instanceProblems, instancesTable } from './instances.js';
import { checkClients } from '../clients/check.js';
import { clientStream } from '../clients/streams.js';
import { probeDone } from '../wire/probe-wire.js';
import { probeConnsOf, probeWireProblems } from '../wire/wire-checks.js';
import { deliveryTable } from '../wire/tally.js';
import { lagVerdict } from '../wire/lag-verdict.js';
import { reorgCoverage } from '../wire/coverage.js';
import { clientCoverage } from '../clients/coverage.js';
import { sceneCoverage } from './coverage.js';

const PROBE_STREAM = /^probe(?:-(\d+))?$/;

/** Each probe's store, by the journal's stream entries (probe n's stream is `probe` or `probe-<n>`). */
function probeDbs(journal: readonly JournalEntry[]): { n: number; db: string }[] {
  return journal.flatMap((e) => {
    const m = e.type === 'stream' ? PROBE_STREAM.exec(e.stream) : null;
    return m && e.type === 'stream' ? [{ n: Number(m[1] ?? 1), db: e.db }] : [];
  });
}

/** Probe n as a process: its exit, and the end-of-run SIGTERM (sent to every probe at once). */
function probeFacts(journal: readonly JournalEntry[], n: number): ProcessFacts {
  const facts: ProcessFacts = { role: 'control', incarnation: n, reads: [], conns: [] };
  for (const e of journal) {
    if (e.type === 'process-start' && e.role === 'control' && e.incarnation === n) facts.startedAt = e.t;
    else if (e.type === 'process-exit' && e.role === 'control' && e.incarnation === n) facts.exit = exitFacts(e);
    else if (e.type === 'fault' && (e.name === SIGTERM_FAULT.control || e.name === probeDone(n))) facts.sigtermAt ??= e.t;
  }
  return facts;
}

/** A probe with another chain's cursor: its first connection must have been answered (with what, wire-checks.ts judges). */
function oneShotProblems(journal: readonly JournalEntry[], chainId: number, oneShots: readonly number[]): Finding[] {
  const conns = probeConnsOf(journal, chainId);
  return oneShots.flatMap((n) => {
    const first = conns.find((c) => c.probe === n && c.subscribe);
    if (first?.items.some((i) => 'frame' in i && i.frame)) return [];
    return [
      {
        code: 'no-answer',
        text: `probe ${n}: its subscribe with a cursor of another chain got no answer${first ? '' : ' (it never subscribed)'}; due: reset stale-cursor, then close (server contract §3)`,
        subject: { process: { role: 'control' as const, incarnation: n } },
      },
    ];
  });
}

export function checkSceneRun({ journal, plan, under, read }: ServerCheckInput): Verdict {
  const sim = simulate(plan.lab.chain, plan.lab.topicIndexes);
  const expected = expectedOf(sim);
  const oneShots = (under.scene?.probes ?? []).flatMap((p, i) => (p.store === 'other-chain' ? [i + 1] : []));
  const probes = probeDbs(journal)
    .filter(({ n }) => !oneShots.includes(n))
    .map(({ n, db }) => {
      const view = viewOf(read(db));
      return { n, view, judged: judgeStore(`probe ${n}`, view, expected, chainSnapshotAt(sim, view.snapshotCursor)) };
    });
  const servers = instanceProblems(journal);
  const clients = checkClients(journal, plan.lab, under, expected);
  const listened = !servers.some((f) => f.code === 'server-not-listening');
  const findings: Finding[] = rankFindings(
    [
      ...probeWireProblems({ journal, chainId: expected.chainId, forkPoints: sim.reorgs.map((r) => r.forkNumber) }),
      ...oneShotProblems(journal, expected.chainId, oneShots),
      ...(listened
        ? probes.flatMap((p) =>
            storeFindings(p.judged, p.view.snapshotBlockHash).map((f) => ({
              ...f,
              subject: { ...f.subject, process: { role: 'control' as const, incarnation: p.n } },
            })),
          )
        : []),
      ...clients.findings,
      ...servers,
    ],
    SERVER_PRIORITIES,
  );
  const harnessErrors: Finding[] = [
    ...journal.flatMap((e) => (e.type === 'harness-error' ? [{ code: 'harness-error', text: `harness: ${e.message}` }] : [])),
    // A probe's ending matters only while some server lived to the end.
    ...(listened && journal.some((e) => e.type === 'fault' && /^end-instance-\d+$/.test(e.name))
      ? probeDbs(journal).flatMap((p) => probeErrors(probeFacts(journal, p.n)).map((f) => ({ ...f, text: f.text.replace('the probe', `probe ${p.n}`) })))
      : []),
  ];
  const status = statusOf(findings, harnessErrors);
  // Reported, not bounded: a scene's outages and restarts delay its probes on purpose.
  const lag = lagVerdict(journal);
  const summaries = probes.map((p): [string, Judgement['summary']] => [`probe ${p.n} (the reference consumer)`, p.judged.summary]);
  const failing = probes.find((p) => p.judged.problems.length > 0) ?? probes[0];
  const conns = probeConnsOf(journal, expected.chainId);
  const coverage = [
    ...(under.scene ? sceneCoverage(journal, under.scene, conns, sim.reorgs, expected.chainId) : []),
    ...reorgCoverage(journal, conns, sim.reorgs),
    ...clientCoverage(journal, plan.lab, under, expected),
  ];
  return {
    status,
    headline:
      status === 'pass'
        ? `the server delivered the chain to every probe: ${probes.map((p) => `probe ${p.n} holds ${plural(p.judged.summary.events, 'event')} after its snapshot at ${shortCursor(p.judged.summary.snapshotCursor)}`).join('; ')}; every answer on the wire as the contract says; every instance ended as it was told`
        : ((harnessErrors[0] ?? findings[0])?.text ?? 'the server scene was judged'),
    findings,
    harnessErrors,
    diff: status === 'pass' || !failing ? [] : smallestDiff({ consumer: failing.judged, findings, harnessErrors, label: `probe ${failing.n}` }),
    state: storesStateTable(expected, summaries, "Final state: the chain's end vs each probe's store"),
    tables: [
      ...probes.map((p) => ({ ...activityTable(p.judged.summary), id: `activity-probe-${p.n}`, title: `Probe ${p.n}: its activity` })),
      instancesTable(journal),
      deliveryTable(journal, expected, new Set(under.clients.filter((c) => c.quiet).map((c) => clientStream(c.name)))),
      ...clients.tables,
      ...(lag.table ? [lag.table] : []),
    ],
    ...(lag.figure ? { figures: [lag.figure] } : {}),
    coverage,
  };
}
