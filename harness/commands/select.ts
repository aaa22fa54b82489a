// Which scenarios `chaoslab run` runs: positional names, globs and file paths, or --all / --only
// (an alias of one positional glob), narrowed by --lab. selectScenarios is pure over a catalogue
// listing; selectItems applies it to the real catalogue and makes the batch's items.

import { minimatch } from 'minimatch';
import { statSync } from 'node:fs';
import type { BatchItem } from '../run/batch.js';
import { labNamed, labNames, testsServer } from '../labs/registry.js';
import { projectRoot, scenariosDir } from '../base/paths.js';
import { catalogue, listScenarios } from '../catalogue/catalogue.js';
import { vouchedScenarios } from '../catalogue/catalogue-index.js';
import { loadScenario } from '../catalogue/load.js';
import { closest } from '../scenario/problems.js';
import { UsageError } from '../base/exit-status.js';

export interface SelectOptions {
  all?: boolean;
  only?: string;
  lab?: string;
  consumer?: string;
  server?: string;
  repeat: number;
}

export interface Listed {
  name: string;
  lab: string;
  file: string;
}

export interface Picked {
  /** Catalogue entries and files, in the order asked, each once. */
  picked: { name?: string; file: string; lab?: string }[];
  /** More than one scenario was asked for (a batch even when the globs matched only one). */
  batch: boolean;
}

const isGlob = (s: string): boolean => /[*?[\]{}!]/.test(s);

/**
 * `args` are what the user typed; `isFile` says whether a word names an existing file (a path
 * wins over a name, as for a single scenario). Names and globs that match nothing are one
 * usage error naming all of them.
 */
export function selectScenarios(
  args: readonly string[],
  opts: { all?: boolean; only?: string; lab?: string },
  catalogue: readonly Listed[],
  isFile: (word: string) => boolean,
): Picked {
  const words = [...args, ...(opts.only ? [opts.only] : [])];
  if (opts.all && words.length > 0) throw new UsageError(`give scenario names or --all, not both (got ${words.map((w) => `"${w}"`).join(', ')})`);
  if (!opts.all && words.length === 0) throw new UsageError('name a scenario, or use --all or --only <glob> (see `chaoslab list`)');
  const inLab = catalogue.filter((s) => !opts.lab || s.lab === opts.lab);
  if (opts.all) {
    if (inLab.length === 0) throw new UsageError(`no scenario in the ${opts.lab} lab`);
    return { picked: [...inLab], batch: true };
  }
  const picked: Picked['picked'] = [];
  const seen = new Set<string>();
  const add = (p: Picked['picked'][number]) => {
    if (seen.has(p.file)) return;
    seen.add(p.file);
    picked.push(p);
  };
  const unmatched: string[] = [];
  const elsewhere: Listed[] = [];
  for (const word of words) {
    if (isFile(word)) {
      add({ file: word });
      continue;
    }
    const matches = isGlob(word) ? inLab.filter((s) => minimatch(s.name, word)) : namedOnce(word, catalogue, opts.lab);
    const other = matches.length === 0 && !isGlob(word) ? catalogue.find((s) => s.name === word) : undefined;
    if (other) elsewhere.push(other);
    else if (matches.length === 0) unmatched.push(word);
    for (const m of matches) add(m);
  }
  if (elsewhere.length > 0) throw new OtherLabError(elsewhere, opts.lab!, inLab);
  if (unmatched.length > 0)
    throw new UnmatchedError(
      unmatched,
      opts.lab,
      inLab.map((s) => s.name),
    );
  return { picked, batch: words.length > 1 || words.some(isGlob) };
}

/**
 * The catalogue scenarios of one name within `lab` (all labs when none is given). A name that two
 * labs use is ambiguous without --lab: a usage error naming both, never a run of either.
 */
function namedOnce(word: string, catalogue: readonly Listed[], lab: string | undefined): Listed[] {
  const named = catalogue.filter((s) => s.name === word);
  const labs = [...new Set(named.map((s) => s.lab))];
  if (!lab && labs.length > 1)
    throw new UsageError(
      `"${word}" is a scenario of ${labs.length} labs (${named.map((s) => `${s.lab}: ${s.file}`).join(', ')}): choose one with --lab ${labs.join('|')}`,
    );
  return named.filter((s) => !lab || s.lab === lab);
}

/** Names of another lab's scenarios, asked for with --lab: each named with its lab, and the lab's own scenario it most likely meant. */
export class OtherLabError extends UsageError {
  constructor(scenarios: readonly Listed[], lab: string, inLab: readonly Listed[]) {
    const names = inLab.map((s) => s.name);
    const lines = scenarios.map((s) => {
      const meant = names.includes(`${lab}-${s.name}`) ? `${lab}-${s.name}` : closest(s.name, names);
      return `${s.name} is a ${s.lab} scenario, not one of the ${lab} lab (--lab ${lab}): ${meant ? `run ${meant}, or ` : ''}see \`chaoslab list --lab ${lab}\``;
    });
    super(lines.join('; '));
  }
}

/** Names or globs that match no scenario: one line naming each, with a "did you mean" where one is close. */
export class UnmatchedError extends UsageError {
  constructor(
    readonly words: string[],
    lab: string | undefined,
    names: readonly string[],
  ) {
    const shown = words.map((w) => {
      const hint = isGlob(w) ? undefined : closest(w, names);
      return `"${w}"${hint ? ` (did you mean "${hint}"?)` : ''}`;
    });
    const what = words.some(isGlob) ? 'no scenario matches' : `unknown scenario${words.length > 1 ? 's' : ''}`;
    const hinted = shown.some((s) => s.includes('did you mean'));
    super(`${what} ${shown.join(', ')}${lab ? ` in the ${lab} lab` : ''}${hinted ? '' : ' (see `chaoslab list`)'}`);
  }
}

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The runs `chaoslab run` makes of its arguments; a batch when more than one scenario (or a glob, --all, --repeat) was asked for. */
export interface Selection {
  items: BatchItem[];
  batch: boolean;
  batchName: string;
  /** What a glob or --all left out because it tests the other program (a line to print first), if anything. */
  note?: string;
}

export function selectItems(names: string[], opts: SelectOptions): Selection {
  if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  const consumer = { ...(opts.consumer ? { consumerCommand: opts.consumer } : {}), ...(opts.server ? { serverCommand: opts.server } : {}) };
  // Globs and --all list (and so validate) the whole catalogue; plain names need only its file names.
  const wide = opts.all || opts.only || names.some((n) => /[*?[\]{}!]/.test(n));
  // (Files the build's index vouches for are not loaded twice: the picked ones are loaded below.)
  const listed = wide ? listScenarios(scenariosDir, undefined, vouchedScenarios(catalogue(scenariosDir), scenariosDir, projectRoot)) : catalogue(scenariosDir);
  const { picked, batch } = selectScenarios(names, opts, listed, isFile);
  const loaded = picked.map((p) => loadScenario(p.file));
  const scenarios = programFits(loaded, opts, Boolean(wide));
  const note = leftOutNote(loaded.length - scenarios.length, scenarios.length, opts);
  // One consumer speaks one lab's protocol: with --consumer, the scenarios must be of one lab.
  const spanned = [...new Set(scenarios.map((s) => s.protocol))];
  if (opts.consumer && spanned.length > 1)
    throw new UsageError(
      `--consumer speaks one lab's protocol, but these scenarios span the ${spanned.join(' and ')} labs: choose one with --lab ${spanned.join('|')}`,
    );
  // A chaos repro replays with the consumer (or server) it failed with, unless --consumer (--server) names another.
  const consumerOf = (scenario: (typeof scenarios)[number]) =>
    scenario.chaos?.server && !opts.server
      ? { ...consumer, serverCommand: scenario.chaos.server }
      : opts.consumer || !scenario.chaos?.consumer
        ? consumer
        : { consumerCommand: scenario.chaos.consumer };
  const items = scenarios.flatMap((scenario) =>
    Array.from({ length: opts.repeat }, (_, i) => ({
      scenario,
      label: opts.repeat > 1 ? `${scenario.name} #${i + 1}` : scenario.name,
      ...consumerOf(scenario),
    })),
  );
  return { items, batch: batch || opts.all === true || items.length > 1, batchName: batchName(names, opts), ...(note ? { note } : {}) };
}

/**
 * What `chaoslab validate` checks of its words: a path is a file (a missing one too, so that the
 * loader names it), a name or glob picks from the catalogue (of --lab, when given), as `run` does.
 */
export function validateTargets(words: string[], opts: { lab?: string }): { file: string; shown: string }[] {
  if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  const looksLikePath = (w: string) => isFile(w) || w.includes('/') || /\.ya?ml$/.test(w);
  const { picked } = selectScenarios(words, opts.lab ? { lab: opts.lab } : {}, catalogue(scenariosDir), looksLikePath);
  return picked.map((p) => ({ file: p.file, shown: p.name ?? p.file }));
}

/** With --server (or --consumer), a glob or --all runs only the scenarios of that program: say how many, and how many it left out. */
export function leftOutNote(leftOut: number, kept: number, opts: Pick<SelectOptions, 'consumer' | 'server'>): string | undefined {
  if (leftOut === 0) return undefined;
  const s = (n: number) => (n === 1 ? '' : 's');
  return opts.server
    ? `--server: running the ${kept} server scenario${s(kept)} only (feed-server-*: the push server under test); ${leftOut} consumer scenario${s(leftOut)} left out`
    : `--consumer: running the ${kept} consumer scenario${s(kept)} only; ${leftOut} server scenario${s(leftOut)} (a push server under test, give it with --server) left out`;
}

/**
 * The scenarios that test what was given: a server scenario (its lab's push server under test)
 * takes `--server`, never `--consumer`, and a consumer scenario the other way round. A scenario
 * named outright that does not fit is a usage error naming it; a glob or --all leaves it out.
 */
export function programFits<S extends { name: string; protocol: string; lab: unknown }>(
  scenarios: S[],
  opts: Pick<SelectOptions, 'consumer' | 'server'>,
  wide: boolean,
): S[] {
  if (opts.consumer && opts.server) throw new UsageError('give --consumer or --server, not both: a run tests one program (a consumer, or a push server)');
  const misfit = (s: S): string | undefined =>
    opts.server && !testsServer(s)
      ? `--server runs a push server under test, but ${s.name} tests a consumer: give its consumer with --consumer, or name a server scenario (feed-server-*)`
      : opts.consumer && testsServer(s)
        ? `${s.name} tests a push server (the reference consumers are its probes): give the server with --server, not --consumer`
        : undefined;
  if (!wide) {
    const first = scenarios.map(misfit).find((why) => why !== undefined);
    if (first) throw new UsageError(first);
    return scenarios;
  }
  const fitting = scenarios.filter((s) => misfit(s) === undefined);
  if (fitting.length === 0 && scenarios.length > 0) throw new UsageError(misfit(scenarios[0]!)!);
  return fitting;
}

const GLOB = /[*?[\]{}!]/;

/**
 * The batch folder's name, after what was asked: `catalogue` (--all), `only-<glob>` for a glob
 * (positional or --only), the names given, `<lab>-` in front with --lab, `-x<n>` for a repeat;
 * safe as a file name.
 */
export function batchName(names: string[], opts: Pick<SelectOptions, 'all' | 'only' | 'lab' | 'repeat'>): string {
  const safe = (text: string): string =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '');
  const asked = [...(opts.only ? [opts.only] : []), ...names].map((n) => (GLOB.test(n) ? `only-${safe(n) || 'glob'}` : safe(n)));
  const what = opts.all ? 'catalogue' : asked.join('-') || 'batch';
  const lab = opts.lab && (opts.all || opts.only || names.some((n) => GLOB.test(n))) ? `${safe(opts.lab)}-` : '';
  return `${lab}${what}`.slice(0, 60).replace(/-+$/, '') + (opts.repeat > 1 ? `-x${opts.repeat}` : '');
}
