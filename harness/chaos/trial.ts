// One schedule, run: written as an ordinary scenario file (so what ran is exactly what a repro
// replays), loaded and checked like any other, then run by the usual runner into the chaos
// batch's folder. The verdict is the checker's: a chaos run judges nothing itself.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Lab } from '../lab-api/lab.js';
import type { RunStatus, RunView } from '../report/view.js';
import { runScenario } from '../run/runner.js';
import { loadScenario } from '../catalogue/load.js';
import type { SealMode } from '../run/sealing.js';
import { findingTexts } from '../findings/verdict.js';
import { type FaultCoverage, onlyUntested } from '../findings/coverage.js';
import type { ChaosModel, ChaosWhere } from '../lab-api/chaos-model.js';

export interface TrialRequest {
  lab: Lab;
  model: ChaosModel;
  schedule: unknown;
  where: ChaosWhere;
  /** The scenario's name, and its file's: `run-7`, `run-7-again`, `shrink-3`. */
  name: string;
  description: string;
  batchDir: string;
  /** The consumer under test; with `serverCommand`, the probes' (the lab's reference, not given to the run). */
  consumerCommand: string;
  /** `chaos --server`: the push server under test (the schedules are the lab's server model's). */
  serverCommand?: string;
  cwd: string;
  seal?: SealMode;
  toxiproxyUrl?: string;
  storeLimitBytes?: number;
  signal?: AbortSignal;
  invokedAs?: string;
}

export interface Trial {
  name: string;
  status: RunStatus;
  /** The leading finding (or the harness's error). */
  headline: string;
  reasons: string[];
  /** Its findings' codes, leading first (none for a pass or a harness error): a shrink keeps the failure's kind. */
  codes?: string[];
  /** Whether each fault took effect (the lab's checker's rows; none for a run without a verdict). */
  coverage: FaultCoverage[];
  /** An ERROR only because a fault took no effect: the run tested nothing about it, the consumer met the rest and passed. */
  untested: boolean;
  runDir: string;
  file: string;
  durationMs: number;
  /** The run as its reports show it (for the batch overview). */
  view: RunView;
}

/** The scenario file's text for a schedule: the lab's part, with name, description and protocol in front. */
export function scenarioText(
  model: ChaosModel,
  schedule: unknown,
  where: ChaosWhere,
  head: { name: string; description: string; lab: string },
  extra: Record<string, unknown> = {},
): string {
  // A lab's own words (the feed lab's loader wants every description to say what virtual time stands for) follow the core's.
  const { description: more, ...lab } = model.scenario(schedule, where);
  const description = typeof more === 'string' && more ? `${head.description.replace(/([^.!?])$/, '$1.')} ${more}` : head.description;
  const body = { name: head.name, description, protocol: head.lab, ...extra, ...lab };
  return stringify(body, { lineWidth: 0 });
}

export async function runTrial(req: TrialRequest): Promise<Trial> {
  const dir = join(req.batchDir, 'schedules');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${req.name}.yaml`);
  writeFileSync(file, scenarioText(req.model, req.schedule, req.where, { name: req.name, description: req.description, lab: req.lab.name }));
  // A schedule that makes no valid scenario is the lab's bug: loadScenario says which field.
  const scenario = loadScenario(file);
  const started = Date.now();
  const result = await runScenario({
    scenario,
    ...(req.serverCommand === undefined ? { consumerCommand: req.consumerCommand } : { serverCommand: req.serverCommand }),
    cwd: req.cwd,
    reportsDir: req.batchDir,
    latest: false,
    ...(req.seal ? { seal: req.seal } : {}),
    ...(req.toxiproxyUrl ? { toxiproxyUrl: req.toxiproxyUrl } : {}),
    ...(req.storeLimitBytes ? { storeLimitBytes: req.storeLimitBytes } : {}),
    ...(req.signal ? { signal: req.signal } : {}),
    ...(req.invokedAs ? { invokedAs: req.invokedAs } : {}),
  });
  const reasons = result.error ? [result.error] : result.verdict ? findingTexts(result.verdict) : [];
  return {
    name: req.name,
    status: result.status,
    headline: result.view.headline,
    reasons,
    codes: result.verdict?.findings.map((f) => f.code) ?? [],
    coverage: result.verdict?.coverage ?? [],
    untested: result.verdict ? onlyUntested(result.verdict) : false,
    runDir: result.runDir,
    file,
    durationMs: Date.now() - started,
    view: result.view,
  };
}
