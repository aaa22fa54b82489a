// summary.md: what a CI job summary or a pull-request comment shows. Rendered from the
// journal alone, so it can be re-rendered for any run folder, even an interrupted one.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JournalEntry, readJournal } from '../journal.js';
import type { Verdict } from '../labs/ledger/checker.js';
import { explainRun, timeScaleOf } from './html.js';

export function renderSummary(journal: JournalEntry[]): string {
  const start = journal.find((e) => e.type === 'run-start');
  const verdictEntry = journal.find((e) => e.type === 'verdict');
  const end = journal.find((e) => e.type === 'run-end');
  const errors = journal.filter((e) => e.type === 'harness-error').map((e) => e.message);
  const name = start?.scenario.name ?? 'unknown scenario';
  const status = end?.status ?? 'interrupted';
  const lines = [`# chaoslab: ${name} — ${status.toUpperCase()}`, ''];
  if (start) {
    lines.push(`${start.scenario.description}`, '');
    lines.push(`- run: \`${start.runId}\``, `- consumer: \`${start.consumerCommand}\``, `- scenario file: \`${start.scenario.file}\``);
    const tp = journal.find((e) => e.type === 'toxiproxy');
    if (tp) lines.push(`- toxiproxy: ${tp.version}`);
    const timeScale = timeScaleOf(journal);
    if (timeScale !== 1) lines.push(`- time compressed: nominal fault and restart durations ran ${timeScale} times as long (time_scale ${timeScale})`);
    lines.push('');
  }
  for (const message of errors) lines.push(`**Harness error:** ${message}`, '');
  if (verdictEntry) {
    const v = verdictEntry.details as Verdict;
    if (v.reasons.length || v.harnessErrors.length) {
      lines.push('## Why', '');
      for (const reason of [...v.harnessErrors, ...v.reasons]) lines.push(`- ${reason}`);
      const diff = explainRun(journal).diff;
      if (diff.length) lines.push('', '```', ...diff, '```');
      lines.push('');
    }
    lines.push('## Final state', '', '| | last | total | ledger rows |', '|---|---|---|---|');
    lines.push(`| expected (from the script) | ${v.expected.last} | ${v.expected.total} | ${v.expected.events} |`);
    lines.push(`| consumer under test | ${v.consumer.last ?? '—'} | ${v.consumer.total ?? '—'} | ${v.consumer.rows} |`);
    lines.push(`| control consumer | ${v.control.last ?? '—'} | ${v.control.total ?? '—'} | ${v.control.rows} |`, '');
    lines.push('## Incarnations', '', '| # | fault | RESUME | ACKs | exit |', '|---|---|---|---|---|');
    for (const f of v.incarnations) {
      const exit = !f.exit ? '—' : f.exit.killedBy ? `killed (${f.exit.killedBy})` : f.exit.signal ? f.exit.signal : String(f.exit.code);
      const acks =
        f.acks.length > 12
          ? `${f.acks
              .slice(0, 10)
              .map((a) => a.seq)
              .join(', ')}, … (${f.acks.length})`
          : f.acks.map((a) => a.seq).join(', ');
      lines.push(`| ${f.incarnation} | ${f.fault ?? ''} | ${f.resumes.join(', ')} | ${acks} | ${exit} |`);
    }
    lines.push('');
  } else if (status === 'interrupted') {
    lines.push('The run did not finish: this summary was rendered from a partial journal.', '');
  }
  return lines.join('\n');
}

export function writeSummary(runDir: string): void {
  writeFileSync(join(runDir, 'summary.md'), renderSummary(readJournal(join(runDir, 'journal.jsonl'))));
}
