// The class's index.html, for staff: how many submissions were graded and which were not (and
// why: not graded is not failing), the scenarios that failed most often among the graded ones
// (what a lecturer reads first), the distribution of their scores, a table of submissions ×
// scenarios with each failure's findings on hover, the folders skipped, and how to reproduce each
// grade. Drawn from class.json only; it judges nothing. Like every page chaoslab writes: every
// value escaped, no script (a Content-Security-Policy forbids it).

import { TEXT_FONTS } from '../../report/fonts.js';
import { html, type Markup, PAGE_POLICY, raw } from '../../report/html-template.js';
import type { ClassReport } from './class-data.js';
import { unsealedWarning } from './class-data.js';
import type { ScenarioScore, SubmissionScore } from '../score.js';
import { statusCounts, statusOf } from '../status.js';

const graded = (report: ClassReport): SubmissionScore[] => report.submissions.filter((s) => !s.notGraded);

/** Rubric scenarios with how many graded submissions failed each, most failed first (rubric order on ties). */
export function mostFailed(report: ClassReport): { name: string; failed: number; visibility: string }[] {
  const judged = graded(report);
  return report.rubric
    .map((t, i) => ({ name: t.name, visibility: t.visibility, i, failed: judged.filter((s) => s.scenarios[i]?.status === 'failed').length }))
    .sort((a, b) => b.failed - a.failed || a.i - b.i)
    .map(({ name, failed, visibility }) => ({ name, failed, visibility }));
}

/** How many graded submissions got each score, lowest score first. */
export function scoreDistribution(report: ClassReport): { score: number; count: number }[] {
  const counts = new Map<number, number>();
  for (const s of graded(report)) counts.set(s.score, (counts.get(s.score) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([score, count]) => ({ score, count }));
}

const STYLE = `body{font:14px/1.4 ${TEXT_FONTS};margin:1.5em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:center}
th.sub,td.sub{text-align:left}.pass{background:#e5f5e5}.fail{background:#fbe3e3;cursor:help}.warn{background:#fff3cd;border:1px solid #e0b000;padding:.5em;font-weight:bold}
.bar{display:inline-block;background:#4a78c2;height:.9em}th.rot{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal}.problem{color:#a00}
.none{background:#eee;color:#666}.prov td{text-align:left;font-size:12px}.prov code{word-break:break-all}`;

export function classHtml(report: ClassReport): string {
  const warning = unsealedWarning(report.sealing);
  const max = report.submissions[0]?.max ?? report.rubric.reduce((sum, t) => sum + t.points, 0);
  const failedMost = mostFailed(report).filter((s) => s.failed > 0);
  const distribution = scoreDistribution(report);
  const widest = Math.max(1, ...distribution.map((d) => d.count));
  const counts = statusCounts(report.submissions);
  const judged = counts.graded;
  const wrongLab = report.submissions.filter((s) => s.notGraded?.kind === 'wrong-lab');
  const cell = (sub: SubmissionScore, s: ScenarioScore | undefined): Markup => {
    if (!s) return html`<td></td>`;
    // Never run (no command, a failed build …): not a failure of the scenario.
    if (sub.problem !== undefined) return html`<td class="none" title="not run">–</td>`;
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
${wrongLab.length ? html`<p class="warn">${wrongLab.length} manifest(s) name another lab than this rubric's (the grader exited 2): ${wrongLab.map((s, i) => html`${i ? '; ' : ''}${s.notGraded!.reason}`)}</p>` : ''}
<p class="counts">${judged} graded, ${counts.notGraded} not graded${
    counts.notGraded
      ? html` (${Object.entries(counts.byStatus)
          .filter(([k]) => k !== 'graded')
          .map(
            ([k, n], i) => html`${i ? ', ' : ''}${k}: ${n}`,
          )}): not graded is not failing, so they are left out of the failure counts and the distribution below`
      : ''
  }${report.skipped.length ? html`; ${report.skipped.length} folder(s) skipped (listed at the end)` : ''}.</p>
<h2>Scenarios failed most often</h2>
${
  failedMost.length
    ? html`<ol>${failedMost.map((s) => html`<li><b>${s.name}</b> (${s.visibility}): failed by ${s.failed} of ${judged} graded</li>`)}</ol>`
    : html`<p>No scenario failed.</p>`
}
<h2>Distribution of graded scores (out of ${max})</h2>
<table>${distribution.map((d) => html`<tr><td>${d.score}</td><td class="sub"><span class="bar" style="width:${Math.round((200 * d.count) / widest)}px"></span> ${d.count}</td></tr>`)}</table>
<h2>Submissions × scenarios</h2>
<p>✓ passed, ✗ failed (hover for the findings), – not run; n/k: runs passed of k repeats.</p>
<table>
<tr><th class="sub">submission</th><th>score</th><th>status</th>${report.rubric.map((t) => html`<th class="rot" title="${t.visibility}, ${t.points} points">${t.name}</th>`)}</tr>
${report.submissions.map(
  (sub) =>
    html`<tr><td class="sub">${sub.submission}${sub.notGraded ? html`<div class="problem">${sub.notGraded.reason}</div>` : ''}</td><td>${sub.score} / ${sub.max}</td><td>${sub.notGraded ? html`not graded: ${statusOf(sub)}` : 'graded'}</td>${report.rubric.map((_, i) => cell(sub, sub.scenarios[i]))}</tr>`,
)}
</table>
${
  report.skipped.length
    ? html`<h2>Folders skipped</h2>
<ul>${report.skipped.map((s) => html`<li><code>${s.name}</code>: ${s.reason}</li>`)}</ul>`
    : ''
}
<h2>How to reproduce each grade</h2>
<table class="prov">
<tr><th>submission</th><th>chaoslab</th><th>lab</th><th>scenario set (sha256)</th><th>submission files (sha256)</th><th>seeds</th><th>replay command</th></tr>
${report.submissions.map((sub) => provenanceRow(sub))}
</table>
</body></html>
`;
  return page.text;
}

/** One submission's provenance (version, hashes, seeds, the replay command), or a row saying there is none. */
function provenanceRow(sub: SubmissionScore): Markup {
  const p = sub.provenance;
  if (!p) return html`<tr><td class="sub">${sub.submission}</td><td colspan="6">no provenance recorded</td></tr>`;
  const seeds = Object.entries(p.seeds)
    .filter(([, list]) => list.length > 0)
    .map(([name, list]) => `${name}: ${list.join(' ')}`)
    .join('; ');
  return html`<tr><td class="sub">${sub.submission}</td><td>${p.chaoslab}</td><td>${p.lab}</td><td><code>${p.scenarioSetHash}</code></td><td><code>${p.submissionHash ?? '—'}</code></td><td>${seeds || '—'}</td><td><code>${p.replay}</code></td></tr>`;
}
