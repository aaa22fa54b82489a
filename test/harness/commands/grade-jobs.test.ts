// `chaoslab grade` without --jobs: as many runs at once as the machine has processors (times the
// rubric's jobs_per_processor), never more than a submission has runs, and at least one.
import t from 'tap';
import { jobsFor } from '../../../harness/commands/grade-action.js';

const rubric = (...repeats: number[]) => ({ tests: repeats.map((repeat) => ({ repeat })) }) as Parameters<typeof jobsFor>[0];

t.equal(jobsFor(rubric(1, 1, 1, 1), 2), 2, 'four runs on two processors: two at a time');
t.equal(jobsFor(rubric(3), 8), 3, 'no more than the runs there are');
t.equal(jobsFor(rubric(1, 2, 2), 16), 5, 'repeats count');
t.equal(jobsFor(rubric(), 4), 1, 'at least one');
t.equal(jobsFor({ ...rubric(1, 1, 1, 1, 1, 1), jobsPerProcessor: 2 }, 2), 4, "two per processor where the rubric's runs mostly wait");
t.equal(jobsFor({ ...rubric(1, 1, 1), jobsPerProcessor: 2 }, 2), 3, 'still no more than the runs');
t.ok(jobsFor(rubric(100)) >= 1, "the machine's own count by default");
