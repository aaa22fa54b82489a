// Prints tap's final count as the plain closing line CI systems read ("N passed, N failed"),
// taken from tap's own summary (`# { total: 12, pass: 11, fail: 1, skip: 0 }`), after the failures
// themselves: CI often keeps only the end of a log, and a count alone does not say what to fix.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2] ?? '.tap/test-output.txt', 'utf8');
const lines = text.split('\n');

// Each `not ok` with its YAML diagnostic block (indented `---` … `...`), a few lines of it.
const failures = [];
for (let i = 0; i < lines.length; i++) {
  if (!/^\s*not ok \d+/.test(lines[i])) continue;
  failures.push(lines[i]);
  if (lines[i + 1]?.trim() !== '---') continue;
  let j = i + 2;
  for (; j < lines.length && lines[j].trim() !== '...' && j < i + 14; j++) failures.push(lines[j]);
  if (j < lines.length && lines[j].trim() !== '...') failures.push(`${' '.repeat(lines[i].search(/\S/) + 2)}…`);
}
if (failures.length > 0) console.log(`failures:\n${failures.join('\n')}`);

const last = [...text.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?(?:, skip: (\d+))?[^}]*\}/g)].at(-1);
if (!last) {
  console.log('tests: no tap summary found');
  process.exit(1);
}
const [, total, pass = '0', fail = '0', skip = '0'] = last;
console.log(`tests: ${pass} passed, ${fail} failed${Number(skip) ? `, ${skip} skipped` : ''}`);
if (Number(pass) + Number(fail) + Number(skip) !== Number(total)) console.log(`(tap counted ${total} in all, including todo)`);
