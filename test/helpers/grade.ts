// A small rubric and class for the grading tests, and grades.csv as course staff's scripts read it.
import { spawnSync } from 'node:child_process';
import { type ClassReport, CLASS_SCHEMA } from '../../harness/grade/class/class-data.js';
import { checkRubric, type Rubric } from '../../harness/grade/rubric.js';
import { type RunOutcome, scoreSubmission, ungradable } from '../../harness/grade/score.js';

export const smallRubric = (): Rubric =>
  checkRubric(
    {
      lab: 'ledger',
      scenarios: [
        { name: 'happy-path', points: 1, feedback: '§3: read and apply' },
        { name: 'duplicate-delivery', points: 2, feedback: '§3: a duplicate is acknowledged, not applied', repeat: 3, rate: 'all' },
        { name: 'sigkill-storm', points: 3, feedback: '§4: crash-safe', visibility: 'after_due_date' },
      ],
    },
    'rubrics/small.yaml',
    ['ledger'],
  );

const pass: RunOutcome = { status: 'pass', reasons: [] };
const fail = (why: string): RunOutcome => ({ status: 'fail', reasons: [why, `${why} (again)`], runDir: `/runs/${why}` });

export function smallClass(sealed = true): ClassReport {
  const rubric = smallRubric();
  const full = scoreSubmission(
    'alice',
    rubric,
    new Map([
      ['happy-path', [pass]],
      ['duplicate-delivery', [pass, pass, pass]],
      ['sigkill-storm', [pass]],
    ]),
    'chaoslab.json: `x`',
  );
  const rare = scoreSubmission(
    'bob',
    rubric,
    new Map([
      ['happy-path', [pass]],
      ['duplicate-delivery', [pass, fail('seq 3 applied twice'), pass]],
      ['sigkill-storm', [fail('secret finding')]],
    ]),
    'chaoslab.yaml: `y`',
  );
  const why = 'the build `make` failed (exit status 2); see build.log';
  const broken = { ...ungradable('carol', rubric, 'chaoslab.yaml: `z`', why), notGraded: { kind: 'build-failed' as const, reason: why } };
  return {
    schema: CLASS_SCHEMA,
    lab: 'ledger',
    rubric: rubric.tests.map((t) => ({ name: t.name, points: t.points, visibility: t.visibility, repeat: t.repeat })),
    sealing: sealed ? { sealed: true, note: 'sealed mode on' } : { sealed: false, note: 'sealed mode not available (running as uid 1000)' },
    submissions: [full, rare, broken],
    skipped: [],
  };
}

/** The CSV as Python's csv.DictReader reads it (what course staff's scripts do): one dict per row, and the field names. */
export function dictReader(text: string): { fields: string[]; rows: Record<string, string>[] } {
  const py =
    'import csv,io,json,sys; r=csv.DictReader(io.StringIO(sys.stdin.read(), newline="")); rows=list(r); print(json.dumps({"fields": r.fieldnames, "rows": rows}))';
  const out = spawnSync('python3', ['-c', py], { input: text, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`python3 csv.DictReader failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as { fields: string[]; rows: Record<string, string>[] };
}
