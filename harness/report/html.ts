// report.html: one self-contained page (no script, no network: a Content-Security-Policy
// forbids both) that opens from disk. Read top to bottom: the verdict and why, in plain words,
// then the smallest diff that shows it; the lab's tables (final state, processes); the sequence
// diagram; faults; each process's output; the scenario file. Everything judged comes from the
// verdict (the view); the journal only supplies what happened, for the diagram and the output.

import type { JournalEntry } from '../record/journal.js';
import type { Vocabulary } from '../lab-api/lab.js';
import type { Figure, Table, TableRow } from '../findings/verdict.js';
import { KNOWN_TYPES } from './diagram-model.js';
import { castOf } from '../record/cast.js';
import { cellText, count, describeUnknown, processWords, seconds } from '../text/format.js';
import { MONO_FONTS, TEXT_FONTS } from './fonts.js';
import { html, type Markup, PAGE_POLICY, raw } from './html-template.js';
import { type DiagramOptions, lineColors, renderSequenceDiagram, type SequenceDiagram } from './sequence-diagram.js';
import { type RunStatus, type RunView, viewOf } from './view.js';
import { vocabularyFor } from './vocabulary.js';

export interface HtmlOptions {
  diagram?: DiagramOptions;
  /** Shown in the footer. */
  renderedAt?: Date;
  /** The journal was read back from its file (`chaoslab report`), not taken from the run itself. */
  fromFile?: boolean;
}

export interface HtmlReport {
  html: string;
  view: RunView;
  diagram: SequenceDiagram;
}

const STATUS_WORD: Record<RunStatus, string> = { pass: 'PASS', fail: 'FAIL', error: 'ERROR', interrupted: 'INTERRUPTED', skipped: 'SKIPPED' };

export function renderHtml(journal: readonly JournalEntry[], options: HtmlOptions = {}): HtmlReport {
  const view = viewOf(journal);
  const vocabulary = vocabularyFor(view.protocol);
  const diagram = renderSequenceDiagram(journal, vocabulary, [...view.harnessErrors, ...view.findings], options.diagram);
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${raw(PAGE_POLICY)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${STATUS_WORD[view.status]} ${view.name} — chaoslab</title>
<style>${raw(CSS)}</style></head><body><main>
${banner(view, journal, options)}
${intro(view)}
<nav><a href="#${view.state?.id ?? 'state'}">final state</a>${view.tables.map((t) => html`<a href="#${t.id}">${t.title.toLowerCase()}</a>`)}<a href="#diagram">sequence diagram</a><a href="#output">process output</a><a href="#scenario">scenario file</a></nav>
${view.state ? tableSection(view.state) : html`<section id="state"><h2>Final state</h2><p class="muted">No verdict: ${view.status === 'interrupted' ? 'the run did not finish' : 'the harness failed before the checker ran'}.</p></section>`}
${view.tables.map(tableSection)}
${(view.figures ?? []).map((f) => figureSection(f, vocabulary))}
${diagramSection(diagram, vocabulary)}
${faultsSection(journal)}
${unknownSection(journal)}
${outputSection(journal, view)}
${scenarioSection(journal)}
<footer>${options.fromFile ? 'Re-rendered from journal.jsonl' : 'Rendered from the run'} (${count(journal.length)} journal entries${view.complete ? '' : ', no run-end: partial'})${options.renderedAt ? ` at ${options.renderedAt.toISOString()}` : ''}. Re-render any time with <code>chaoslab report &lt;run-folder&gt;</code>.</footer>
</main></body></html>`;
  return { html: page.text, view, diagram };
}

function banner(view: RunView, journal: readonly JournalEntry[], options: HtmlOptions): Markup {
  const start = journal.find((e) => e.type === 'run-start');
  const toxiproxy = journal.find((e) => e.type === 'toxiproxy');
  const reasons = [...view.harnessErrors, ...view.findings].map((f) => f.text);
  const leads = reasons[0] === view.headline;
  const more = leads ? reasons.slice(1) : reasons;
  const meta = [
    view.runId && html`run <code>${view.runId}</code>`,
    view.serverCommand && html`server under test <code>${view.serverCommand}</code>`,
    view.consumerCommand && (view.serverCommand ? html`probes <code>${view.consumerCommand}</code>` : html`consumer <code>${view.consumerCommand}</code>`),
    html`${seconds(view.durationMs)}${view.complete ? '' : ' (incomplete journal)'}`,
    toxiproxy && html`toxiproxy ${toxiproxy.version}`,
    start && html`${start.node} ${start.platform}`,
    options.fromFile && html`re-rendered from the journal file`,
    view.sealing && html`${view.sealing.split(':')[0]}`,
  ].filter((m): m is Markup => Boolean(m));
  return html`<header class="banner ${view.status}" id="verdict" data-status="${view.status}">
<span class="status">${STATUS_WORD[view.status]}</span><h1>${view.name}</h1>
<p class="headline">${view.headline}</p>
${view.status !== 'pass' && more.length > 0 && html`<h2>${leads ? 'Also' : 'Why'}</h2><ol class="reasons">${more.map((r) => html`<li>${r}</li>`)}</ol>`}
${view.diff.length > 0 && html`<h2>Smallest diff</h2><pre class="diff">${view.diff.join('\n')}</pre>`}
<p class="meta">${meta.map((m, i) => html`${i > 0 ? ' · ' : ''}${m}`)}</p>
${view.reproduce && html`<p class="meta" id="reproduce">re-run by hand: <code>${view.reproduce.line}</code>${view.reproduce.invokedAs && html` · started as part of <code>${view.reproduce.invokedAs}</code>`}</p>`}
</header>`;
}

function intro(view: RunView): Markup {
  return html`${view.description && html`<p class="muted"><b>What this scenario proves:</b> ${view.description}</p>`}
${view.timeScale !== 1 && html`<p class="muted"><b>Time compressed:</b> every nominal fault and restart duration in this scenario ran ${view.timeScale} times as long (time_scale ${view.timeScale}).</p>`}`;
}

/** One row of a verdict table, marked right (green) or wrong (red) as the checker said: the whole row, or only its wrong cells. */
export function tableRow(r: TableRow): Markup {
  const cellsOnly = r.ok === false && r.wrong !== undefined;
  const rowClass = r.ok === undefined || cellsOnly ? '' : r.ok ? 'good' : 'bad';
  const isWrong = (i: number): boolean => r.ok === false && (r.wrong === undefined || r.wrong.includes(i));
  return html`<tr class="${rowClass}"><th>${r.label}${r.aside && html` <span class="muted">${r.aside}</span>`}</th>${r.cells.map((c, i) => {
    const cls = [typeof c === 'number' || c === null ? 'num' : '', cellsOnly && isWrong(i) ? 'bad' : ''].filter(Boolean).join(' ');
    const text = typeof c === 'number' || c === null ? cellText(c) : c;
    return html`<td${cls && html` class="${cls}"`}>${isWrong(i) && text !== '' && typeof c === 'string' ? html`<span class="bad-text">${text}</span>` : text}</td>`;
  })}</tr>`;
}

/** Any table of the verdict. */
export function tableSection(table: Table): Markup {
  return html`<section id="${table.id}"><h2>${table.title}</h2>
${
  table.rows.length === 0
    ? html`<p class="muted">${table.empty ?? 'Nothing to show.'}</p>`
    : html`<table><tr><th></th>${table.columns.map((c) => html`<th>${c}</th>`)}</tr>
${table.rows.map(tableRow)}</table>`
}
${table.note && html`<p class="muted">${table.note}</p>`}</section>`;
}

/** A figure of the verdict, drawn by its lab; one the lab cannot draw shows its caption only. */
export function figureSection(figure: Figure, vocabulary: Vocabulary): Markup {
  const svg = vocabulary.drawFigure?.(figure);
  return html`<section id="${figure.id}" class="figure"><h2>${figure.title}</h2>
${svg ? html`<div class="scroll">${raw(svg)}</div>` : html`<p class="muted">(no drawing for this figure)</p>`}
${figure.caption && html`<p class="muted">${figure.caption}</p>`}</section>`;
}

function diagramSection(diagram: SequenceDiagram, vocabulary: Vocabulary): Markup {
  const colors = lineColors(vocabulary);
  const legend = [
    ...vocabulary.lineClasses.map((c) => [c.legend, c.color] as const),
    ['other line', colors.other!] as const,
    ['broke the grammar', colors.error!] as const,
  ];
  return html`<section id="diagram"><h2>Sequence diagram</h2>
<p class="muted">Time runs downwards, one row per thing that happened (the left column is seconds since the run started). Arrows are the lines on the wire, as the publisher sent or received them (in a few words where the lab names them; hover for the exact bytes). ■ process start, ● exit 0, <b style="color:var(--fail)">✖</b> crash or kill, ⚡ a signal fault, ◆ the harness read the SQLite file, ○ connection opened (after a lost one: how long the process was away), ▬ connection closed. Shaded orange bands are active network faults; grey dashed boxes stand for many uneventful lines (in-order traffic), collapsed. Hover over anything for its exact time and text.${diagram.collapsed > 0 && ` Here ${count(diagram.collapsed)} lines are collapsed into ${diagram.bands} band${diagram.bands === 1 ? '' : 's'}.`}</p>
<p class="legend">${legend.map(([name, color]) => html`<span><i style="background:${color}"></i>${name}</span>`)}</p>
<div class="scroll">${raw(diagram.svg)}</div>
</section>`;
}

function faultsSection(journal: readonly JournalEntry[]): Markup | undefined {
  const faults = journal.filter((e) => e.type === 'fault');
  if (faults.length === 0) return undefined;
  return html`<section id="faults"><h2>Faults</h2><table><tr><th>time</th><th>action</th><th>name</th><th>kind</th><th>detail</th></tr>
${faults.slice(0, 500).map((f) => html`<tr><td class="num">${seconds(f.t)}</td><td>${f.action}</td><td>${f.name}</td><td>${f.kind}</td><td><code>${f.detail}</code></td></tr>`)}
</table>${faults.length > 500 && html`<p class="muted">… ${count(faults.length - 500)} more in the journal.</p>`}</section>`;
}

/** Entries of types this renderer does not know (written by a newer harness). */
function unknownSection(journal: readonly JournalEntry[]): Markup | undefined {
  const unknown = new Map<string, { n: number; first: Record<string, unknown> }>();
  for (const e of journal) {
    const type = String((e as { type: unknown }).type);
    if (KNOWN_TYPES.has(type)) continue;
    const u = unknown.get(type);
    if (u) u.n++;
    else unknown.set(type, { n: 1, first: e as unknown as Record<string, unknown> });
  }
  if (unknown.size === 0) return undefined;
  return html`<section id="other"><h2>Other journal entries</h2><p class="muted">Entry types this report does not draw specially (written by a newer harness):</p><table><tr><th>type</th><th>count</th><th>first one</th></tr>
${[...unknown].map(([type, u]) => html`<tr><td><code>${type}</code></td><td class="num">${count(u.n)}</td><td><code>${describeUnknown(u.first, 300)}</code></td></tr>`)}
</table></section>`;
}

function outputSection(journal: readonly JournalEntry[], view: RunView): Markup {
  const exits = journal.filter((e) => e.type === 'process-exit');
  const cast = castOf(journal);
  const one = (e: (typeof exits)[number]) => {
    const who = cast.nameOf(e.role, e.incarnation) ?? (e.role === 'control' ? 'control consumer' : processWords(e.role, e.incarnation));
    const how = e.killedBy ? `killed (${e.killedBy}${e.signal ? `, ${e.signal}` : ''})` : e.signal ? `killed by ${e.signal}` : `exit ${e.code}`;
    const stdout = typeof e.stdoutTail === 'string' ? e.stdoutTail : '';
    const stderr = typeof e.stderrTail === 'string' ? e.stderrTail : '';
    if (!stdout && !stderr && !e.stdoutBytes && !e.stderrBytes)
      return html`<p class="quiet-process">${who} — ${how} <span class="muted">· no output</span></p>`;
    const failed = (e.role === 'consumer' || e.role === 'server') && (e.code !== 0 || e.signal !== null);
    const stream = (name: string, shown: string, bytes: number) => {
      const tailBytes = Buffer.byteLength(shown);
      const label =
        bytes === 0 && !shown
          ? `${name}: empty`
          : bytes > tailBytes
            ? `${name}: ${count(bytes)} bytes; the start and the end are kept`
            : `${name}: ${count(Math.max(bytes, tailBytes))} bytes`;
      return html`<div class="muted">${label}</div>${shown && html`<pre class="out">${shown}</pre>`}`;
    };
    return html`<details${raw(view.status !== 'pass' && (failed || stderr) ? ' open' : '')}><summary>${who} — ${how}</summary>${stream('stdout', stdout, e.stdoutBytes ?? 0)}${stream('stderr', stderr, e.stderrBytes ?? 0)}</details>`;
  };
  return html`<section id="output"><h2>Process output</h2>
${exits.length === 0 ? html`<p class="muted">No process had ended when the journal stops.</p>` : exits.map(one)}
</section>`;
}

function scenarioSection(journal: readonly JournalEntry[]): Markup {
  const start = journal.find((e) => e.type === 'run-start');
  const scenario = journal.find((e) => e.type === 'scenario');
  return html`<section id="scenario"><h2>Scenario file</h2><p class="muted"><code>${start?.scenario?.file ?? ''}</code></p>
${scenario && typeof scenario.source === 'string' ? html`<pre class="src">${scenario.source}</pre>` : html`<p class="muted">not in the journal</p>`}
</section>`;
}

export const CSS = `
:root{--pass:#1d7a33;--fail:#c0162b;--error:#8a4b00;--interrupted:#5b5b7a;--skipped:#2a6f85;--ink:#1f2328;--muted:#5f6b7a;--line:#d8dee4}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 ${TEXT_FONTS};color:var(--ink);background:#f6f8fa}
main{max-width:1280px;margin:0 auto;padding:0 20px 40px}
code,pre,.mono{font-family:${MONO_FONTS};font-size:13px}
.banner{margin:0 -20px 18px;padding:18px 24px;color:#fff}
.banner.pass{background:var(--pass)}.banner.fail{background:var(--fail)}.banner.error{background:var(--error)}.banner.interrupted{background:var(--interrupted)}.banner.skipped{background:var(--skipped)}
.banner .status{display:inline-block;font-weight:800;font-size:28px;letter-spacing:.04em;margin-right:14px;vertical-align:middle}
.banner h1{display:inline;font-size:24px;vertical-align:middle}
.banner .headline{font-size:19px;font-weight:600;margin:10px 0 4px}
.banner .meta{opacity:.9;font-size:13px;margin:8px 0 0}
.banner .meta code{background:rgba(255,255,255,.18);padding:1px 5px;border-radius:4px;color:#fff}
.banner h2{font-size:14px;text-transform:uppercase;letter-spacing:.06em;margin:14px 0 4px;opacity:.9}
.banner ol{margin:0;padding-left:22px}.banner li{margin:2px 0}
.banner pre.diff{background:rgba(0,0,0,.22);color:#fff;padding:10px 12px;border-radius:6px;white-space:pre-wrap;margin:4px 0 0}
nav{font-size:13px;margin:0 0 12px;color:var(--muted)}nav a{margin-right:12px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0 0 18px}
section h2{margin:0 0 10px;font-size:18px}
table{border-collapse:collapse;margin:6px 0 10px}
th,td{border:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f0f3f6;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td,td.bad{background:#fdecee}tr.good td{background:#eef8f0}
.bad-text{color:var(--fail);font-weight:600}
.muted{color:var(--muted)}
.scroll{overflow:auto;max-height:85vh;border:1px solid var(--line);border-radius:6px;background:#fff}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:22px;height:3px;vertical-align:middle;margin-right:5px}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}.quiet-process{margin:4px 0;font-weight:600}
pre.out{background:#0d1117;color:#e6edf3;padding:10px;border-radius:6px;max-height:360px;overflow:auto;white-space:pre-wrap;word-break:break-all}
pre.src{background:#f6f8fa;padding:10px;border-radius:6px;overflow:auto}
footer{color:var(--muted);font-size:12px}
`;
