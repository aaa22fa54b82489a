// results.json: a batch for machines — every run's status, leading finding and findings, as the
// run's verdict says them (schema: docs/reports.md). Paths are relative to the batch folder, so
// the folder can be moved or uploaded as a CI artifact whole.

import { type BatchView, runPath } from './batch-view.js';
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
    runs: view.runs.map((run) => {
      const x = run.view;
      return {
        label: run.label,
        scenario: x.name,
        lab: x.protocol,
        consumer: x.consumerCommand,
        status: x.status,
        durationMs: Math.round(x.durationMs),
        runDir: runPath(view, run),
        headline: x.headline,
        findings: x.findings.map((f) => ({ code: f.code, text: f.text, ...(f.subject ? { subject: f.subject } : {}) })),
        harnessErrors: x.harnessErrors.map((f) => ({ code: f.code, text: f.text })),
        stderrTail: x.stderrTail ? { incarnation: x.stderrTail.incarnation, lines: x.stderrTail.lines } : null,
      };
    }),
    /** Never started: an interrupt came first. */
    notStarted: view.notStarted ?? [],
    ...(view.sections?.length ? { sections: view.sections } : {}),
  };
  return jsonText(data);
}
