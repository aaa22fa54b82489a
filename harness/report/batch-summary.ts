// A batch's summary.md, fit to append to $GITHUB_STEP_SUMMARY: the totals in one line, then the
// runs that did not pass — each with its leading finding and the consumer's last stderr lines —
// then the passes in one compact table. Drawn from the runs' views only; every value quoted by inert.ts.

import { type BatchRun, type BatchView, failuresFirst, runPath, totalsLine } from './batch-view.js';
import { seconds } from '../text/format.js';
import { markdownCode, markdownLink, markdownText } from '../text/inert.js';
import { stderrMarkdown } from './summary.js';

const cell = markdownText;
const link = (view: BatchView, run: BatchRun): string => markdownLink('report', `${runPath(view, run)}/report.html`);

export function renderBatchSummary(view: BatchView): string {
  const runs = failuresFirst(view);
  const bad = runs.filter((r) => r.view.status !== 'pass' && r.view.status !== 'skipped');
  // Skipped runs never ran (packet loss, unsealed): no failure, listed apart with the reason.
  const skipped = runs.filter((r) => r.view.status === 'skipped');
  const good = runs.filter((r) => r.view.status === 'pass');
  const unstarted = view.notStarted ?? [];
  const mark = bad.length ? '❌' : unstarted.length ? '⏹' : '✅';
  const lines = [
    `# ${mark} chaoslab ${markdownText(view.name)}: ${markdownText(totalsLine(view))}`,
    '',
    `${markdownCode(view.commandLine)} · ${view.runs.length} run${view.runs.length === 1 ? '' : 's'} · ${markdownText(`${view.startedAt} → ${view.endedAt}`)}`,
    '',
  ];
  for (const section of view.sections ?? [])
    lines.push(`## ${markdownText(section.title)}`, '', ...section.lines.map((l) => `- ${l.href ? markdownLink(l.text, l.href) : markdownText(l.text)}`), '');
  if (bad.length) {
    lines.push('## Did not pass', '', '| run | status | time | leading finding | |', '|---|---|---|---|---|');
    for (const r of bad)
      lines.push(
        `| ${cell(r.label)} | **${cell(r.view.status.toUpperCase())}** | ${seconds(r.view.durationMs)} | ${cell(r.view.headline)} | ${link(view, r)} |`,
      );
    lines.push('');
    for (const r of bad) {
      if (!r.view.stderrTail) continue;
      lines.push(...stderrMarkdown(r.view.stderrTail, `### ${markdownText(r.label)}:`), '');
    }
  }
  if (skipped.length) {
    lines.push(`## Skipped (${skipped.length})`, '', '| run | why | |', '|---|---|---|');
    for (const r of skipped) lines.push(`| ${cell(r.label)} | ${cell(r.view.headline)} | ${link(view, r)} |`);
    lines.push('');
  }
  if (unstarted.length) lines.push(`## Not started (interrupted): ${unstarted.length}`, '', unstarted.map((n) => cell(n.label)).join(', '), '');
  if (good.length) {
    lines.push(`## Passed (${good.length})`, '', '| run | time | |', '|---|---|---|');
    for (const r of good) lines.push(`| ${cell(r.label)} | ${seconds(r.view.durationMs)} | ${link(view, r)} |`);
    lines.push('');
  }
  return lines.join('\n');
}
