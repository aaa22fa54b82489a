// junit.xml: what CI systems read. One <testcase> per scenario run; several runs go into one
// file (one <testsuite>) for multi-scenario runs. The element and attribute set is the common
// ground of the Jenkins JUnit plugin, GitLab's unit test reports and the GitHub test-report
// actions: testsuites/testsuite with tests, failures, errors, skipped, time, timestamp,
// hostname; testcase with name, classname, file, time; failure/error with message and type
// and the full explanation as text; skipped with a message (an interrupted run, or one an
// interrupt kept from starting); system-out and system-err.

import { hostname as osHostname } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { type JournalEntry, readJournal } from '../record/journal.js';
import { castOf } from '../record/cast.js';
import { escapeMarkup, processWords } from '../text/format.js';
import { markupAttribute } from '../text/inert.js';
import { type RunView, reasonsOf, viewOf } from './view.js';

export interface JunitRun {
  journal: readonly JournalEntry[];
  /** The run folder, named in the test case's output so CI users find report.html. */
  runDir?: string;
  /** viewOf(journal), when the caller has it already. */
  view?: RunView;
}

export interface JunitOptions {
  /** The <testsuite> name (default "chaoslab"). */
  suiteName?: string;
  hostname?: string;
  /** Scenarios of the batch that an interrupt kept from starting: skipped test cases. */
  notStarted?: { name: string; file?: string }[];
}

/** The skipped message of a scenario an interrupt kept from starting. */
export const NOT_STARTED = 'not started: interrupted';

/** Text for an attribute value: markup escaped, and newlines kept as character references (inert.ts). */
export const attr = markupAttribute;

const secs = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3);

/** The run's start as ISO 8601, from the run id's UTC stamp (`20261130-092910-…`). */
export function runTimestamp(runId: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-/.exec(runId);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}` : undefined;
}

/** The failure text: the verdict in plain words, then the smallest diff, then where the report is. */
export function explanationText(x: RunView, runDir?: string): string {
  const lines = [x.headline];
  const rest = reasonsOf(x).filter((r) => r !== x.headline);
  if (rest.length) lines.push('', 'Also:', ...rest.map((r) => `- ${r}`));
  if (x.diff.length) lines.push('', 'Smallest diff:', ...x.diff.map((d) => `  ${d}`));
  if (runDir) lines.push('', `Report: ${join(runDir, 'report.html')}`);
  return lines.join('\n');
}

interface Case {
  x: RunView;
  xml: string;
}

function testcase(run: JunitRun): Case {
  const x = run.view ?? viewOf(run.journal);
  const start = run.journal.find((e) => e.type === 'run-start');
  const file = start?.scenario?.file;
  const shownFile = file && start?.cwd && isAbsolute(file) && !relative(start.cwd, file).startsWith('..') ? relative(start.cwd, file) : file;
  const out: string[] = [];
  out.push(
    `    <testcase name="${attr(x.name)}" classname="chaoslab.${attr(x.name)}" time="${secs(x.durationMs)}"${shownFile ? ` file="${attr(shownFile)}"` : ''}>`,
  );
  const props: [string, string][] = [];
  if (x.runId) props.push(['runId', x.runId]);
  if (start?.serverCommand) props.push(['server', start.serverCommand]);
  if (start?.consumerCommand) props.push([start.serverCommand ? 'probes' : 'consumer', start.consumerCommand]);
  if (run.runDir) props.push(['report', join(run.runDir, 'report.html')]);
  if (props.length) out.push('      <properties>', ...props.map(([n, v]) => `        <property name="${attr(n)}" value="${attr(v)}"/>`), '      </properties>');
  const body = escapeMarkup(explanationText(x, run.runDir));
  if (x.status === 'fail') out.push(`      <failure message="${attr(x.headline)}" type="chaoslab.verdict">${body}</failure>`);
  else if (x.status === 'error') out.push(`      <error message="${attr(x.headline)}" type="chaoslab.harness-error">${body}</error>`);
  else if (x.status === 'interrupted' || x.status === 'skipped') out.push(`      <skipped message="${attr(x.headline)}"/>`);
  const sysOut = [
    `${x.name}: ${x.status.toUpperCase()} in ${secs(x.durationMs)} s`,
    ...(start?.scenario?.description ? [start.scenario.description] : []),
    ...(run.runDir ? [`run folder: ${run.runDir}`, `report: ${join(run.runDir, 'report.html')}`] : []),
  ].join('\n');
  out.push(`      <system-out>${escapeMarkup(sysOut)}</system-out>`);
  const cast = castOf(run.journal);
  const errTails = run.journal
    .filter((e) => e.type === 'process-exit' && e.stderrTail)
    .map((e) =>
      e.type === 'process-exit'
        ? `--- ${cast.nameOf(e.role, e.incarnation) ?? (e.role === 'control' ? 'control' : processWords(e.role, e.incarnation))} stderr (tail) ---\n${e.stderrTail.slice(-4000)}`
        : '',
    );
  if (errTails.length) out.push(`      <system-err>${escapeMarkup(errTails.join('\n'))}</system-err>`);
  out.push('    </testcase>');
  return { x, xml: out.join('\n') };
}

/** Several scenario runs in one file: one <testsuite>, one <testcase> per run. */
export function renderJunit(runs: JunitRun[], options: JunitOptions = {}): string {
  const cases = runs.map(testcase);
  const unstarted = (options.notStarted ?? []).map(
    (s) =>
      `    <testcase name="${attr(s.name)}" classname="chaoslab.${attr(s.name)}" time="0.000"${s.file ? ` file="${attr(s.file)}"` : ''}>\n      <skipped message="${NOT_STARTED}"/>\n    </testcase>`,
  );
  const tests = cases.length + unstarted.length;
  const failures = cases.filter((c) => c.x.status === 'fail').length;
  const errors = cases.filter((c) => c.x.status === 'error').length;
  const skipped = cases.filter((c) => c.x.status === 'interrupted' || c.x.status === 'skipped').length + unstarted.length;
  // The sum of the cases' rounded times, so the totals a CI page shows add up.
  const time = cases.reduce((sum, c) => sum + Number(secs(c.x.durationMs)), 0).toFixed(3);
  const stamps = cases
    .map((c) => runTimestamp(c.x.runId))
    .filter((s): s is string => Boolean(s))
    .sort();
  const timestamp = stamps[0] ?? new Date().toISOString().slice(0, 19);
  const name = attr(options.suiteName ?? 'chaoslab');
  const host = attr(options.hostname ?? osHostname());
  const counts = `tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time}"`;
  const start = runs.map((r) => r.journal.find((e) => e.type === 'run-start')).find(Boolean);
  const props: [string, string][] = start
    ? [
        ['harnessVersion', start.harnessVersion],
        ['node', start.node],
        ['platform', start.platform],
      ]
    : [];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${name}" ${counts} timestamp="${timestamp}">`,
    `  <testsuite name="${name}" ${counts} timestamp="${timestamp}" hostname="${host}" id="0" package="chaoslab">`,
    ...(props.length
      ? ['    <properties>', ...props.map(([n, v]) => `      <property name="${attr(n)}" value="${attr(String(v))}"/>`), '    </properties>']
      : []),
    ...cases.map((c) => c.xml),
    ...unstarted,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** One JUnit file for several run folders (a batch, or `chaoslab report --junit`), read from their journals. */
export function renderJunitForRunDirs(runDirs: string[], options: JunitOptions = {}): string {
  return renderJunit(
    runDirs.map((runDir) => ({ journal: readJournal(join(runDir, 'journal.jsonl')), runDir })),
    options,
  );
}

/** The single-run form: the junit.xml of one run folder. */
export function renderJunitRun(journal: readonly JournalEntry[], runDir?: string, options: JunitOptions & { view?: RunView } = {}): string {
  const { view, ...rest } = options;
  return renderJunit([{ journal, ...(runDir ? { runDir } : {}), ...(view ? { view } : {}) }], rest);
}
