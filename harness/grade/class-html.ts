// The class's index.html, for staff: the scenarios that failed most often first (what a
// lecturer reads first), the distribution of scores, then a table of submissions × scenarios
// with each failure's findings on hover. Drawn from class.json only; it judges nothing. Like every
// page chaoslab writes: every value escaped, no script (a Content-Security-Policy forbids it).

import { html, type Markup, PAGE_POLICY, raw } from '../report/html-template.js';
import type { ClassReport } from './class-data.js';
import { unsealedWarning } from './class-data.js';
import type { ScenarioScore } from './score.js';

/** Rubric scenarios with how many submissions failed each, most failed first (rubric order on ties). */
export function mostFailed(report: ClassReport): { name: string; failed: number; visibility: string }[] {
  return report.rubric
    .map((t, i) => ({ name: t.name, visibility: t.visibility, i, failed: report.submissions.filter((s) => s.scenarios[i]?.status === 'failed').length }))
    .sort((a, b) => b.failed - a.failed || a.i - b.i)
    .map(({ name, failed, visibility }) => ({ name, failed, visibility }));
}

/** How many submissions got each score, lowest score first. */
export function scoreDistribution(report: ClassReport): { score: number; count: number }[] {
  const counts = new Map<number, number>();
  for (const s of report.submissions) counts.set(s.score, (counts.get(s.score) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([score, count]) => ({ score, count }));
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:center}
th.sub,td.sub{text-align:left}.pass{background:#e5f5e5}.fail{background:#fbe3e3;cursor:help}.warn{background:#fff3cd;border:1px solid #e0b000;padding:.5em;font-weight:bold}
.bar{display:inline-block;background:#4a78c2;height:.9em}th.rot{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal}.problem{color:#a00}`;

export function classHtml(report: ClassReport): string {
  const warning = unsealedWarning(report.sealing);
  const max = report.submissions[0]?.max ?? report.rubric.reduce((sum, t) => sum + t.points, 0);
  const failedMost = mostFailed(report).filter((s) => s.failed > 0);
  const distribution = scoreDistribution(report);
  const widest = Math.max(1, ...distribution.map((d) => d.count));
  const cell = (s: ScenarioScore | undefined): Markup => {
    if (!s) return html`<td></td>`;
    const runs = s.runs > 1 ? ` ${s.passed}/${s.runs}` : '';
    if (s.status === 'passed') return html`<td class="pass">✓${runs}</td>`;
    if (s.status === 'not graded') return html`<td class="fail" title="${s.reasons.join('\n')}">not graded</td>`;
    return html`<td class="fail" title="${[s.feedback, ...s.reasons].join('\n')}">✗${runs}</td>`;
  };
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${raw(PAGE_POLICY)}">
<title>chaoslab grades — ${report.lab}</title><style>${STYLE}</style></head>
<body>
<h1>chaoslab grades — ${report.lab} lab, ${report.submissions.length} submissions</h1>
${warning ? html`<p class="warn">${warning}</p>` : html`<p>Sealed: ${report.sealing.note}</p>`}
<h2>Scenarios failed most often</h2>
${
  failedMost.length
    ? html`<ol>${failedMost.map((s) => html`<li><b>${s.name}</b> (${s.visibility}): failed by ${s.failed} of ${report.submissions.length}</li>`)}</ol>`
    : html`<p>No scenario failed.</p>`
}
<h2>Distribution of scores (out of ${max})</h2>
<table>${distribution.map((d) => html`<tr><td>${d.score}</td><td class="sub"><span class="bar" style="width:${Math.round((200 * d.count) / widest)}px"></span> ${d.count}</td></tr>`)}</table>
<h2>Submissions × scenarios</h2>
<p>✓ passed, ✗ failed (hover for the findings); n/k: runs passed of k repeats.</p>
<table>
<tr><th class="sub">submission</th><th>score</th>${report.rubric.map((t) => html`<th class="rot" title="${t.visibility}, ${t.points} points">${t.name}</th>`)}</tr>
${report.submissions.map(
  (sub) =>
    html`<tr><td class="sub">${sub.submission}${sub.problem ? html`<div class="problem">${sub.problem}</div>` : ''}</td><td>${sub.score} / ${sub.max}</td>${report.rubric.map((_, i) => cell(sub.scenarios[i]))}</tr>`,
)}
</table>
</body></html>
`;
  return page.text;
}
