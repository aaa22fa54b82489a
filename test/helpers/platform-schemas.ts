// Every platform file the grader writes, checked against the platform's specification
// (JSON Schemas transcribed from it in test/fixtures/platform-schemas/) and PrairieLearn's 1 MB limit.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { PRAIRIELEARN_LIMIT } from '../../harness/grade/platforms/prairielearn.js';

const dir = join(import.meta.dirname, '..', 'fixtures', 'platform-schemas');
const ajv = new Ajv({ allErrors: true, strict: false });
const gradescope = ajv.compile(JSON.parse(readFileSync(join(dir, 'gradescope-results.schema.json'), 'utf8')));
const prairielearn = ajv.compile(JSON.parse(readFileSync(join(dir, 'prairielearn-results.schema.json'), 'utf8')));

/** What is wrong with a file's text by its platform's specification ([] when nothing). */
export function platformProblems(platform: 'gradescope' | 'prairielearn', text: string): string[] {
  const validate = platform === 'gradescope' ? gradescope : prairielearn;
  const problems = validate(JSON.parse(text)) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(top)'} ${e.message ?? ''}`);
  if (platform === 'prairielearn' && Buffer.byteLength(text) > PRAIRIELEARN_LIMIT) problems.push(`${Buffer.byteLength(text)} bytes, over 1 MB`);
  return problems;
}
