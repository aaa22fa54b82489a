// The validity proof as people read it: a table (a line per submission: the matrix's total,
// each grading's, how many cells agree), every problem on a line of its own, and a one-line
// verdict; validity.md adds the cells themselves (submissions × scenarios).

import { markdownBlock, markdownText } from '../../text/inert.js';
import type { CellComparison, Validity } from './compare.js';

const pad = (text: string | number, width: number) => String(text).padEnd(width);

export function verdictLine(v: Validity): string {
  const whose = v.program === 'server' ? `${v.lab}, servers` : v.lab;
  const size = `${v.rows.length} submissions × ${v.scenarios.length} rubric scenarios, graded ${v.gradings} times`;
  const sometimes = v.intermittent ? `; ${v.intermittent} cells where the mutant is caught only some of the time (its reruns both pass and fail: listed)` : '';
  if (v.verdict === 'valid')
    return `grade validity (${whose}): VALID — ${size}: every cell as the mutant matrix says${sometimes}, every output agrees, the same scores each time`;
  if (v.verdict === 'not valid') {
    const what = [
      v.mismatches ? `${v.mismatches} cells not as the mutant matrix says` : '',
      v.outputProblems.length ? `${v.outputProblems.length} output problems` : '',
    ].filter(Boolean);
    return `grade validity (${whose}): NOT VALID — ${size}: ${what.join(', ')}`;
  }
  return `grade validity (${whose}): NOT JUDGED — ${size}: ${v.unjudged} cells the matrix or a grading could not conclude (a harness error or a skipped run)`;
}

/** The console's table, problems and verdict. */
export function renderTable(v: Validity): string {
  const w = Math.max(10, ...v.rows.map((r) => r.submission.length)) + 2;
  const head = `${pad('submission', w)}${pad('kind', 11)}${pad('matrix', 8)}${Array.from({ length: v.gradings }, (_, i) => pad(`grade ${i + 1}`, 9)).join('')}cells`;
  const lines = [head];
  for (const r of v.rows) {
    const agree = r.cells.filter((c) => c.agrees === true).length;
    const mark = r.cells.some((c) => c.agrees === false && !c.intermittent)
      ? '  ✗'
      : r.cells.some((c) => c.agrees === undefined)
        ? '  ?'
        : r.cells.some((c) => c.intermittent)
          ? '  ~'
          : '';
    lines.push(
      `${pad(r.submission, w)}${pad(r.kind, 11)}${pad(r.expected ?? '?', 8)}${r.totals.map((t) => pad(t ?? '–', 9)).join('')}${agree}/${r.cells.length}${mark}`,
    );
  }
  const problems = [
    ...v.rows.flatMap((r) =>
      r.cells
        .filter((c) => c.problem)
        .map((c) => {
          const word = c.intermittent ? 'SOMETIMES' : c.agrees === false ? 'DIFFERS' : 'UNJUDGED';
          const rerun = c.rerun ? ` — run again ${c.rerun.runs} times outside the grader: failed ${c.rerun.failed}` : '';
          return `${word} ${r.submission} × ${c.scenario}: ${c.problem}${rerun}`;
        }),
    ),
    ...v.outputProblems.map((p) => `OUTPUT ${p}`),
  ];
  return [...lines, ...(problems.length ? ['', ...problems] : []), '', verdictLine(v), ''].join('\n');
}

const cellMark = (c: CellComparison): string => {
  const points = 'points' in c.expected ? c.expected.points : undefined;
  const base = points === undefined ? '?' : points > 0 ? '✓' : '✗';
  if (c.intermittent) return `${base}~${c.got.map((g) => g?.score ?? '–').join('/')} (${c.rerun!.failed}/${c.rerun!.runs} failed)`;
  return c.agrees === false ? `**${base}≠${c.got.map((g) => g?.score ?? '–').join('/')}**` : c.agrees === undefined ? `${base}?` : base;
};

/** validity.md: the table, the cells, the problems and the verdict. */
export function renderMarkdown(v: Validity, notes: readonly string[]): string {
  return [
    `# chaoslab grade validity — ${v.lab}: ${v.verdict.toUpperCase()}`,
    '',
    verdictLine(v),
    '',
    ...notes.map((n) => `- ${markdownText(n)}`),
    '',
    '## Totals',
    '',
    ...markdownBlock(renderTable(v).trimEnd().split('\n')),
    '',
    '## Cells',
    '',
    '✓ the matrix passed it (full points), ✗ the matrix failed it (0); **✓≠0/0**: what the gradings gave instead; ✓~0/0 (11/12 failed): a mutant caught only some of the time (its reruns outside the grader failed 11 of 12); ? nothing to judge by.',
    '',
    `| submission | ${v.scenarios.join(' | ')} |`,
    `|---|${v.scenarios.map(() => '---').join('|')}|`,
    ...v.rows.map((r) => `| ${markdownText(r.submission)} | ${r.cells.map(cellMark).join(' | ')} |`),
    '',
  ].join('\n');
}
