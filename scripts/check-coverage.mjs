// Enforces line/branch coverage thresholds on the in-process modules after `tap`.
// tap 21 can only demand 100 % or nothing; this reads its json-summary report instead.
import { readFileSync } from 'node:fs';

const [lineMin, branchMin] = [Number(process.argv[2] ?? 85), Number(process.argv[3] ?? 75)];
const summary = JSON.parse(readFileSync('.tap/report/coverage-summary.json', 'utf8'));
const { lines, branches } = summary.total;
const ok = lines.pct >= lineMin && branches.pct >= branchMin;
console.log(`coverage of in-process modules: lines ${lines.pct} % (min ${lineMin}), branches ${branches.pct} % (min ${branchMin}) — ${ok ? 'ok' : 'TOO LOW'}`);
process.exit(ok ? 0 : 1);
