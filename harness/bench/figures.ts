// `make bench`'s figures: each a median of repeated runs with its min and max, beside the floor
// measured in the same invocation, their ratio, and the goal it is held to. A missed goal is a
// mark in the table, never an error. Pure: bench/bench.mjs measures, this summarises and renders.

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
  /**
   * Every sample, in the order measured: for a figure measured in turns with its floor, sample i
   * of each is round i's, so the JSON report allows a ratio round by round (is a gap drift or noise?).
   */
  samples: number[];
}

export type Unit = 's' | 'ms' | 'events/s' | 'MiB' | 'KiB';

/**
 * What a figure is held to. `ratio-max`/`ratio-min`: value / floor; `diff-max`: value − floor;
 * `max`: the value itself.
 */
export type Goal = { kind: 'ratio-max' | 'ratio-min' | 'diff-max' | 'max'; limit: number };

export interface Figure {
  section: string;
  name: string;
  unit: Unit;
  value?: Summary;
  floor?: { name: string; value: Summary };
  goals?: Goal[];
  /** Sealed or not, what was skipped and why, the run's exit status… */
  note?: string;
}

export interface BenchReport {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; platform: string; load: number[] };
  versions: Record<string, string>;
  quick: boolean;
  /** Set when the run departed from the defaults (fewer repetitions, events or sections). */
  settings?: string;
  figures: Figure[];
}

/** Median (the mean of the middle two for an even count), min, max. Throws on no samples: a figure without any is skipped, not summarised. */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('summarize: no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, n: sorted.length, samples: [...samples] };
}

/**
 * The p-th percentile (0 < p ≤ 100) of ascending `sorted` samples by the nearest-rank method:
 * the smallest sample with at least p % of the samples at or below it. Undefined for none.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number | undefined {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile: p must be in (0, 100], got ${p}`);
  if (sorted.length === 0) return undefined;
  return sorted[Math.ceil((p / 100) * sorted.length) - 1];
}

/** value / floor by their medians; undefined without both (or a zero floor). */
export function ratioOf(figure: Figure): number | undefined {
  if (!figure.value || !figure.floor || figure.floor.value.median === 0) return undefined;
  return figure.value.median / figure.floor.value.median;
}

function holds(goal: Goal, figure: Figure): boolean | undefined {
  const value = figure.value?.median;
  if (value === undefined) return undefined;
  const ratio = ratioOf(figure);
  const floor = figure.floor?.value.median;
  switch (goal.kind) {
    case 'max':
      return value <= goal.limit;
    case 'diff-max':
      return floor === undefined ? undefined : value - floor <= goal.limit;
    case 'ratio-max':
      return ratio === undefined ? undefined : ratio <= goal.limit;
    case 'ratio-min':
      return ratio === undefined ? undefined : ratio >= goal.limit;
  }
}

/** Every goal met: true; any missed: false; nothing to judge (skipped, no goal): undefined. */
export function goalMet(figure: Figure): boolean | undefined {
  const verdicts = (figure.goals ?? []).map((g) => holds(g, figure));
  if (verdicts.length === 0 || verdicts.includes(undefined)) return undefined;
  return verdicts.every(Boolean);
}

/** One goal in words: "≤ 1 s", "≥ 90 % of floor"… */
function goalWords(goal: Goal, unit: Unit): string {
  return goal.kind === 'max'
    ? `≤ ${goal.limit} ${unit}`
    : goal.kind === 'diff-max'
      ? `≤ floor + ${goal.limit} ${unit}`
      : goal.kind === 'ratio-max'
        ? `≤ ${goal.limit}× floor`
        : `≥ ${Math.round(goal.limit * 100)} % of floor`;
}

export function goalText(figure: Figure): string {
  return (figure.goals ?? []).map((g) => goalWords(g, figure.unit)).join(', ');
}

const number = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

/** "0.512 s (0.498–0.601, n=5)". */
export function showSummary(s: Summary | undefined, unit: Unit): string {
  if (!s) return '—';
  return `${number(s.median)} ${unit} (${number(s.min)}–${number(s.max)}, n=${s.n})`;
}

/** The figure with `words` at the end of its note, after what the note said already. */
const withNoteEnding = (figure: Figure, words: string): Figure => ({ ...figure, note: figure.note ? `${figure.note}; ${words}` : words });

/**
 * The figure, for one whose floor is part of its own work (the stores a check must read, the runs
 * a grading must make): where that floor alone is over a `max` goal, the goal cannot be met on
 * this machine, whatever chaoslab does, and its note ends saying so.
 */
export function withFloorVerdict(figure: Figure): Figure {
  const floor = figure.floor?.value.median;
  if (floor === undefined) return figure;
  const over = (figure.goals ?? []).filter((g) => g.kind === 'max' && floor > g.limit);
  if (over.length === 0) return figure;
  const verdict = over
    .map((g) => `${goalWords(g, figure.unit)} cannot be met on this machine: its floor alone takes ${number(floor)} ${figure.unit}`)
    .join('; ');
  return withNoteEnding(figure, verdict);
}

/**
 * The figure, for a ratio goal whose rounds disagree: the bench measures a figure with a ratio
 * goal in turns with its floor, so sample i of each is round i's. Where the rounds' own ratios lie
 * on both sides of the goal's limit, the median's verdict is this machine's noise as much as
 * chaoslab's doing, and the note ends saying so. The mark stays what the medians make it.
 */
export function withRoundsNote(figure: Figure): Figure {
  const value = figure.value?.samples;
  const floor = figure.floor?.value.samples;
  if (!value || !floor || value.length !== floor.length || value.length < 3 || floor.some((x) => x === 0)) return figure;
  const ratios = value.map((v, i) => v / floor[i]!);
  const [low, high] = [Math.min(...ratios), Math.max(...ratios)];
  const split = (figure.goals ?? []).filter((g) => (g.kind === 'ratio-min' || g.kind === 'ratio-max') && low < g.limit && g.limit < high);
  if (split.length === 0) return figure;
  const words = `round by round its ratio spans ${low.toFixed(2)}–${high.toFixed(2)}, on both sides of ${split.map((g) => goalWords(g, figure.unit)).join(' and ')}: one bench here does not settle it`;
  return withNoteEnding(figure, words);
}

/** "met" or "MISSED"; with goals that disagree, each goal's ("≤ 2× floor: met; ≤ 0.5 s: MISSED"). */
export const markOf = (figure: Figure): string => {
  const met = goalMet(figure);
  if (met === undefined) return '';
  const goals = figure.goals ?? [];
  const each = goals.map((g) => holds(g, figure));
  if (met || each.every((v) => !v)) return met ? 'met' : 'MISSED';
  return goals.map((g, i) => `${goalWords(g, figure.unit)}: ${each[i] ? 'met' : 'MISSED'}`).join('; ');
};

/** The rows every rendering shares. */
export function rows(figures: readonly Figure[]): string[][] {
  return figures.map((f) => {
    const ratio = ratioOf(f);
    return [
      f.section,
      f.name,
      showSummary(f.value, f.unit),
      f.floor ? `${f.floor.name}: ${showSummary(f.floor.value, f.unit)}` : '—',
      ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
      goalText(f) || '—',
      markOf(f) || '—',
      f.note ?? '',
    ];
  });
}

const HEADER = ['§', 'figure', 'median (min–max)', 'floor', 'ratio', 'goal', 'goal met', 'note'];

/** The table printed at the end: columns padded to their widest cell. */
export function renderTable(figures: readonly Figure[]): string {
  const all = [HEADER, ...rows(figures)];
  const widths = HEADER.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return `${all
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** Ends the generated part of docs/benchmarks.md: what follows it was written by hand, and a new run keeps it. */
export const NOTES_MARKER = '<!-- Notes below are written by hand: make bench rewrites what is above this line and keeps them. -->';

/** docs/benchmarks.md as a new run writes it: its own table, then the notes of the file it replaces (`previous`), if any. */
export function withNotes(generated: string, previous: string | undefined): string {
  const at = previous?.indexOf(NOTES_MARKER) ?? -1;
  const notes = at < 0 ? '' : previous!.slice(at + NOTES_MARKER.length).replace(/^\n+/, '');
  return `${generated}\n${NOTES_MARKER}\n${notes ? `\n${notes}` : ''}`;
}

/** docs/benchmarks.md. */
export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  return [
    '# Benchmarks',
    '',
    `Written by \`make bench\` on ${report.date}${report.quick ? ' with BENCH_QUICK=1 (the catalogue figures skipped)' : ''}. ` +
      'Each figure is the median of repeated runs (min–max beside it), measured in the same invocation as its floor; ' +
      'the ratio is figure / floor by their medians. A missed goal is marked MISSED; it does not fail the bench. ' +
      'See "What each figure measures" below for what each figure means and how to reproduce them.',
    ...(report.settings ? ['', `**Not a default run:** ${report.settings}.`] : []),
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.platform}; load average at the start ${m.load.map((l) => l.toFixed(2)).join(' ')}.`,
    `Versions: ${Object.entries(report.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map(() => '---').join('|')}|`,
    ...rows(report.figures).map((r) => `| ${r.map(cell).join(' | ')} |`),
    '',
  ].join('\n');
}
