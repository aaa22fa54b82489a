// Do the console, summary.md, junit.xml and report.html of a run say the same thing? Each must
// carry the verdict's status, its headline, every finding (the console and summary.md also the
// consumer's last stderr line under a verdict that is not a pass) and the final state — each row of the
// state table whole (label, every cell, right or wrong), not numbers that could appear anywhere —
// as the checker wrote them, each shown as its output kind shows a value (inert.ts). `chaoslab mutants`
// (and so `make test`) checks this for every run it makes.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { outcomeLines } from './console-lines.js';
import { escapeMarkup } from '../text/format.js';
import { markdownText, terminalText } from '../text/inert.js';
import { tableRow } from './html.js';
import { attr } from './junit.js';
import { markdownRow } from './summary.js';
import type { RunView } from './view.js';
import { reasonsOf } from './view.js';

/** Every way the run's outputs depart from its view; [] when they all agree. */
export function agreementProblems(runDir: string, view: RunView): string[] {
  const problems: string[] = [];
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(join(runDir, file), 'utf8');
    } catch (error) {
      problems.push(`${file} cannot be read: ${(error as Error).message}`);
      return undefined;
    }
  };
  const reasons = reasonsOf(view);
  const stateRows = view.state?.rows ?? [];
  // Under a verdict that is not a pass, the consumer's own last words.
  const lastWords = view.status === 'pass' ? undefined : view.stderrTail?.lines.at(-1);
  const said: [string, string][] = lastWords ? [["the consumer's stderr", lastWords]] : [];
  const check = (file: string, text: string | undefined, wants: [string, string][]) => {
    if (text === undefined) return;
    for (const [what, want] of wants) if (!text.includes(want)) problems.push(`${file} does not say ${what}: ${JSON.stringify(want)}`);
  };

  const console = outcomeLines(view.name, { status: view.status, runDir, view }, 0).lines.join('\n');
  check('the console', console, [
    ['the status', `${view.status.toUpperCase()}  ${terminalText(view.name)}`],
    ['the headline', terminalText(view.headline)],
    ...reasons.map((r): [string, string] => ['a finding', terminalText(r)]),
    ...said,
  ]);
  check('summary.md', read('summary.md'), [
    ['the status', `— ${view.status.toUpperCase()}`],
    ['the headline', markdownText(view.headline)],
    ...(view.status === 'pass' ? [] : reasons.map((r): [string, string] => ['a finding', markdownText(r)])),
    ...stateRows.map((r): [string, string] => ['the final state', markdownRow(r)]),
    ...said,
  ]);
  const junit = read('junit.xml');
  const element = ({ pass: undefined, fail: '<failure ', error: '<error ', interrupted: '<skipped ', skipped: '<skipped ' } as const)[view.status];
  if (junit !== undefined) {
    for (const other of ['<failure ', '<error ', '<skipped '])
      if (other !== element && junit.includes(other)) problems.push(`junit.xml has ${other.trim()}> for a ${view.status} run`);
  }
  check('junit.xml', junit, [
    ...(element ? [['the status', `${element}message="${attr(view.headline)}"`] as [string, string]] : []),
    ...(view.status === 'pass' ? [] : reasons.map((r): [string, string] => ['a finding', escapeMarkup(r)])),
  ]);
  check('report.html', read('report.html'), [
    ['the status', `data-status="${view.status}"`],
    ['the status', `<span class="status">${view.status.toUpperCase()}</span>`],
    ['the headline', escapeMarkup(view.headline)],
    ...reasons.map((r): [string, string] => ['a finding', escapeMarkup(r)]),
    ...stateRows.map((r): [string, string] => ['the final state', tableRow(r).text]),
  ]);
  return problems;
}
