// Findings the harness makes itself, whatever the lab: a consumer that went around the proxy.
// They join the lab's findings in the verdict, first, because they void every other observation:
// a consumer that bypassed the proxy was never tested under the scenario's faults.

import type { JournalEntry } from './journal.js';
import { type Finding, statusOf, type Verdict } from './verdict.js';

export function coreFindings(journal: readonly JournalEntry[]): Finding[] {
  const findings: Finding[] = [];
  for (const e of journal) {
    if (e.type === 'wire' && e.kind === 'open' && e.peer?.via === 'direct' && e.owner?.role === 'consumer')
      findings.push({
        code: 'around-proxy',
        text: `consumer incarnation ${e.owner.incarnation} connected around the proxy: the connection came from pid ${e.peer.pid} (${e.peer.comm}), not from Toxiproxy, so no fault of the scenario could reach it`,
        subject: { process: e.owner, t: e.t },
      });
    if (e.type === 'seal' && e.rejected.packets > 0)
      findings.push({
        code: 'around-proxy',
        text: `the consumer tried to connect around the proxy: the sealed run's firewall refused ${e.rejected.packets} packet${e.rejected.packets === 1 ? '' : 's'} to addresses other than its proxy port`,
      });
  }
  return findings;
}

/** The lab's verdict with the harness's own findings in front. */
export function withCoreFindings(verdict: Verdict, findings: readonly Finding[]): Verdict {
  if (findings.length === 0) return verdict;
  const all = [...findings, ...verdict.findings];
  const status = statusOf(all, verdict.harnessErrors);
  return { ...verdict, findings: all, status, headline: status === 'pass' ? verdict.headline : (verdict.harnessErrors[0] ?? all[0]!).text };
}
