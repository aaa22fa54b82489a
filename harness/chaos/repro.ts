// A confirmed, shrunk failure as an ordinary scenario file: `<batch>/repro.yaml` (then
// repro-2.yaml, … with --keep-going). Its `chaos` key names the consumer (or, from
// `chaos --server`, the push server) it failed with, so `chaoslab run <file>` and `make scenario
// FILE=<file>` replay it against that program (unless --consumer / --server names another); its header says how it was found and how to draw it again. The
// consumer's words (its headline) are written inert (inert.ts): a comment line stays one line, and
// `cat repro.yaml` runs no escape sequence.

import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { shellQuote } from '../base/paths.js';
import { terminalText } from '../text/inert.js';
import { loadScenario } from '../catalogue/load.js';
import type { ChaosModel, ChaosWhere } from '../lab-api/chaos-model.js';
import { steadiness } from './overview.js';
import type { Failure } from './search.js';
import { scenarioText } from './trial.js';

export interface ReproContext {
  lab: string;
  model: ChaosModel;
  where: ChaosWhere;
  batchDir: string;
  consumerCommand: string;
  /** `chaos --server`: the push server it failed with (the repro replays against it). */
  serverCommand?: string;
  seed: number;
  runsAsked: number;
  /** Where chaos ran: the consumer's command runs from there. */
  cwd: string;
  /** How many repros this batch has written before this one. */
  written: number;
}

export function writeRepro(failure: Omit<Failure, 'repro'>, c: ReproContext): string {
  const name = c.written === 0 ? 'repro' : `repro-${c.written + 1}`;
  const file = join(c.batchDir, `${name}.yaml`);
  const shown = relative(c.cwd, file).startsWith('..') ? file : relative(c.cwd, file);
  const stepWord = (n: number) => `${n} fault step${n === 1 ? '' : 's'}`;
  const headline = terminalText(failure.smallest[0]!.headline);
  // What is under test: the consumer, or (chaos --server) the push server.
  const [program, flag, command] = c.serverCommand === undefined ? ['consumer', '--consumer', c.consumerCommand] : ['server', '--server', c.serverCommand];
  const header = [
    `# chaoslab chaos repro (${c.lab} lab): a schedule shrunk from ${stepWord(failure.originalSteps.length)} to ${stepWord(failure.steps.length)} in ${failure.shrinkRuns} shrink runs, which failed ${steadiness(failure)}.`,
    `# Seed ${c.seed}, path ${failure.path} (fast-check): found at run ${failure.index + 1} of \`chaoslab chaos --lab ${c.lab} --seed ${c.seed} --runs ${c.runsAsked} ${flag} ${terminalText(shellQuote(command))}\`, run in ${terminalText(c.cwd)}.`,
    `# It failed with: ${headline}`,
    `# Replay it against the same ${program}, from ${c.cwd}: chaoslab run ${shown}  (or: make scenario FILE=${shown})${failure.failedRuns < failure.smallest.length ? `; to see it fail: chaoslab run ${shown} --repeat 10` : ''}`,
    `# Against another ${program}: add ${flag} "<command>".`,
    '# Fault steps:',
    ...(failure.steps.length ? failure.steps.map((s) => `#   - ${s}`) : ['#   (none: the schedule itself, without a fault, is enough)']),
    ...faultEffects(failure.smallest[0]!.coverage),
    '',
  ].join('\n');
  const description =
    `A schedule chaoslab chaos drew (seed ${c.seed}, path ${failure.path}) and shrank to ${stepWord(failure.steps.length)}, ` +
    `on which the ${program} failed ${failure.failedRuns} of ${failure.smallest.length} runs: ${headline}`;
  const text = scenarioText(
    c.model,
    failure.schedule,
    c.where,
    { name, description, lab: c.lab },
    { chaos: { [program]: command, seed: c.seed, path: failure.path } },
  );
  writeFileSync(file, `${header}${text}`);
  // What was written must load as any scenario does, or it is no repro.
  loadScenario(file);
  return shown;
}

/** What each fault of the failing run did to the consumer (its coverage rows), so a reader knows what every remaining step is for. */
function faultEffects(coverage: Failure['smallest'][number]['coverage']): string[] {
  if (!coverage.length) return [];
  return [
    '# What each fault did in the run that failed:',
    ...coverage.map((c) => `#   - ${terminalText(c.fault)} (${c.kind}): ${c.took ? '' : 'no effect: '}${terminalText(c.how)}`),
  ];
}
