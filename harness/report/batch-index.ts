// index.html: a batch on one page, like Playwright's HTML report — the totals, filters by status,
// and a table of runs, failures first (then errors, then passes: batch-view.ts failuresFirst) (status, time, leading finding, the consumer's last stderr lines for the
// runs that did not pass) linking each run's own report.html. Self-contained and script-free like
// report.html (same Content-Security-Policy, same look): the filters are radio buttons and CSS.

import { type BatchRun, type BatchView, failuresFirst, runPath, statusesOf, totalsLine } from './batch-view.js';
import { seconds } from '../text/format.js';
import { CSS } from './html.js';
import { html, type Markup, PAGE_POLICY, raw } from './html-template.js';
import { safeHref } from '../text/inert.js';

/** A status as a safe token for ids, classes and attribute selectors (any status string a run may have). */
const token = (status: string): string => status.replace(/[^a-z0-9-]/gi, '_');

const FILTER_WORD: Record<string, string> = { fail: 'Failed', pass: 'Passed', error: 'Error', interrupted: 'Interrupted', skipped: 'Skipped' };

/** The banner's colour: the worst status any run has (no run: neutral). */
function bannerClass(view: BatchView): string {
  for (const s of ['fail', 'error', 'interrupted']) if ((view.totals[s] ?? 0) > 0) return s;
  const others = Object.keys(view.totals).filter((s) => s !== 'pass' && s !== 'skipped' && (view.totals[s] ?? 0) > 0);
  if (others.length) return 'error';
  if (view.runs.length > 0 && view.totals.skipped === view.runs.length) return 'skipped';
  return view.runs.length ? 'pass' : 'interrupted';
}

const BATCH_CSS = `
.batch>input{position:absolute;opacity:0;pointer-events:none}
.batch>label{display:inline-block;padding:3px 12px;margin:0 6px 10px 0;border:1px solid var(--line);border-radius:14px;background:#fff;cursor:pointer;font-size:14px}
.batch>label b{font-variant-numeric:tabular-nums;margin-left:6px}
.batch>input:checked+label{background:var(--ink);color:#fff;border-color:var(--ink)}
.batch>input:focus-visible+label{outline:2px solid #0969da;outline-offset:2px}
table.runs{width:100%;background:#fff}
table.runs td.status{font-weight:700;white-space:nowrap}
td.status.pass{color:var(--pass)}td.status.fail{color:var(--fail)}td.status.error{color:var(--error)}td.status.interrupted{color:var(--interrupted)}td.status.skipped{color:var(--skipped)}
td.time{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.label{white-space:nowrap}td.label .scenario{display:block;color:var(--muted);font-size:12px}
td.finding pre.out{margin:6px 0 0;max-height:220px;font-size:12px}
td.finding details summary{font-weight:400;color:var(--muted);font-size:13px}
tr.run:not(.pass) td{background:#fff8f8}
.none{display:none;color:var(--muted);padding:8px 0}
`;

/** One rule per filter: when its radio is checked, rows of other statuses are hidden. */
function filterCss(statuses: string[], view: BatchView): string {
  const rules = statuses.map((s) => `#f-${token(s)}:checked~table tr.run:not([data-status="${token(s)}"]){display:none}`);
  // "Nothing here" under a filter whose status no run has.
  const empty = statuses.filter((s) => (view.totals[s] ?? 0) === 0).map((s) => `#f-${token(s)}:checked~p.none{display:block}`);
  return [...rules, ...empty].join('\n');
}

function row(view: BatchView, run: BatchRun): Markup {
  const x = run.view;
  const href = safeHref(`${runPath(view, run)}/report.html`);
  const tail = x.status !== 'pass' ? x.stderrTail : undefined;
  return html`<tr class="run ${token(x.status)}" data-status="${token(x.status)}">
<td class="status ${token(x.status)}">${x.status.toUpperCase()}</td>
<td class="label"><a href="${href}">${run.label}</a>${run.label !== x.name ? html`<span class="scenario">${x.name}</span>` : ''}</td>
<td class="time">${seconds(x.durationMs)}</td>
<td class="finding">${x.headline}${
    tail &&
    html`<details${x.status === 'fail' || x.status === 'error' ? ' open' : ''}><summary>the consumer said (stderr of incarnation ${tail.incarnation}, last ${tail.lines.length} lines)</summary><pre class="out">${tail.omitted ? `[… ${tail.omitted} earlier lines …]\n` : ''}${tail.lines.join('\n')}</pre></details>`
  }</td>
<td><a href="${href}">report</a></td>
</tr>`;
}

export function renderBatchIndex(view: BatchView): string {
  const statuses = statusesOf(view);
  const consumers = [...new Set(view.runs.map((r) => r.view.consumerCommand))];
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${raw(PAGE_POLICY)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${view.name}: ${totalsLine(view)} — chaoslab</title>
<style>${raw(CSS)}${raw(BATCH_CSS)}${raw(filterCss(statuses, view))}</style></head><body><main>
<header class="banner ${bannerClass(view)}" id="batch" data-totals="${JSON.stringify(view.totals)}">
<span class="status">${view.name}</span>
<p class="headline">${totalsLine(view)}</p>
<p class="meta"><code>${view.commandLine}</code> · ${view.runs.length} run${view.runs.length === 1 ? '' : 's'} · ${view.startedAt} → ${view.endedAt}${
    consumers.length === 1 ? html` · consumer <code>${consumers[0]}</code>` : ''
  }</p>
</header>
${(view.sections ?? []).map(
  (section) =>
    html`<section class="said"><h2>${section.title}</h2><ul>${section.lines.map(
      (l) => html`<li>${l.href ? html`<a href="${safeHref(l.href)}">${l.text}</a>` : l.text}</li>`,
    )}</ul></section>`,
)}
<section class="batch">
<input type="radio" name="filter" id="f-all" checked><label for="f-all">All<b>${view.runs.length}</b></label>
${statuses.map(
  (s) => html`<input type="radio" name="filter" id="f-${token(s)}"><label for="f-${token(s)}">${FILTER_WORD[s] ?? s}<b>${view.totals[s] ?? 0}</b></label>`,
)}
<p class="none">No run has this status.</p>
<table class="runs"><thead><tr><th>status</th><th>run</th><th>time</th><th>leading finding</th><th></th></tr></thead>
<tbody>
${failuresFirst(view).map((r) => row(view, r))}
</tbody></table>
</section>
<footer>Each run's own report.html tells its whole story. Re-render this page and every run's reports with <code>chaoslab report &lt;batch-folder&gt;</code>; for machines: results.json, junit.xml.</footer>
</main></body></html>`;
  return page.text;
}
