// Every output of one grading against its class.json (which ./compare.ts holds against the
// matrix): each submission's results.json, junit.xml and reports/, and the class's grades.csv
// and index.html must give the same scores, cell by cell, and show a hidden scenario to no
// student. Read back from the files, as Gradescope, CI and a lecturer would.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeMarkup } from '../../text/format.js';
import type { ClassReport } from '../class/class-data.js';
import type { GradescopeResults } from '../platforms/gradescope.js';
import { shownName } from '../rubric.js';
import type { SubmissionScore } from '../score.js';

/** What is wrong with the outputs of the grading in `dir`, one line each (empty: they agree). */
export function outputProblems(dir: string, report: ClassReport, label = dir): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${label}: ${what}`);
  const tests = report.rubric.map((t) => ({ ...t, feedback: '' }));
  for (const sub of report.submissions) {
    const shown = tests.map((t) => shownName({ tests }, t));
    for (const p of submissionProblems(join(dir, sub.submission), sub, shown)) say(`${sub.submission}/${p}`);
  }
  for (const p of csvProblems(join(dir, 'grades.csv'), report)) say(`grades.csv: ${p}`);
  for (const p of htmlProblems(join(dir, 'index.html'), report)) say(`index.html: ${p}`);
  return problems;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function submissionProblems(dir: string, sub: SubmissionScore, shown: string[]): string[] {
  const problems: string[] = [];
  const text = read(join(dir, 'results.json'));
  if (text === undefined) problems.push('results.json: missing');
  else {
    const results = JSON.parse(text) as GradescopeResults;
    if (results.score !== sub.score) problems.push(`results.json: score ${results.score}, class.json ${sub.score}`);
    if (results.tests.length !== sub.scenarios.length) problems.push(`results.json: ${results.tests.length} tests for ${sub.scenarios.length} scenarios`);
    sub.scenarios.forEach((s, i) => {
      const t = results.tests[i];
      if (!t) return;
      if (t.name !== shown[i]) problems.push(`results.json: test ${i + 1} is named ${JSON.stringify(t.name)}, not ${JSON.stringify(shown[i])}`);
      if (t.score !== s.score || t.max_score !== s.max || t.status !== s.status)
        problems.push(`results.json: ${s.name}: ${t.score}/${t.max_score} ${t.status}, class.json ${s.score}/${s.max} ${s.status}`);
    });
  }
  const junit = read(join(dir, 'junit.xml'));
  if (junit === undefined) problems.push('junit.xml: missing');
  else {
    const cases = [...junit.matchAll(/<testcase name="([^"]*)"[^>]*>(\n\s*<failure )?/g)].map((m) => ({ name: m[1], failed: m[2] !== undefined }));
    if (cases.length !== sub.scenarios.length) problems.push(`junit.xml: ${cases.length} test cases for ${sub.scenarios.length} scenarios`);
    sub.scenarios.forEach((s, i) => {
      const c = cases[i];
      if (c && (c.name !== escapeMarkup(shown[i]!) || c.failed !== (s.status === 'failed')))
        problems.push(`junit.xml: test case ${i + 1} ${c.name} ${c.failed ? 'failed' : 'passed'}, class.json ${s.name} ${s.status}`);
    });
    if (!junit.includes(`<property name="score" value="${sub.score}"/>`)) problems.push(`junit.xml: no score property ${sub.score}`);
  }
  // A failing visible scenario's report is beside results.json; a hidden one's never.
  for (const s of sub.scenarios) {
    const has = existsSync(join(dir, 'reports', `${s.name}.html`));
    const wanted = s.status === 'failed' && s.visibility !== 'hidden' && sub.problem === undefined;
    if (has !== wanted) problems.push(`reports/${s.name}.html: ${has ? 'there' : 'missing'}, though the scenario ${s.status} (${s.visibility})`);
  }
  return problems;
}

function csvProblems(file: string, report: ClassReport): string[] {
  const text = read(file);
  if (text === undefined) return ['missing'];
  // Read by the header's names, as a tool would (the grades are in the named columns).
  const [header = [], ...records] = csvRecords(text);
  const columns = ['submission', 'status', 'score', 'max', ...report.rubric.map((t) => t.name)];
  const missing = columns.filter((c) => !header.includes(c));
  if (missing.length) return [`header ${header.join(',')}: no column ${missing.join(', ')}`];
  const pick = (record: string[]) => columns.map((c) => record[header.indexOf(c)] ?? '').join(',');
  const problems: string[] = [];
  const rows = new Map(records.map((r) => [r[header.indexOf('submission')], pick(r)] as const));
  for (const sub of report.submissions) {
    const want = [sub.submission, sub.notGraded?.kind ?? 'graded', sub.score, sub.max, ...sub.scenarios.map((s) => s.score)].join(',');
    const have = rows.get(sub.submission);
    if (have !== want) problems.push(`${have === undefined ? `no row ${sub.submission}` : `row ${have}`}, class.json ${want}`);
  }
  if (rows.size !== report.submissions.length) problems.push(`${rows.size} rows for ${report.submissions.length} submissions`);
  return problems;
}

/** RFC 4180 records (quoted cells with doubled quotes; grades.csv shows newlines in a cell as \\n, so a record is a line). */
function csvRecords(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map((m) => (m[1] !== undefined ? m[1].replaceAll('""', '"') : m[2]!)));
}

function htmlProblems(file: string, report: ClassReport): string[] {
  const text = read(file);
  if (text === undefined) return ['missing'];
  const problems: string[] = [];
  for (const sub of report.submissions) {
    const start = text.indexOf(`<tr><td class="sub">${escapeMarkup(sub.submission)}<`);
    const end = text.indexOf('</tr>', start);
    if (start < 0 || end < 0) {
      problems.push(`no row ${sub.submission}`);
      continue;
    }
    const row = text.slice(start, end);
    if (!row.includes(`<td>${sub.score} / ${sub.max}</td>`)) problems.push(`${sub.submission}: not ${sub.score} / ${sub.max}`);
    const marks = [...row.matchAll(/<td class="(pass|fail|none)"/g)].map((m) => m[1]);
    // A submission never run (its problem: no command, a failed build …) shows no verdict.
    const want = sub.scenarios.map((s) => (sub.problem !== undefined ? 'none' : s.status === 'passed' ? 'pass' : 'fail'));
    if (marks.join() !== want.join()) problems.push(`${sub.submission}: cells ${marks.join(' ')}, class.json ${want.join(' ')}`);
  }
  return problems;
}
