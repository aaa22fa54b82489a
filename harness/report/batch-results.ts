// results.json: a batch for machines — its name, times and totals, then each run's record as
// `--reporter json` prints it (run-json.ts), drawn from the run's verdict (schema:
// docs/reports.md). Paths are relative to the batch folder, so the folder can be moved or
// uploaded as a CI artifact whole.

import type { BatchView } from './batch-view.js';
import { runJson } from './run-json.js';
import { jsonText } from '../text/inert.js';

/** Bumped when a field changes meaning or goes away (new fields do not bump it). */
export const RESULTS_SCHEMA = 1;

export function renderBatchResults(view: BatchView): string {
  const data = {
    schema: RESULTS_SCHEMA,
    batch: view.name,
    startedAt: view.startedAt,
    endedAt: view.endedAt,
    commandLine: view.commandLine,
    totals: { runs: view.runs.length, ...view.totals, notStarted: view.notStarted?.length ?? 0 },
    runs: view.runs.map((run) => runJson(run.view, run.runDir, { label: run.label, base: view.dir })),
    /** Never started: an interrupt came first. */
    notStarted: view.notStarted ?? [],
    ...(view.sections?.length ? { sections: view.sections } : {}),
  };
  return jsonText(data);
}
