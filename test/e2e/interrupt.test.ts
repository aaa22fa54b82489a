// Ctrl-C is honest: the real CLI, a real batch, a real SIGINT to its process group (as a terminal
// sends it) once the first run's consumer is running. Nothing new starts; the running run is
// INTERRUPTED (never FAIL or ERROR); every report is written, the batch's junit.xml lists the
// rest as skipped; `latest` points at the batch; exit 130; no process, Toxiproxy or proxy left.
// And a single unsealed run stopped by SIGTERM (as CI sends it): exit 143, the same honesty.
import { execa, type ResultPromise } from 'execa';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../../harness/record/journal.js';
import { readJournal } from '../../harness/record/journal.js';
import { cli, root, survivors } from '../helpers/cli.js';

t.setTimeout(600_000);

/** Run folders (with a journal) under `dir`: a single run's, or a batch's one level down. */
function journals(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n !== 'latest')) {
    const sub = join(dir, name);
    if (existsSync(join(sub, 'journal.jsonl'))) found.push(sub);
    else if (statSync(sub).isDirectory())
      found.push(
        ...readdirSync(sub)
          .map((n) => join(sub, n))
          .filter((d) => existsSync(join(d, 'journal.jsonl'))),
      );
  }
  return found;
}

/** Waits (polling, however slow the machine) until some journal under `dir` shows a consumer process running. */
async function untilConsumerRuns(dir: string, child: ResultPromise, timeoutMs = 240_000): Promise<string> {
  let exited = false;
  void child.finally(() => (exited = true)).catch(() => {});
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    for (const runDir of journals(dir)) {
      const text = readFileSync(join(runDir, 'journal.jsonl'), 'utf8');
      if (/"type":"process-start","role":"consumer"/.test(text)) return runDir;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no consumer process started under ${dir} (${exited ? 'the CLI ended first' : 'timed out'})`);
}

/** Processes still alive in process group `pgid`, or whose command line, cwd or environment names `dir`. */
function leftovers(pgid: number, dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (Number(fields[2]) === pgid || cmd.includes(dir) || env.includes(dir)) out.push(`${pid} ${cmd}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** Every proxy the journal created was removed again. */
const proxiesLeft = (journal: JournalEntry[]): string[] => {
  const open = new Set<string>();
  for (const e of journal) if (e.type === 'proxy') e.action === 'create' ? open.add(e.name) : open.delete(e.name);
  return [...open];
};

function start(args: string[]) {
  // Its own process group (as a shell gives a foreground job), so a signal can go to the group.
  return execa('node', [cli, ...args], { cwd: root, reject: false, detached: true, timeout: 400_000, env: { NO_COLOR: '1' } });
}

t.test('Ctrl-C during a batch: the running run is INTERRUPTED, the rest not started, every report written, exit 130', async (t) => {
  const reports = t.testdir();
  const child = start(['run', '--only', 'ack-*', '--jobs', '1', '--reports', reports]);
  const firstRun = await untilConsumerRuns(reports, child);
  process.kill(-child.pid!, 'SIGINT');
  const result = await child;
  const output = `${result.stdout}\n${result.stderr}`;
  t.equal(result.exitCode, 130, `exit 130\n${output}`);
  t.notMatch(result.stdout, /^(FAIL|ERROR) /m, 'no run reported FAIL or ERROR');
  t.match(result.stdout, /^INTERRUPTED {2}ack-crash /m);
  t.match(result.stdout, /chaoslab: SIGINT: stopping/);
  t.match(result.stdout, /Not started \(interrupted\): ack-lost/);
  t.match(result.stdout, /\n1 interrupted, 1 not started — .*index\.html$/);

  const batchDirs = readdirSync(reports).filter((d) => d !== 'latest');
  t.equal(batchDirs.length, 1, 'one batch folder');
  const batch = join(reports, batchDirs[0]!);
  t.equal(readlinkSync(join(reports, 'latest')), batchDirs[0], 'latest points at the batch');
  const runs = journals(batch);
  t.same(runs, [firstRun], 'only the first scenario started');
  for (const file of ['summary.md', 'report.html', 'junit.xml']) t.ok(existsSync(join(firstRun, file)), `the run has its ${file}`);
  t.same(
    readdirSync(firstRun).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
  t.match(readFileSync(join(firstRun, 'summary.md'), 'utf8'), /— INTERRUPTED/);
  const journal = readJournal(join(firstRun, 'journal.jsonl'));
  t.match(journal.at(-1), { type: 'run-end', status: 'interrupted', interrupted: { by: 'SIGINT' } });
  t.notOk(
    journal.some((e) => e.type === 'verdict'),
    'no verdict',
  );
  const junit = readFileSync(join(batch, 'junit.xml'), 'utf8');
  t.match(junit, /<testsuite name="chaoslab only-ack" tests="2" failures="0" errors="0" skipped="2"/);
  t.match(junit, /<testcase name="ack-crash"[^>]*>[\s\S]*?<skipped message="interrupted by SIGINT at [^"]*"\/>/);
  t.match(junit, /<testcase name="ack-lost"[^>]*>\n {6}<skipped message="not started: interrupted"\/>/);

  t.same(survivors(journal), [], 'no consumer, control or toxiproxy-server left');
  t.same(proxiesLeft(journal), [], 'every proxy removed');
  t.same(leftovers(child.pid!, reports), [], "nothing left in the harness's process group or using the reports folder");
});

t.test('SIGTERM during a single unsealed run: INTERRUPTED, reports written, latest updated, exit 143', async (t) => {
  const reports = t.testdir();
  const child = start(['run', 'ack-crash', '--no-seal', '--reports', reports]);
  const runDir = await untilConsumerRuns(reports, child);
  process.kill(child.pid!, 'SIGTERM');
  const result = await child;
  t.equal(result.exitCode, 143, `exit 143\n${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, /^INTERRUPTED {2}ack-crash /m);
  t.notMatch(result.stdout, /^(FAIL|ERROR) /m);
  for (const file of ['summary.md', 'report.html', 'junit.xml']) t.ok(existsSync(join(runDir, file)), `the run has its ${file}`);
  t.match(readFileSync(join(runDir, 'junit.xml'), 'utf8'), /skipped="1"[\s\S]*<skipped message="interrupted by SIGTERM at /);
  t.equal(readlinkSync(join(reports, 'latest')), runDir.split('/').pop(), 'latest points at the run');
  const journal = readJournal(join(runDir, 'journal.jsonl'));
  t.match(journal.at(-1), { type: 'run-end', status: 'interrupted', interrupted: { by: 'SIGTERM' } });
  t.same(survivors(journal), []);
  t.same(proxiesLeft(journal), []);
  t.same(leftovers(child.pid!, reports), []);
});

t.test('a second signal (SIGTERM after Ctrl-C) stops at once: exit 130, and still nothing left behind', async (t) => {
  const reports = t.testdir();
  const child = start(['run', '--only', 'ack-*', '--jobs', '1', '--reports', reports]);
  const runDir = await untilConsumerRuns(reports, child);
  // Two signals sent at once are one to the kernel: the second goes once the first is seen. It is
  // another signal: the same one within SAME_DELIVERY_MS is the first delivered twice (as
  // timeout(1) does), and by the time that has passed the graceful stop may be over. The same
  // signal later: test/harness/base/interrupt.test.ts.
  const seen = new Promise<void>((resolve) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('chaoslab: SIGINT: stopping')) resolve();
    });
  });
  process.kill(-child.pid!, 'SIGINT');
  await seen;
  process.kill(-child.pid!, 'SIGTERM');
  const result = await child;
  t.equal(result.exitCode, 130, `exit 130 (the first signal's)\n${result.stdout}\n${result.stderr}`);
  t.match(result.stderr, /chaoslab: SIGTERM again: stopping now/);
  t.notMatch(result.stdout, /^(FAIL|ERROR) /m);
  t.same(survivors(readJournal(join(runDir, 'journal.jsonl'))), [], 'no consumer, control or toxiproxy-server left');
  t.same(leftovers(child.pid!, reports), []);
});

t.test('Ctrl-C during the mutant matrix: no matrix judged from a part of it, the batch written, exit 130', async (t) => {
  const reports = t.testdir();
  const child = start(['mutants', '--quick', '--lab', 'ledger', '--jobs', '1', '--no-seal', '--reports', reports]);
  const runDir = await untilConsumerRuns(reports, child);
  process.kill(-child.pid!, 'SIGINT');
  const result = await child;
  t.equal(result.exitCode, 130, `exit 130\n${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, /ledger: interrupted after 1 of \d+ runs \(\d+ not started\): no matrix judged from a part of it — every run: .*index\.html/);
  t.notMatch(result.stdout, /PROBLEM|\d+ passed, \d+ failed/, 'no row judged, no total');
  const batch = join(runDir, '..');
  t.notOk(existsSync(join(batch, 'matrix.json')), 'no matrix.json from a part of the matrix');
  const results = JSON.parse(readFileSync(join(batch, 'results.json'), 'utf8'));
  t.match(results.runs, [{ status: 'interrupted' }]);
  t.ok(results.notStarted.length > 0, 'the runs never started are listed');
  t.same(survivors(readJournal(join(runDir, 'journal.jsonl'))), []);
  t.same(leftovers(child.pid!, reports), []);
});
