// A submission's build as grading does it: from the build cache when an identical build is kept
// there (build-key.ts, build-cache.ts), else run (build.ts: sealed as a slot's uid) and kept.
// Either way the copy ends the same: sealed, root's and read-only (a cached tree is copied into
// the workspace copy and made read-only exactly as a fresh build's output is), and its build.log
// written to the student's and the staff's folders. What happened is data (BuildRecord) for the
// grader's output and class.json.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { leaseUid } from '../../sandbox/uids.js';
import { makeReadOnly, runBuild } from './build.js';
import type { BuildCache } from './build-cache.js';
import { copyTree } from './build-cache.js';
import { type BuildConditions, buildKey } from './build-key.js';

/** How a submission's build went: taken from the cache (by its key), or run (how long it took). */
export type BuildRecord = { cached: true; key: string; buildMs: number } | { cached: false; key?: string; buildMs: number; notKept?: string };

export interface SubmissionBuildRequest extends BuildConditions {
  /** The workspace copy: built in place, or replaced by the cached build. */
  copy: string;
  deadlineMs: number;
  logFile: string;
  staffLogFile: string;
  signal?: AbortSignal;
  /** Absent: --no-build-cache. */
  cache?: BuildCache;
  /** Called when the build is run (not taken from the cache). */
  onRun?: () => void;
}

export type BuildOutcome = { ok: true; record: BuildRecord } | { ok: false; reason: string };

export async function buildSubmission(req: SubmissionBuildRequest): Promise<BuildOutcome> {
  const key = req.cache ? buildKey(req.copy, req) : undefined;
  const hit = key ? req.cache!.lookup(key) : undefined;
  if (hit) {
    rmSync(req.copy, { recursive: true, force: true });
    copyTree(hit.tree, req.copy);
    if (req.sealed) makeReadOnly(req.copy);
    const log = `chaoslab: build cached (${key}): the output of an identical build (${seconds(hit.buildMs)}), reused; its log follows\n${hit.log}`;
    for (const file of [req.logFile, req.staffLogFile]) writeFileSync(file, log);
    return { ok: true, record: { cached: true, key: hit.key, buildMs: hit.buildMs } };
  }
  req.onRun?.();
  const started = performance.now();
  const lease = req.sealed ? leaseUid(0) : undefined;
  let built: Awaited<ReturnType<typeof runBuild>>;
  try {
    built = await runBuild({
      command: req.command,
      dir: req.copy,
      deadlineMs: req.deadlineMs,
      logFile: req.logFile,
      staffLogFile: req.staffLogFile,
      network: req.network,
      ...(req.signal ? { signal: req.signal } : {}),
      ...(lease ? { uid: lease.uid } : {}),
    });
  } finally {
    lease?.release();
    // Sealed, the copy is handed back to root and made read-only whatever the build did, so the
    // consumer's uid cannot change it and no later process of that uid owns anything in it.
    // Unsealed, it runs as the grader's user, who may change modes back: read-only bits would
    // only keep the grader itself from removing its output (every output says unsealed).
    if (req.sealed) makeReadOnly(req.copy);
  }
  const buildMs = Math.round(performance.now() - started);
  if (!built.ok) return { ok: false, reason: built.reason! };
  // Kept before any run: what is cached is what the build made, nothing a consumer did.
  const notKept = key ? req.cache!.store(key, req.copy, { log: readFileSync(req.logFile, 'utf8'), buildMs }) : undefined;
  if (notKept) writeFileSync(req.staffLogFile, `${readFileSync(req.logFile, 'utf8')}chaoslab: not kept in the build cache: ${notKept}\n`);
  return { ok: true, record: { cached: false, ...(key ? { key } : {}), buildMs, ...(notKept ? { notKept } : {}) } };
}

/** The grader's line for a build: "build: cached (sha256 ab12cd34ef56…)" or "build: 12.3 s". */
export function buildWords(record: BuildRecord): string {
  if (record.cached) return `build: cached (sha256 ${record.key.replace(/^sha256:/, '').slice(0, 12)}…)`;
  return `build: ${seconds(record.buildMs)}${record.notKept ? ` (not kept in the build cache: ${record.notKept})` : ''}`;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
