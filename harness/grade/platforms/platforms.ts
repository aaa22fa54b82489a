// The one place where a grading platform is added: each platform is a function from a
// submission's GradeData to the text of one file, for the student's folder (<out>/<name>/) and,
// where the platform keeps staff-only parts from students itself, a fuller one for upload in the
// staff folder (<out>/.staff/<name>/). Files are written atomically (a temporary file in the same
// folder, then a rename), so a reader — or a platform's timeout — only ever finds a whole file.

import { join } from 'node:path';
import { jsonText } from '../../text/inert.js';
import type { GradeData } from './grade-data.js';
import { gradescopeResults } from './gradescope.js';
import { submissionJunit } from './junit.js';
import { prairieLearnResults } from './prairielearn.js';
import { writeAtomically } from '../../report/write-atomically.js';

export interface Platform {
  name: string;
  file: string;
  /** The file a student may be handed. */
  student: (data: GradeData) => string;
  /** The file to upload, with staff-only parts the platform hides from students (in the staff folder). */
  staff?: (data: GradeData) => string;
}

export const PLATFORMS: readonly Platform[] = [
  {
    name: 'Gradescope',
    file: 'results.json',
    student: (data) => jsonText(gradescopeResults(data, 'student')),
    staff: (data) => jsonText(gradescopeResults(data, 'platform')),
  },
  { name: 'PrairieLearn', file: 'prairielearn.json', student: (data) => jsonText(prairieLearnResults(data)) },
  { name: 'JUnit', file: 'junit.xml', student: (data) => submissionJunit(data.score, data.rubric, data.sealing) },
];

/** Every platform's files of one submission. */
export function writePlatformFiles(studentDir: string, staffDir: string, data: GradeData): void {
  for (const platform of PLATFORMS) {
    writeAtomically(join(studentDir, platform.file), platform.student(data), 0o600);
    if (platform.staff) writeAtomically(join(staffDir, platform.file), platform.staff(data), 0o600);
  }
}
