// make bench §10: grading one submission, each lab's TypeScript reference, with the lab's
// rubric at `chaoslab grade`'s own default --jobs, sealed where the machine allows, as staff run
// it (no build step: `--consumer` names the built reference; `--unsealed` where this
// machine cannot seal, as staff would have to, and the note says so). Its floor is the rubric's
// scenarios as one `chaoslab run` batch at the same --jobs: the runs alone, so the ratio is what
// grading adds (workspace, build cache, outputs). One sample each: they take 20–70 s.
import { join } from 'node:path';
import { jobsFor } from '../dist/harness/commands/grade-action.js';
import { readClassReport } from '../dist/harness/grade/class/class-data.js';
import { loadRubric } from '../dist/harness/grade/rubric.js';
import { probeSealing } from '../dist/harness/sandbox/probe.js';
import { summarize, withFloorVerdict } from '../dist/harness/bench/figures.js';
import { cli, inTurns, root, timed, TS_REFERENCE } from './measure.mjs';

const CASES = [
  { lab: 'ledger', consumer: TS_REFERENCE, goalSeconds: 20 },
  { lab: 'feed', consumer: ['node', join(root, 'dist', 'consumer', 'feed', 'typescript', 'client.js')], goalSeconds: 45 },
];

/** `fresh(name)`: a new folder for one run's output; `quick`: skip (a row that says so). */
export async function gradingFigures({ quick, fresh, log }) {
  const figures = [];
  // Grading refuses to run unsealed unless told: where sealing is unavailable it is told, as staff would.
  const sealFlags = quick || (await probeSealing()).available ? [] : ['--unsealed'];
  for (const c of CASES) {
    const name = `one ${c.lab} submission (the TypeScript reference), grade's default --jobs`;
    const goals = [{ kind: 'max', limit: c.goalSeconds }];
    if (quick) {
      figures.push({ section: '10 grading', name, unit: 's', goals, note: 'skipped (BENCH_QUICK=1 / --quick)' });
      continue;
    }
    const rubric = loadRubric(join(root, 'rubrics', `${c.lab}.yaml`), ['ledger', 'feed']);
    const jobs = jobsFor(rubric);
    const scenarios = rubric.tests.map((test) => test.name);
    const command = c.consumer.join(' ');
    log(`§10 grading one ${c.lab} submission (--jobs ${jobs} by default), and its ${scenarios.length} scenarios as a batch`);
    /** What the grading wrote (class.json), once it exited 0. */
    let report;
    const [graded, batch] = await inTurns(1, [
      async () => {
        const out = fresh('grade');
        const r = await timed(['node', cli, 'grade', '--consumer', command, '--lab', c.lab, '--out', out, ...sealFlags]);
        if (r.code === 0) report = readClassReport(out);
        return r;
      },
      () => timed(['node', cli, 'run', ...scenarios, '--consumer', command, '--jobs', String(jobs), '-q', '--out', fresh('grade-floor')]),
    ]);
    // A grading that did not finish has no time to show: its figure says why instead of a time.
    if (graded[0].code !== 0) {
      const why = graded[0].stderr.trim().split('\n').at(-1) ?? '';
      figures.push({ section: '10 grading', name, unit: 's', goals, note: `grade exited ${graded[0].code}: ${why}` });
      continue;
    }
    const [submission] = report.submissions;
    // Grading makes these runs: a batch of them over the goal rules it out on this machine.
    figures.push(
      withFloorVerdict({
        section: '10 grading',
        name,
        unit: 's',
        value: summarize(graded.map((r) => r.seconds)),
        floor: { name: `its rubric's ${scenarios.length} scenarios as one run batch, --jobs ${jobs}`, value: summarize(batch.map((r) => r.seconds)) },
        goals,
        note: `one run each (long); --jobs ${jobs}; sealed: ${report.sealing.sealed ? 'yes' : 'no'}; score ${submission.score} of ${submission.max}; the batch exited ${batch[0].code}`,
      }),
    );
  }
  return figures;
}
