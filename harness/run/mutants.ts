// The mutant matrix: every consumer (references and mutants) against scenarios, judged by
// what a grader needs — references pass everything; every mutant passes happy-path (it is a
// near miss) and is caught by its designated killer for the reason its header names. A lab
// with a push server under test has a second matrix of the same rules: its server references
// and server mutants (`Lab.server.mutantIndex`) against its server scenarios, rows marked
// `program: server`.

import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { projectRoot } from '../base/paths.js';
import { parse } from 'yaml';
import type { BatchItem } from './batch.js';
import type { Lab } from '../lab-api/lab.js';
import { markdownLink, markdownText } from '../text/inert.js';
import type { RunResult } from './runner.js';
import { findingTexts } from '../findings/verdict.js';

/** What a matrix row runs under test: a consumer (`--consumer`) or the lab's push server (`--server`). */
export type MatrixProgram = 'consumer' | 'server';

export interface MatrixConsumer {
  /** "typescript" for a reference, "ack-before-commit (python)" for a mutant. */
  label: string;
  /** A server of the lab's server matrix; undefined (as in matrix.json of old): a consumer. */
  program?: MatrixProgram;
  kind: 'reference' | 'mutant';
  /** typescript or python: a reference's name in index.yaml is its language. */
  language: string;
  command: string;
  killer?: string;
  reason?: RegExp;
  /** Other scenarios built to catch it, each for its reason (a statistical killer): proved by `make server-proof`, not the matrix. */
  alsoCaughtBy?: { killer: string; reason: RegExp }[];
}

export interface Cell {
  scenario: string;
  status: RunResult['status'];
  /** First reason, or the harness error. */
  reason: string;
  reasons: string[];
  runDir: string;
}

export interface MatrixRow {
  consumer: MatrixConsumer;
  cells: Cell[];
  ok: boolean;
  /** One line: how the row was judged. */
  note: string;
}

/** The program a row runs (a row of old, without `program`, is a consumer's). */
export const programOf = (c: Pick<MatrixConsumer, 'program'>): MatrixProgram => c.program ?? 'consumer';

/** A row's name for people: "snapshot-then-subscribe (python)" of the server matrix is "server snapshot-then-subscribe (python)". */
export const shownLabel = (c: Pick<MatrixConsumer, 'program' | 'label'>): string => (c.program === 'server' ? `server ${c.label}` : c.label);

/** A mutant's command in each language, run from the project root, from the lab's mutant folder. */
const commandOf = (mutantsDir: string) => {
  const folder = relative(projectRoot, mutantsDir);
  return {
    typescript: (name: string) => `node ${join('dist', folder, `${name}.js`)}`,
    python: (name: string) => `python3 ${join(folder, `${name}.py`)}`,
  };
};

/** Reads a lab's mutant index (consumer/<lab>/mutants/index.yaml); a mistake names the file and the entry. */
export function loadMatrixConsumers(lab: Pick<Lab, 'name' | 'mutantIndex' | 'consumerDir'>): MatrixConsumer[] {
  return loadMatrixIndex(lab.mutantIndex, join(lab.consumerDir, 'mutants'), 'consumer');
}

/**
 * The lab's server matrix rows (`Lab.server.mutantIndex`, same format: its references are server
 * commands, a mutant is `node dist/<folder>/<name>.js` or `python3 <folder>/<name>.py` of the
 * index's folder); none for a lab without a server under test.
 */
export function loadMatrixServers(lab: Pick<Lab, 'server'>): MatrixConsumer[] {
  return lab.server ? loadMatrixIndex(lab.server.mutantIndex, dirname(lab.server.mutantIndex), 'server') : [];
}

/** Reads a mutant index; a mistake names the file and the entry. */
export function loadMatrixIndex(indexFile: string, mutantsDir: string, program: MatrixProgram): MatrixConsumer[] {
  const COMMAND = commandOf(mutantsDir);
  const marked = program === 'server' ? { program } : {};
  const doc = parse(readFileSync(indexFile, 'utf8')) as {
    references?: { name?: string; command?: string }[];
    mutants?: { name?: string; languages?: string[]; killer?: string; reason?: string; also_caught_by?: { killer?: string; reason?: string }[] }[];
  };
  const fail = (where: string, what: string): never => {
    throw new Error(`${indexFile}: ${where}: ${what}`);
  };
  const consumers: MatrixConsumer[] = (doc.references ?? []).map((r, i) => ({
    ...marked,
    label: r.name ?? fail(`references[${i}]`, 'needs a name'),
    kind: 'reference' as const,
    language: r.name ?? '',
    command: r.command ?? fail(`references[${i}]`, 'needs a command'),
  }));
  for (const [i, m] of (doc.mutants ?? []).entries()) {
    const where = `mutants[${i}]${m.name ? ` (${m.name})` : ''}`;
    const name = m.name ?? fail(where, 'needs a name');
    const killer = m.killer ?? fail(where, 'needs a killer scenario');
    const reason = new RegExp(m.reason ?? fail(where, 'needs the reason it must be caught for'));
    const also = (m.also_caught_by ?? []).map((a, j) => ({
      killer: a.killer ?? fail(`${where}.also_caught_by[${j}]`, 'needs a killer scenario'),
      reason: new RegExp(a.reason ?? fail(`${where}.also_caught_by[${j}]`, 'needs the reason it must be caught for')),
    }));
    for (const language of m.languages ?? fail(where, 'needs languages')) {
      const command = COMMAND[language as keyof typeof COMMAND] ?? fail(where, `unknown language "${language}" (typescript or python)`);
      const mutant: MatrixConsumer = { ...marked, label: `${name} (${language})`, kind: 'mutant', language, command: command(name), killer, reason };
      consumers.push(also.length ? { ...mutant, alsoCaughtBy: also } : mutant);
    }
  }
  return consumers;
}

/**
 * How much of the matrix to run:
 * - full: every consumer against every scenario (`make mutants`);
 * - quick: references against every scenario, each mutant against the happy path and its killer;
 * - killers: references against the happy path and every killer only, each mutant against the
 *   happy path and its killer — every judgement the matrix makes, at the cost of the fewest
 *   runs;
 * - catches: as killers, without the mutants' happy-path runs: is every mutant caught, at one
 *   run per mutant (`make test`: the near miss, a mutant's plain happy run, is the mutants' unit
 *   tests' half: test/consumer/<lab>/mutants.test.ts).
 */
export type MatrixScope = 'full' | 'quick' | 'killers' | 'catches';

export function matrixItems(
  consumers: MatrixConsumer[],
  scenarios: BatchItem['scenario'][],
  scope: MatrixScope,
  happyPath: string,
): (BatchItem & { consumer: MatrixConsumer })[] {
  const judged = new Set([happyPath, ...consumers.flatMap((c) => (c.killer ? [c.killer] : []))]);
  const runs = (consumer: MatrixConsumer, name: string): boolean => {
    if (scope === 'full') return true;
    if (consumer.kind === 'mutant') return name === consumer.killer || (scope !== 'catches' && name === happyPath);
    return scope === 'quick' || judged.has(name);
  };
  return consumers.flatMap((consumer) =>
    scenarios
      .filter((s) => runs(consumer, s.name))
      .map((scenario) => ({
        scenario,
        consumer,
        ...(consumer.program === 'server' ? { serverCommand: consumer.command } : { consumerCommand: consumer.command }),
        label: `${shownLabel(consumer)} × ${scenario.name}`,
      })),
  );
}

/** The mutant's name in index.yaml ("gap-skip" for "gap-skip (python)"); a reference has none. */
export const mutantName = (consumer: MatrixConsumer): string | undefined =>
  consumer.kind === 'mutant' ? consumer.label.replace(/ \([a-z]+\)$/, '') : undefined;

/**
 * The references and only the mutants named (every language of each), or everyone when `names`
 * is undefined; a name index.yaml does not have is an error naming the ones it has.
 */
export function consumersNamed(consumers: MatrixConsumer[], names: readonly string[] | undefined): MatrixConsumer[] {
  if (names === undefined) return consumers;
  const known = new Set(consumers.map(mutantName).filter((n): n is string => n !== undefined));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length) throw new Error(`no mutant ${unknown.join(', ')}; mutants: ${[...known].join(', ')}`);
  return consumers.filter((c) => c.kind === 'reference' || names.includes(mutantName(c)!));
}

/** The consumers of one language (references and mutants), or all of them. */
export function consumersIn(consumers: MatrixConsumer[], language: string | undefined): MatrixConsumer[] {
  return language === undefined ? consumers : consumers.filter((c) => c.language === language);
}

export function judgeRow(consumer: MatrixConsumer, cells: Cell[], happyPath: string): MatrixRow {
  // A skipped run (packet loss, unsealed) is no failure: it was never run.
  const failed = cells.filter((c) => c.status !== 'pass' && c.status !== 'skipped');
  if (consumer.kind === 'reference') {
    const ok = failed.length === 0;
    const skipped = cells.filter((c) => c.status === 'skipped').length;
    const passes = skipped ? `passes all ${cells.length - skipped} scenarios run (${skipped} skipped)` : `passes all ${cells.length} scenarios`;
    return { consumer, cells, ok, note: ok ? passes : failed.map((c) => `FAILS ${c.scenario}: ${c.reason}`).join('; ') };
  }
  const happy = cells.find((c) => c.scenario === happyPath);
  const killer = cells.find((c) => c.scenario === consumer.killer);
  // Without a happy-path run (--catches) the near miss is not judged here.
  if (happy && happy.status !== 'pass') return { consumer, cells, ok: false, note: `not a near miss: fails ${happyPath} (${happy.reason})` };
  if (!killer) return { consumer, cells, ok: false, note: `its killer ${consumer.killer} was not run` };
  if (killer.status === 'pass') return { consumer, cells, ok: false, note: `SURVIVED ${killer.scenario}` };
  // Its killer needs what this machine cannot give (a sealed run): not judged here, not failed.
  if (killer.status === 'skipped') return { consumer, cells, ok: true, note: `not judged here: its killer ${killer.scenario} was skipped (see its report)` };
  if (killer.status === 'error') return { consumer, cells, ok: false, note: `harness error in ${killer.scenario}: ${killer.reason}` };
  const match = killer.reasons.find((r) => consumer.reason!.test(r));
  return match
    ? { consumer, cells, ok: true, note: `caught by ${killer.scenario}: ${match}` }
    : {
        consumer,
        cells,
        ok: false,
        note: `caught by ${killer.scenario}, but not for its named reason /${consumer.reason!.source}/: ${killer.reasons.join(' | ')}`,
      };
}

export function cellOf(scenario: string, result: RunResult): Cell {
  const reasons = result.error ? [result.error] : result.verdict ? findingTexts(result.verdict) : [];
  return { scenario, status: result.status, reason: reasons[0] ?? '', reasons, runDir: result.runDir };
}

/** matrix.md: rows consumers (then servers), columns scenarios; a cell is ✓ (pass) or ✗ with its reason below. */
export function renderMatrixMarkdown(rows: MatrixRow[], scenarios: string[], batchDir: string): string {
  const cell = (row: MatrixRow, s: string) => {
    const c = row.cells.find((x) => x.scenario === s);
    if (!c) return '';
    const mark = c.status === 'pass' ? '✓' : c.status === 'fail' ? '✗' : c.status === 'skipped' ? '–' : '!';
    return s === row.consumer.killer ? `**${mark}**` : mark;
  };
  // One table per program: a server row never runs a consumer scenario, nor the other way round.
  const table = (program: MatrixProgram): string[] => {
    const mine = rows.filter((r) => programOf(r.consumer) === program);
    const columns = scenarios.filter((s) => mine.some((r) => r.cells.some((c) => c.scenario === s)));
    if (mine.length === 0) return [];
    return [
      program === 'server' ? '## Server matrix' : '## Matrix',
      '',
      `| ${program} | ${columns.join(' | ')} |`,
      `|---|${columns.map(() => '---').join('|')}|`,
      ...mine.map((r) => `| ${markdownText(r.consumer.label)} | ${columns.map((s) => cell(r, s)).join(' | ')} |`),
      '',
    ];
  };
  const lines = [
    `# chaoslab mutant matrix — ${rows.every((r) => r.ok) ? 'OK' : 'PROBLEMS'}`,
    '',
    '✓ pass, ✗ caught (fail), ! harness error, – skipped (needs a sealed run), **bold** = the designated killer, blank = not run.',
    '',
    '## Verdicts',
    '',
    '| under test | judged | how |',
    '|---|---|---|',
    ...rows.map((r) => `| ${markdownText(shownLabel(r.consumer))} | ${r.ok ? 'ok' : '**PROBLEM**'} | ${markdownText(r.note)} |`),
    '',
    ...table('consumer'),
    ...table('server'),
    '## Why each cell failed',
    '',
    ...rows.flatMap((r) =>
      r.cells
        .filter((c) => c.status !== 'pass')
        .map(
          (c) =>
            `- ${markdownText(`${shownLabel(r.consumer)} × ${c.scenario}: ${c.reason}`)} (${markdownLink('run', `${relative(batchDir, c.runDir)}/report.html`)})`,
        ),
    ),
    '',
  ];
  return lines.join('\n');
}
