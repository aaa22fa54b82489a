// What a lab's checker returns, and the only thing reports draw from: findings are data (a code,
// a subject, the words), the expected and observed state are tables the checker filled in. No
// renderer re-derives any of it, so the console, summary.md, junit.xml and report.html cannot
// disagree with the verdict or with each other.

/** `skipped`: not run, because it needs what this machine or mode cannot give (packet loss unsealed); never a failure. */
export type VerdictStatus = 'pass' | 'fail' | 'error' | 'skipped';

/** A process of the run: the control consumer, one consumer process (1-based), or the push server under test. */
export interface ProcessRef {
  role: 'consumer' | 'control' | 'server';
  incarnation: number;
}

export interface Finding {
  /** Stable identifier of the kind of problem, e.g. `ack-before-commit`, `wrong-resume`. */
  code: string;
  /** The finding in plain words, complete on its own. */
  text: string;
  /** What it is about, for highlighting: never parsed back out of `text`. */
  subject?: {
    /** Positions in the stream (ledger seqs). */
    seqs?: number[];
    /** Cursors (feed lab). */
    cursors?: string[];
    process?: ProcessRef;
    /** Journal time (ms) of the wire line or event it names. */
    t?: number;
  };
}

/** One row of a table: a label, one cell per column, and whether it departs from what was expected. */
export interface TableRow {
  label: string;
  /** Small text next to the label, e.g. "(after-exit read)". */
  aside?: string;
  cells: (string | number | null)[];
  /** false: shown as wrong; true: shown as right; absent: neutral. */
  ok?: boolean;
  /**
   * With `ok: false`, the cells that are wrong (indexes into `cells`); the others stay neutral (an
   * expected value, or the control's correct one, beside the consumer's wrong one). Absent: all.
   */
  wrong?: number[];
}

export interface Table {
  /** HTML anchor and test hook, e.g. `state`, `incarnations`. */
  id: string;
  title: string;
  columns: string[];
  rows: TableRow[];
  /** Shown when there are no rows. */
  empty?: string;
  /** A sentence under the table. */
  note?: string;
}

/**
 * A picture of the run, as data: the lab that made it draws it (`Vocabulary.drawFigure`), so the
 * core carries it without knowing what it shows.
 */
export interface Figure {
  /** HTML anchor and test hook. */
  id: string;
  title: string;
  /** A sentence under the picture. */
  caption?: string;
  data: unknown;
}

/** Whether one fault of the run took effect (harness/findings/coverage.ts judges a verdict by them). */
export interface FaultCoverage {
  /** The fault's name in the plan ("cut-1"), or the lab's words for it ("reorganisation at block 40"). */
  fault: string;
  /** Its kind, one of the lab's (`cut`, `kill`, `hook`, `reorganisation`…): one row of the chaos coverage table. */
  kind: string;
  took: boolean;
  /** A sentence, complete on its own: how it took effect, or why it did not ("the reorganisation at block 40 reached no consumer: …"). */
  how: string;
}

export interface Verdict {
  status: VerdictStatus;
  /** One line in plain words: what happened. */
  headline: string;
  /** Why the consumer under test failed, most telling first. */
  findings: Finding[];
  /** Problems of the harness itself (a control consumer that disagrees with the script is one). */
  harnessErrors: Finding[];
  /** The smallest diff that shows it: one fact per line. */
  diff: string[];
  /** Expected vs consumer vs control. */
  state: Table;
  /** Further tables of the lab (per process: cursors sent, acknowledgements, exits). */
  tables: Table[];
  /** Pictures of the lab (the feed lab's restart storm); absent for most runs. */
  figures?: Figure[];
  /** Whether each fault of the plan took effect (harness/findings/coverage.ts); absent in older journals. */
  coverage?: FaultCoverage[];
}

/** The status that follows from the findings: any harness error wins. */
export function statusOf(findings: Finding[], harnessErrors: Finding[]): VerdictStatus {
  if (harnessErrors.length > 0) return 'error';
  return findings.length > 0 ? 'fail' : 'pass';
}

/** Every finding's text, harness errors first: what matrices and greps match against. */
export const findingTexts = (v: Pick<Verdict, 'findings' | 'harnessErrors'>): string[] => [...v.harnessErrors, ...v.findings].map((f) => f.text);
