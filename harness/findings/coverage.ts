// Whether each fault of a run took effect: coverage as data. A lab's checker says, for every
// fault of its plan (a cut, a kill, a hook, a reorganisation, a bad frame…), whether the consumer
// under test met it and how. A run that passes while one of its faults reached nobody proves
// nothing about that fault: it is an ERROR ("untested"), never a PASS. A run that fails keeps its
// findings: the consumer's failure is what it shows, and an unmet fault is then only data (the
// consumer may have failed before it). `chaoslab chaos` counts these rows per kind (its coverage
// table) and tells an untested run from a harness error.

import type { FaultCoverage, Finding, Table, Verdict } from './verdict.js';

export type { FaultCoverage };

/** The code of a harness error that says a passing run left a fault untested. */
export const UNTESTED = 'fault-without-effect';

/** Whether a verdict's only problems are untested faults: a chaos search counts such a run as untested, not as a harness error. */
export const onlyUntested = (v: Pick<Verdict, 'status' | 'harnessErrors'>): boolean =>
  v.status === 'error' && v.harnessErrors.length > 0 && v.harnessErrors.every((f) => f.code === UNTESTED);

/** The verdict with its coverage judged: a pass with a fault that took no effect becomes an ERROR that says which and why. */
export function withCoverage(verdict: Verdict): Verdict {
  const coverage = verdict.coverage ?? [];
  const tables = coverage.length ? [...verdict.tables, coverageTable(coverage)] : verdict.tables;
  const missed = coverage.filter((c) => !c.took);
  if (verdict.status !== 'pass' || missed.length === 0) return { ...verdict, tables };
  const errors: Finding[] = missed.map((c) => ({
    code: UNTESTED,
    text: `untested: ${c.how} (fault "${c.fault}"), so this run proves nothing about a ${c.kind}; the consumer met every other fault and passed`,
  }));
  return { ...verdict, status: 'error', headline: errors[0]!.text, harnessErrors: [...verdict.harnessErrors, ...errors], tables };
}

/** The run's faults, one row each: what reports show under "Faults". */
export function coverageTable(coverage: readonly FaultCoverage[]): Table {
  return {
    id: 'coverage',
    title: 'Faults: did each take effect?',
    columns: ['kind', 'took effect', 'how'],
    rows: coverage.map((c) => ({ label: c.fault, cells: [c.kind, c.took ? 'yes' : 'no', c.how], ...(c.took ? {} : { ok: false, wrong: [1] }) })),
  };
}

/** One row of a chaos coverage table: how often a kind was drawn, took effect, and the runs in which the consumer met it. */
export interface CoverageRow {
  kind: string;
  /** Faults of this kind in the runs. */
  drawn: number;
  /** Of those, the ones that took effect. */
  tookEffect: number;
  /** Runs that drew at least one, and runs in which at least one took effect. */
  runsDrawn: number;
  runsMet: number;
}

/** The coverage table of a set of runs: a row per kind, in the order the kinds first appear. */
export function coverageRows(runs: readonly (readonly FaultCoverage[])[]): CoverageRow[] {
  const rows = new Map<string, CoverageRow>();
  for (const coverage of runs) {
    const met = new Set<string>();
    const drew = new Set<string>();
    for (const c of coverage) {
      const row = rows.get(c.kind) ?? { kind: c.kind, drawn: 0, tookEffect: 0, runsDrawn: 0, runsMet: 0 };
      rows.set(c.kind, row);
      row.drawn++;
      if (c.took) row.tookEffect++;
      drew.add(c.kind);
      if (c.took) met.add(c.kind);
    }
    for (const kind of drew) rows.get(kind)!.runsDrawn++;
    for (const kind of met) rows.get(kind)!.runsMet++;
  }
  return [...rows.values()];
}

/** A row's share of runs in which the consumer met its kind (1 when none drew it). */
export const metShare = (row: CoverageRow): number => (row.runsDrawn === 0 ? 1 : row.runsMet / row.runsDrawn);

/** The least share of runs a kind must take effect in: below it, the generator draws faults that test nothing. */
export const COVERAGE_BOUND = 0.9;
