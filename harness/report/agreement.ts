// Do the console, summary.md, junit.xml and report.html of a run say the same thing? Each must
// carry the verdict's status, its headline, every finding and the expected state, as the checker
// wrote them. `chaoslab mutants` (and so `make test`) checks this for every run it makes.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { outcomeLines } from './console.js';
import { cellText, escapeMarkup } from './format.js';
import { attr } from './junit.js';
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
  const expectedCells = (view.state?.rows[0]?.cells ?? []).filter((c) => c !== '' && c !== null).map(cellText);
  const check = (file: string, text: string | undefined, wants: [string, string][]) => {
    if (text === undefined) return;
    for (const [what, want] of wants) if (!text.includes(want)) problems.push(`${file} does not say ${what}: ${JSON.stringify(want)}`);
  };

  const console = outcomeLines(view.name, { status: view.status === 'interrupted' ? 'error' : view.status, runDir, view }, 0).lines.join('\n');
  check('the console', console, [
    ['the status', `${view.status.toUpperCase()}  ${view.name}`],
    ['the headline', view.headline],
    ...reasons.map((r): [string, string] => ['a finding', r]),
  ]);
  check('summary.md', read('summary.md'), [
    ['the status', `— ${view.status.toUpperCase()}`],
    ['the headline', view.headline],
    ...(view.status === 'pass' ? [] : reasons.map((r): [string, string] => ['a finding', r])),
    ...expectedCells.map((c): [string, string] => ['the expected state', c]),
  ]);
  const junit = read('junit.xml');
  const element = view.status === 'fail' ? '<failure ' : view.status === 'pass' ? undefined : '<error ';
  if (junit !== undefined) {
    for (const other of ['<failure ', '<error '])
      if (other !== element && junit.includes(other)) problems.push(`junit.xml has ${other.trim()}> for a ${view.status} run`);
  }
  check('junit.xml', junit, [
    ...(element ? [['the status', `${element}message="${attr(view.headline)}"`] as [string, string]] : []),
    ...(view.status === 'pass' ? [] : reasons.map((r): [string, string] => ['a finding', escapeMarkup(r)])),
  ]);
  check('report.html', read('report.html'), [
    ['the status', `data-status="${view.status}"`],
    ['the headline', escapeMarkup(view.headline)],
    ...reasons.map((r): [string, string] => ['a finding', escapeMarkup(r)]),
    ...expectedCells.map((c): [string, string] => ['the expected state', escapeMarkup(c)]),
  ]);
  return problems;
}
