// The feed lab's mutants (consumer/feed/mutants/index.yaml) as processes for
// test/consumer/feed/mutants.test.ts, the reference of each language beside them, and the reconnect waits
// a scripted server sees. Not a test file itself (.taprc runs test/*.test.ts).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Consumer } from './consumer-rig.js';
import { FEED_PY, FEED_TS, type FeedConn, ROOT } from './feed-rig.js';

export type FeedLang = 'typescript' | 'python';

export interface FeedMutantEntry {
  name: string;
  languages: FeedLang[];
}

/** Every mutant index.yaml lists, with its languages, in the index's order. */
export const FEED_MUTANTS: readonly FeedMutantEntry[] = (
  parse(readFileSync(join(ROOT, 'consumer/feed/mutants/index.yaml'), 'utf8')) as { mutants: FeedMutantEntry[] }
).mutants.map((m) => ({ name: m.name, languages: m.languages }));

const REFERENCES: Record<FeedLang, Consumer> = {
  typescript: { ...FEED_TS, name: 'reference [typescript]' },
  python: { ...FEED_PY, name: 'reference [python]' },
};

/** The reference consumer of a language (FEED_TEST_TS / FEED_TEST_PY still point it elsewhere). */
export const feedReference = (lang: FeedLang): Consumer => REFERENCES[lang];

/**
 * A mutant as a process. FEED_MUTANTS_AS_REFERENCES=1 runs the reference of its language in its
 * place, under the mutant's name: every direct test must then fail (each guards its bug), while
 * every happy run still passes.
 */
export function feedMutant(name: string, lang: FeedLang): Consumer {
  const label = `mutant ${name} [${lang}]`;
  if (process.env.FEED_MUTANTS_AS_REFERENCES === '1') return { ...REFERENCES[lang], name: label };
  return lang === 'typescript'
    ? { name: label, command: process.execPath, args: [join(ROOT, `dist/consumer/feed/mutants/${name}.js`)] }
    : { name: label, command: 'python3', args: [join(ROOT, `consumer/feed/mutants/${name}.py`)] };
}

// ---------------------------------------------------------------- reconnect waits on the wire

export interface Wait {
  /** The contract's n for this attempt: consecutive attempts since a connection delivered. */
  n: number;
  /** min(BASE x 2^n, CAP): the wait is step x U, U in [0.5, 1.5]. */
  step: number;
  /** From the server's close of one connection to its accept of the next. */
  ms: number;
}

/**
 * The waits between the server closing each of the first `count` connections and accepting the
 * next one, each with the n and step the contract gives it (n back to 0 after a connection in
 * `delivered`). Scheduling only lengthens them: the consumer sees the close after the server
 * made it, and the server sees the connect after it was made.
 */
export function reconnectWaits(conns: readonly FeedConn[], count: number, backoff: { base: number; cap: number; delivered: ReadonlySet<number> }): Wait[] {
  const waits: Wait[] = [];
  let n = -1;
  for (let k = 0; k < count; k++) {
    n = backoff.delivered.has(k) ? 0 : n + 1;
    const [closed, next] = [conns[k], conns[k + 1]];
    if (!closed || !next) break;
    waits.push({ n, step: Math.min(backoff.base * 2 ** n, backoff.cap), ms: next.openedAt - closed.serverClosedAt });
  }
  return waits;
}

/** "n=0 23 ms (step 20), …" for assertion messages. */
export const showWaits = (waits: readonly Wait[]): string => waits.map((w) => `n=${w.n} ${Math.round(w.ms)} ms (step ${w.step})`).join(', ');
