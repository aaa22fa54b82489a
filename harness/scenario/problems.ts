// A problem in a scenario file, as the user sees it: file:line:col, the dotted field, the words.
// Checks produce raw problems (a path of keys and indexes into the document); load.ts turns them
// into positions once the YAML is at hand.

import path from 'node:path';

export type Segment = string | number;

export interface RawProblem {
  segments: Segment[];
  /** Where to point: the key of the last segment, or its value. */
  at: 'key' | 'value';
  message: string;
  /** The field named in the message when it is not `segments` (a missing key). */
  field?: Segment[];
}

export interface ScenarioProblem {
  /** The file as shown to the user: relative to the working directory when inside it. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** Dotted path such as `consumer.incarnations[0].fault`; '' for the file as a whole. */
  field: string;
  message: string;
}

export class ScenarioError extends Error {
  readonly problems: ScenarioProblem[];

  constructor(problems: ScenarioProblem[], message?: string) {
    super(message ?? problems.map(formatProblem).join('\n'));
    this.name = 'ScenarioError';
    this.problems = problems;
  }
}

export function formatProblem(p: ScenarioProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

/** `consumer.incarnations[0].fault` from its segments. */
export function fieldOf(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}

/** A path as the user should see it: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.resolve(file);
}

/** The candidate within edit distance 2 of `word` (closest first), if any. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
