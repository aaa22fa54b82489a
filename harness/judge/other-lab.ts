// A consumer run against another lab's scenario (`chaoslab run happy-path --consumer <a feed
// consumer>`): the harness cannot know a command's lab in advance, but the consumer soon shows
// it. Either its first line on the wire opens the other lab's protocol (the ledger publisher gets
// `{"op":"subscribe",...}`, the feed publisher `RESUME -1`), or it exits 64 before connecting,
// naming on stderr a variable only the other lab gives (both contracts make a consumer name the
// variable it misses). Either way that is the run's one finding: what followed (a malformed
// line, no RESUME, restarts) is its consequence. Lab-neutral: each lab says how its consumers
// show themselves (`ConsumerSignature`); the publishers only record what they were sent.

import type { JournalEntry } from '../record/journal.js';
import type { Finding, ProcessRef, Verdict } from '../findings/verdict.js';

/** How a lab's consumers show themselves. */
export interface ConsumerSignature {
  /** Whether a line a consumer sent (as the journal holds it) opens this lab's protocol. */
  opens(line: string): boolean;
  /** Every CHAOSLAB_* variable this lab's consumers are given. */
  variables: readonly string[];
}

/** A lab as this judge sees it. */
export interface LabSigned {
  name: string;
  signature: ConsumerSignature;
  /** Its scenario names (for the one to run instead; read only when a finding names one) and its happy path (the fallback). */
  scenarioNames: () => readonly string[];
  happyPath: string;
}

/** The finding's code, in every lab. */
export const OTHER_LAB = 'other-lab';

/** The exit status both contracts give a bad environment. */
const EXIT_ENV = 64;
/** Characters of the consumer's line quoted in the finding. */
const QUOTED_CHARS = 17;

/** The consumer's bytes quoted inert: cut, control and non-ASCII characters escaped, backticks too. */
export function quoteLine(line: string): string {
  const body = line.replace(/\r?\n$/, '');
  const chars = [...body];
  const escaped = chars
    .slice(0, QUOTED_CHARS)
    .map((c) => {
      const code = c.codePointAt(0)!;
      if (c === '`' || c === '\\') return `\\${c}`;
      if (code >= 0x20 && code <= 0x7e) return c;
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
    })
    .join('');
  return `\`${escaped}${chars.length > QUOTED_CHARS ? '...' : ''}\``;
}

/** The other lab's scenario that most likely stands for `scenario`: `<lab>-<name>`, the name without this lab's prefix, or its happy path. */
export function counterpart(scenario: string, thisLab: string, other: LabSigned): string {
  const candidates = [`${other.name}-${scenario}`, scenario.startsWith(`${thisLab}-`) ? scenario.slice(thisLab.length + 1) : undefined];
  return candidates.find((c): c is string => c !== undefined && other.scenarioNames().includes(c)) ?? other.happyPath;
}

/** What the consumer showed of itself: the other lab, and in what words. */
interface Shown {
  lab: LabSigned;
  evidence: string;
  process: ProcessRef;
  t: number;
}

/**
 * A watch fed every journal entry in order; it returns the finding on the entry that first shows
 * the consumer under test speaks another lab's protocol (and undefined before and after).
 */
export function otherLabWatch(
  scenario: { name: string; lab: string },
  own: ConsumerSignature,
  others: readonly LabSigned[],
): (entry: JournalEntry) => Finding | undefined {
  const owners = new Map<string, ProcessRef>();
  const heard = new Set<string>();
  const connected = new Set<number>();
  let done = false;
  const foreignVariable = (stderr: string) => {
    for (const lab of others)
      for (const name of lab.signature.variables) if (!own.variables.includes(name) && new RegExp(`\\b${name}\\b`).test(stderr)) return { lab, name };
    return undefined;
  };
  const shownBy = (e: JournalEntry): Shown | undefined => {
    if (e.type === 'wire') {
      const key = `${e.stream}/${e.conn}`;
      if (e.kind === 'open' && e.owner?.role === 'consumer') {
        owners.set(key, e.owner);
        connected.add(e.owner.incarnation);
      }
      const owner = owners.get(key);
      if (e.kind !== 'recv' || !owner || heard.has(key)) return undefined;
      heard.add(key);
      if (own.opens(e.line)) return undefined;
      const lab = others.find((l) => l.signature.opens(e.line));
      return lab && { lab, evidence: quoteLine(e.line), process: owner, t: e.t };
    }
    if (e.type !== 'process-exit' || e.role !== 'consumer' || e.code !== EXIT_ENV || connected.has(e.incarnation)) return undefined;
    const asked = foreignVariable(e.stderrTail);
    return (
      asked && {
        lab: asked.lab,
        evidence: `it exited ${EXIT_ENV} asking for ${asked.name}, which only the ${asked.lab.name} lab's consumers are given`,
        process: { role: 'consumer', incarnation: e.incarnation },
        t: e.t,
      }
    );
  };
  return (entry) => {
    if (done) return undefined;
    const shown = shownBy(entry);
    if (!shown) return undefined;
    done = true;
    const { lab, evidence, process, t } = shown;
    return {
      code: OTHER_LAB,
      text: `this consumer speaks the ${lab.name} lab's protocol (${evidence}); ${scenario.name} is a ${scenario.lab} scenario: run ${counterpart(scenario.name, scenario.lab, lab)}, or \`chaoslab list --lab ${lab.name}\``,
      subject: { process, t },
    };
  };
}

/**
 * otherLabWatch without the other labs loaded until an entry could show one: a consumer's line
 * that is not its own lab's first line, or its exit 64 (a sealed worker begins its run with its
 * own lab only, and an honest consumer never shows another). Then `loadOthers` runs and every
 * entry written so far is replayed to the watch, so it finds what a watch that saw each entry live
 * finds. `found` hears each finding (the first ends the run); the verdict awaits `settled()`.
 */
export function otherLabWatchOnceLoaded(
  scenario: { name: string; lab: string },
  own: ConsumerSignature,
  loadOthers: () => Promise<readonly LabSigned[]>,
  entries: () => readonly JournalEntry[],
  found: (finding: Finding) => void,
): { see: (entry: JournalEntry) => void; settled: () => Promise<void> } {
  let watch: ((entry: JournalEntry) => Finding | undefined) | undefined;
  let loading: Promise<void> | undefined;
  const mayShowOtherLab = otherLabHint(own);
  const look = (entry: JournalEntry): void => {
    const finding = watch?.(entry);
    if (finding) found(finding);
  };
  const load = (): void => {
    loading = loadOthers().then((others) => {
      watch = others.length > 0 ? otherLabWatch(scenario, own, others) : () => undefined;
      for (const written of entries()) look(written);
    });
    loading.catch(() => {}); // the verdict awaits it and reports its failure
  };
  const see = (entry: JournalEntry): void => {
    if (watch) look(entry);
    else if (mayShowOtherLab(entry) && !loading) load();
  };
  return { see, settled: () => loading ?? Promise.resolve() };
}

/**
 * Whether otherLabWatch could find anything in an entry, fed every entry in order: a consumer
 * connection's first line that is not its own lab's, or a consumer's exit 64.
 */
function otherLabHint(own: ConsumerSignature): (entry: JournalEntry) => boolean {
  const unheard = new Set<string>();
  return (entry) => {
    if (entry.type === 'wire') {
      const key = `${entry.stream}/${entry.conn}`;
      if (entry.kind === 'open' && entry.owner?.role === 'consumer') unheard.add(key);
      return entry.kind === 'recv' && unheard.delete(key) && !own.opens(entry.line);
    }
    return entry.type === 'process-exit' && entry.role === 'consumer' && entry.code === EXIT_ENV;
  };
}

/**
 * The verdict of a run ended by that finding: it alone (the lab's checker is not asked: every
 * other observation is a consequence of the wrong protocol), nothing compared.
 */
export function otherLabVerdict(finding: Finding): Verdict {
  return {
    status: 'fail',
    headline: finding.text,
    findings: [finding],
    harnessErrors: [],
    diff: [],
    state: {
      id: 'state',
      title: 'Final state',
      columns: [],
      rows: [],
      empty: "Not compared: the consumer speaks another lab's protocol, so the run was stopped.",
    },
    tables: [],
  };
}
