// summary.md: what a CI job summary or a pull-request comment shows, drawn from the run's view
// (the verdict as written), so it says exactly what the console and report.html say. Every value
// is quoted by inert.ts: text escaped, commands and ids as code spans, the diff and stderr fenced.

import type { JournalEntry } from '../record/journal.js';
import type { Table, TableRow } from '../findings/verdict.js';
import { cellText } from '../text/format.js';
import { markdownBlock, markdownCode, markdownText } from '../text/inert.js';
import { type RunView, reasonsOf, type StderrTail, viewOf } from './view.js';

const cell = (v: string | number | null): string => markdownText(cellText(v));

/** One row of a verdict table; a row the checker marked wrong has its label in bold. */
export const markdownRow = (r: TableRow): string =>
  `| ${r.ok === false ? `**${markdownText(r.label)}**` : markdownText(r.label)} | ${r.cells.map(cell).join(' | ')} |`;

function markdownTable(table: Table): string[] {
  const title = `## ${markdownText(table.title)}`;
  if (table.rows.length === 0) return [title, '', markdownText(table.empty ?? 'Nothing to show.'), ''];
  return [
    title,
    '',
    `| | ${table.columns.map(markdownText).join(' | ')} |`,
    `|---|${table.columns.map(() => '---').join('|')}|`,
    ...table.rows.map(markdownRow),
    ...(table.note ? ['', markdownText(table.note)] : []),
    '',
  ];
}

/** The consumer's last stderr lines as a Markdown heading and code block (fenced so no line can close it). */
export function stderrMarkdown(tail: StderrTail, heading: string): string[] {
  return [
    `${heading} What the consumer said (stderr of incarnation ${tail.incarnation}, last ${tail.lines.length} lines)`,
    '',
    ...markdownBlock([...(tail.omitted ? [`[… ${tail.omitted} earlier lines …]`] : []), ...tail.lines]),
  ];
}

export function renderSummary(journal: readonly JournalEntry[], view: RunView = viewOf(journal)): string {
  const start = journal.find((e) => e.type === 'run-start');
  const toxiproxy = journal.find((e) => e.type === 'toxiproxy');
  const lines = [`# chaoslab: ${markdownText(view.name)} — ${markdownText(view.status.toUpperCase())}`, '', `**${markdownText(view.headline)}**`, ''];
  if (start) {
    if (view.description) lines.push(markdownText(view.description), '');
    lines.push(
      `- run: ${markdownCode(view.runId)}`,
      ...(view.serverCommand
        ? [`- server under test: ${markdownCode(view.serverCommand)}`, `- probes: ${markdownCode(view.consumerCommand)}`]
        : [`- consumer: ${markdownCode(view.consumerCommand)}`]),
      `- scenario file: ${markdownCode(start.scenario.file)}`,
    );
    if (toxiproxy) lines.push(`- toxiproxy: ${markdownText(toxiproxy.version)}`);
    if (view.reproduce) {
      lines.push(`- re-run by hand: ${markdownCode(view.reproduce.line)}`);
      if (view.reproduce.invokedAs) lines.push(`- started as part of: ${markdownCode(view.reproduce.invokedAs)}`);
    }
    if (view.sealing) lines.push(`- ${markdownText(view.sealing)}`);
    if (view.timeScale !== 1)
      lines.push(`- time compressed: nominal fault and restart durations ran ${view.timeScale} times as long (time_scale ${view.timeScale})`);
    lines.push('');
  }
  const reasons = reasonsOf(view);
  if (view.status !== 'pass' && reasons.length > 0) {
    lines.push('## Why', '', ...reasons.map((r) => `- ${markdownText(r)}`));
    if (view.diff.length) lines.push('', ...markdownBlock(view.diff));
    lines.push('');
  }
  if (view.status !== 'pass' && view.stderrTail) lines.push(...stderrMarkdown(view.stderrTail, '##'), '');
  if (view.state) lines.push(...markdownTable(view.state));
  for (const table of view.tables) lines.push(...markdownTable(table));
  if (view.status === 'skipped')
    lines.push('The run was skipped, not failed: nothing ran, because the scenario needs what this machine or mode cannot give (above).', '');
  if (view.status === 'interrupted')
    lines.push(
      view.complete
        ? 'The run was stopped before its end: nothing was judged; this summary shows what the journal recorded up to then.'
        : 'The run did not finish: this summary was rendered from a partial journal.',
      '',
    );
  return lines.join('\n');
}
