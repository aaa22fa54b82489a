// merge-reports: the class reports of several shards joined into one. They must have been
// graded with the same rubric; a submission in two of them is an error, never a silent pick.

import type { ClassReport } from './class-data.js';
import { CLASS_SCHEMA } from './class-data.js';

export function mergeClassReports(parts: readonly { dir: string; report: ClassReport }[]): ClassReport {
  if (parts.length === 0) throw new Error('merge-reports needs at least one folder');
  const first = parts[0]!;
  const rubricKey = (r: ClassReport) => JSON.stringify([r.lab, r.rubric]);
  const seen = new Map<string, string>();
  for (const part of parts) {
    if (rubricKey(part.report) !== rubricKey(first.report))
      throw new Error(`${part.dir} was graded with another rubric than ${first.dir} (lab or scenarios differ)`);
    for (const sub of part.report.submissions) {
      const other = seen.get(sub.submission);
      if (other !== undefined) throw new Error(`submission "${sub.submission}" is in both ${other} and ${part.dir}`);
      seen.set(sub.submission, part.dir);
    }
  }
  const unsealed = parts.find((p) => !p.report.sealing.sealed);
  return {
    schema: CLASS_SCHEMA,
    lab: first.report.lab,
    rubric: first.report.rubric,
    sealing: unsealed ? unsealed.report.sealing : first.report.sealing,
    submissions: parts.flatMap((p) => p.report.submissions).sort((a, b) => (a.submission < b.submission ? -1 : a.submission > b.submission ? 1 : 0)),
    skipped: mergedSkipped(parts.map((p) => p.report)),
  };
}

/** Every shard's skipped entries, each once (a shard lists only its own; shards of other runs may repeat one). */
function mergedSkipped(reports: readonly ClassReport[]): ClassReport['skipped'] {
  const seen = new Map(reports.flatMap((r) => r.skipped).map((s) => [JSON.stringify([s.name, s.reason]), s] as const));
  return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (a.reason < b.reason ? -1 : 1));
}
