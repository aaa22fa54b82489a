// Was the packet loss what the scenario asked? Each packet to or from the consumer's proxy port
// is an independent draw (`numgen random mod 100 < percent`), so the dropped count out of n
// packets is binomial(n, p). The check is the Chernoff bound in its Kullback–Leibler form,
// P(|X/n − p| as far as the measured share) ≤ 2·exp(−n·D(share ‖ p)), which holds for every n
// without a normal approximation: the run fails when n·D > ln(2/α), with α = LOSS_ALPHA. So
// a correct rule fails at most once in a million runs, and a rule that dropped nothing (or
// everything) is caught once a few hundred packets crossed. The table shows the measured share
// beside the interval the bound allows.

import type { JournalEntry } from '../record/journal.js';
import type { Finding, Table } from '../findings/verdict.js';

/** The false-failure rate of the check (docs/sandbox.md states it). */
export const LOSS_ALPHA = 1e-6;

type LossEntry = Extract<JournalEntry, { type: 'loss' }>;

/** Kullback–Leibler divergence of Bernoulli(q) from Bernoulli(p), 0 < p < 1. */
export function bernoulliKl(q: number, p: number): number {
  const term = (a: number, b: number) => (a === 0 ? 0 : a * Math.log(a / b));
  return term(q, p) + term(1 - q, 1 - p);
}

/** The shares of dropped packets the bound accepts for n packets at loss p: [low, high]. */
export function lossInterval(n: number, p: number, alpha = LOSS_ALPHA): [number, number] {
  if (n <= 0) return [0, 1];
  const limit = Math.log(2 / alpha) / n;
  // D(q ‖ p) grows as q moves away from p on either side: bisect each side for D = limit.
  const solve = (from: number, to: number): number => {
    if (bernoulliKl(to, p) <= limit) return to;
    let [inside, outside] = [from, to];
    for (let i = 0; i < 60; i++) {
      const mid = (inside + outside) / 2;
      if (bernoulliKl(mid, p) <= limit) inside = mid;
      else outside = mid;
    }
    return inside;
  };
  return [solve(p, 0), solve(p, 1)];
}

export interface LossMeasure {
  name: string;
  percent: number;
  port: number;
  packets: number;
  dropped: number;
  /** dropped / packets (0 when no packet crossed). */
  share: number;
  interval: [number, number];
  /** Within the interval, with at least one packet. */
  ok: boolean;
}

export function measureLoss(e: LossEntry, alpha = LOSS_ALPHA): LossMeasure {
  const packets = e.dropped.packets + e.passed.packets;
  const share = packets > 0 ? e.dropped.packets / packets : 0;
  const interval = lossInterval(packets, e.percent / 100, alpha);
  const ok = packets > 0 && bernoulliKl(share, e.percent / 100) * packets <= Math.log(2 / alpha);
  return { name: e.name, percent: e.percent, port: e.port, packets, dropped: e.dropped.packets, share, interval, ok };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** The lab-neutral finding: the loss was not what the scenario asked (or never met a packet). */
export function lossFindings(journal: readonly JournalEntry[]): Finding[] {
  return journal.flatMap((e): Finding[] => {
    if (e.type !== 'loss') return [];
    const m = measureLoss(e);
    if (m.ok) return [];
    const text =
      m.packets === 0
        ? `the packet loss ${m.name} (${m.percent} %) met no packet: nothing crossed port ${m.port} while it was in place, so the consumer was never under loss`
        : `the packet loss ${m.name} was not what the scenario asked: ${m.percent} % asked, ${pct(m.share)} measured (${m.dropped} of ${m.packets} packets dropped, nftables counters); the binomial bound at α = ${LOSS_ALPHA} allows ${pct(m.interval[0])} to ${pct(m.interval[1])} for ${m.packets} packets`;
    return [{ code: 'loss-not-as-asked', text }];
  });
}

/** The measured loss, one row per loss fault, for every report. */
export function lossTables(journal: readonly JournalEntry[]): Table[] {
  const entries = journal.filter((e): e is LossEntry => e.type === 'loss');
  if (entries.length === 0) return [];
  const rows = entries.map((e) => {
    const m = measureLoss(e);
    return {
      label: m.name,
      cells: [`${m.percent} %`, m.packets, m.dropped, m.packets - m.dropped, pct(m.share), `${pct(m.interval[0])} – ${pct(m.interval[1])}`],
      ok: m.ok,
    };
  });
  return [
    {
      id: 'loss',
      title: 'Packet loss (nftables counters)',
      columns: ['asked', 'packets', 'dropped', 'passed', 'measured', `allowed (α = ${LOSS_ALPHA})`],
      rows,
      note: `Every packet to or from the consumer's proxy port, both ways; rules: ${entries.flatMap((e) => e.rules).join('; ')}.`,
    },
  ];
}
