// Prints tap's final count as the plain closing line CI systems read ("N passed, N failed"),
// taken from tap's own summary (`# { total: 12, pass: 11, fail: 1, skip: 0 }`).
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2] ?? '.tap/test-output.txt', 'utf8');
const last = [...text.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?(?:, skip: (\d+))?[^}]*\}/g)].at(-1);
if (!last) {
  console.log('tests: no tap summary found');
  process.exit(1);
}
const [, total, pass = '0', fail = '0', skip = '0'] = last;
console.log(`tests: ${pass} passed, ${fail} failed${Number(skip) ? `, ${skip} skipped` : ''}`);
if (Number(pass) + Number(fail) + Number(skip) !== Number(total)) console.log(`(tap counted ${total} in all, including todo)`);
