// scripts/check-function-length.mjs (make lint): a function whose body spans more than 80 lines
// fails unless the comment above it says why it is long; a nested one counts on its own and in
// the function around it; --skip leaves a folder out; --known tolerates a listed one and fails on
// a listed one that is not long any more.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
// In this process: each run as a child loaded TypeScript again, with coverage (some 4 s each under load).
import { checkFunctionLength } from '../../scripts/check-function-length.mjs';

const lines = (n: number, indent: string): string => Array.from({ length: n }, (_, i) => `${indent}x += ${i};`).join('\n');

async function check(cwd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  const { code, stdout } = checkFunctionLength(args, cwd);
  return { code, stdout: stdout.map((line) => `${line}\n`).join('') };
}

const source = `/**
 * Long because a table of cases reads best in one piece.
 */
export function reasoned(): number {
  let x = 0;
${lines(85, '  ')}
  return x;
}

export function short(): number {
  let x = 0;
${lines(70, '  ')}
  return x;
}

export const arrow = (): number => {
  let x = 0;
${lines(85, '  ')}
  return x;
};

class Holder {
  method(): number {
    let x = 0;
${lines(85, '    ')}
    return x;
  }
}

export function outer(): number {
  const step = () => {
    let y = 0;
    let x = 0;
${lines(45, '    ')}
    return x + y;
  };
  let x = step();
${lines(40, '  ')}
  return x;
}
export { Holder };
`;

t.test('long functions fail with file:line name N lines, unless a reason is given', async (t) => {
  const dir = t.testdir({ lab: { 'a.ts': source }, other: { 'b.ts': source } });
  const { code, stdout } = await check(dir, ['lab']);
  t.equal(code, 1);
  t.same(stdout.trim().split('\n'), ['lab/a.ts:169 arrow 89 lines', 'lab/a.ts:260 Holder.method 89 lines', 'lab/a.ts:351 outer 94 lines']);
  t.notMatch(stdout, /reasoned|short|step/, 'a reason, a short function and a short nested step pass');
});

t.test('--skip leaves a folder out; a clean tree passes', async (t) => {
  const dir = t.testdir({ lab: { 'a.ts': 'export const f = (): number => 1;\n' }, consumer: { 'b.ts': source } });
  t.equal((await check(dir, ['lab', 'consumer'])).code, 1);
  t.same(await check(dir, ['--skip', 'consumer', 'lab', 'consumer']), { code: 0, stdout: '' });
});

t.test('--known tolerates the functions it lists, and fails on a line that names no long function', async (t) => {
  const dir = t.testdir({ lab: { 'a.ts': source } });
  const known = join(dir, 'known.txt');
  writeFileSync(known, '# still to split\nlab/a.ts arrow\nlab/a.ts Holder.method\nlab/a.ts outer\n');
  t.same(await check(dir, ['--known', known, 'lab']), { code: 0, stdout: '' });
  writeFileSync(known, 'lab/a.ts arrow\nlab/a.ts Holder.method\nlab/a.ts outer\nlab/a.ts short\n');
  const stale = await check(dir, ['--known', known, 'lab']);
  t.equal(stale.code, 1);
  t.match(stale.stdout, /lab\/a\.ts short is not over 80 lines any more/);
});

t.test('the command line: what it finds on stdout, the count on stderr, exit 1', async (t) => {
  const dir = t.testdir({ lab: { 'a.ts': source } });
  const out = spawnSync(process.execPath, [resolve('scripts/check-function-length.mjs'), 'lab'], { cwd: dir, encoding: 'utf8' });
  t.equal(out.status, 1);
  t.match(out.stdout, /^lab\/a\.ts:169 arrow 89 lines\n/);
  t.match(out.stderr, /^3 function\(s\) over 80 lines without a "Long because" line/);
});
