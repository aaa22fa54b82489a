// Not graded is not failing: the status the grader gives a submission when the grading, not the
// submission, decides it (an interrupt, a harness error), and the counts class.json carries.
import t from 'tap';
import { type RunOutcome, scoreSubmission } from '../../../harness/grade/score.js';
import { gradingStatus, notStarted, statusCounts, statusOf } from '../../../harness/grade/status.js';
import { smallClass, smallRubric } from '../../helpers/grade.js';

const rubric = smallRubric();
const pass: RunOutcome = { status: 'pass', reasons: [] };
const broken: RunOutcome = { status: 'error', reasons: ['EPIPE in the harness'] };

t.test('a harness error: not graded, naming the scenarios where it happened', async (t) => {
  const score = scoreSubmission(
    'dan',
    rubric,
    new Map([
      ['happy-path', [pass]],
      ['duplicate-delivery', [pass, broken, pass]],
      ['sigkill-storm', [pass]],
    ]),
    'x',
  );
  const judged = gradingStatus(score, true, undefined);
  t.equal(statusOf(judged), 'harness-error');
  t.match(judged.notGraded!.reason, /^a run of duplicate-delivery ended in a harness error: the grader failed there, not the submission/);
  t.equal(judged.score, score.score, 'the score itself is left as the runs gave it');
  t.equal(statusOf(gradingStatus(score, false, undefined)), 'graded', 'no harness error: graded');
});

t.test('an interrupt: the submission being graded and those never reached are not graded', async (t) => {
  const [alice, , carol] = smallClass().submissions;
  t.match(gradingStatus(alice!, false, 'SIGTERM').notGraded, { kind: 'interrupted', reason: /interrupted \(SIGTERM\) while this submission was graded/ });
  // A build stopped by the interrupt failed because of it.
  t.equal(statusOf(gradingStatus(carol!, false, 'SIGINT')), 'interrupted');
  const manifest = { ...carol!, notGraded: { kind: 'manifest' as const, reason: 'no manifest' } };
  t.equal(statusOf(gradingStatus(manifest, false, 'SIGINT')), 'manifest', 'a reason of its own stands');
  const never = notStarted('erin', rubric, 'SIGINT');
  t.match(never, {
    submission: 'erin',
    score: 0,
    notGraded: { kind: 'interrupted', reason: 'grading was interrupted (SIGINT) before this submission was graded' },
  });
});

t.test('counts: graded and not graded, by kind', async (t) => {
  const subs = [...smallClass().submissions, notStarted('erin', rubric, 'SIGINT')];
  t.same(statusCounts(subs), { submissions: 4, graded: 2, notGraded: 2, byStatus: { graded: 2, 'build-failed': 1, interrupted: 1 } });
});
