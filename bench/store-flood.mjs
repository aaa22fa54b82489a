// make bench-sandbox's store case (issue 28): a sealed run whose consumer leaves a ledger of
// 20 million rows (about 200 MB). Before the store guard this took 4.75 GB and ended
// "Set maximum size exceeded"; now the store is refused by its size before it is opened. Prints
// the verdict, the wall time and the peak RSS (VmHWM) of the harness process and of its run's
// worker, sampled from /proc while the run goes. The 20 M-row file is made once (one
// INSERT … SELECT over a recursive CTE) and kept under the checkout's .tools/bench/ (git ignores
// it) for later runs: not in /var/tmp, which a sealed consumer sees as a private, empty one.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const ROWS = 20_000_000;

/** The 20 M-row ledger store, made once (readable by the sandbox uids: the consumer copies it). */
function floodStore(root) {
  const CACHE = join(root, '.tools', 'bench');
  const FLOOD = join(CACHE, `ledger-${ROWS / 1e6}m.db`);
  if (existsSync(FLOOD)) return { path: FLOOD, madeMs: 0 };
  mkdirSync(CACHE, { recursive: true, mode: 0o755 });
  chmodSync(CACHE, 0o755);
  const from = performance.now();
  const partial = `${FLOOD}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER NOT NULL, total INTEGER NOT NULL)');
  db.exec('CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL)');
  db.exec(`INSERT INTO checkpoint VALUES (1, ${ROWS - 1}, ${ROWS})`);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1}) INSERT INTO ledger SELECT i, 1 FROM n`);
  db.close();
  chmodSync(partial, 0o644);
  renameSync(partial, FLOOD);
  return { path: FLOOD, madeMs: performance.now() - from };
}

const hwmKiB = (pid) => {
  try {
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

const parentOf = (pid) => {
  try {
    return Number(
      readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')[1],
    );
  } catch {
    return 0;
  }
};

/** The run's worker: a descendant of `harness` running dist/harness/run/worker.js (never another harness's). */
function workerPids(harness) {
  const pids = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('harness/run/worker.js')) continue;
      for (let up = Number(pid), hops = 0; up > 1 && hops < 10; up = parentOf(up), hops++)
        if (up === harness) {
          pids.push(Number(pid));
          break;
        }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Runs the case; returns lines to print. */
export async function measureStoreFlood(root) {
  const made = floodStore(root);
  const bytes = statSync(made.path).size;
  const reports = mkdtempSync(join(tmpdir(), 'chaoslab-bench-flood-'));
  chmodSync(reports, 0o755);
  try {
    const consumer = `cp ${made.path} "$CHAOSLAB_DB"`;
    const from = performance.now();
    const child = spawn(
      process.execPath,
      [join(root, 'dist', 'harness', 'cli.js'), 'run', 'happy-path', '--seal', '-q', '--reports', reports, '--consumer', consumer],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const peak = { harness: 0, worker: 0 };
    const sample = setInterval(() => {
      peak.harness = Math.max(peak.harness, hwmKiB(child.pid));
      for (const pid of workerPids(child.pid)) peak.worker = Math.max(peak.worker, hwmKiB(pid));
    }, 50);
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearInterval(sample);
    const wall = (performance.now() - from) / 1000;
    const verdict = /^(PASS|FAIL|ERROR)\s+happy-path/m.exec(out)?.[1] ?? `exit ${code}`;
    const why = /^\s+Why: (.*)$/m.exec(out)?.[1] ?? '';
    const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;
    return [
      `store flood: a ${(ROWS / 1e6).toFixed(0)} M-row ledger store (${(bytes / 1e6).toFixed(0)} MB${made.madeMs ? `, made in ${(made.madeMs / 1000).toFixed(1)} s` : ', made earlier'}) left by a sealed consumer`,
      `  verdict: ${verdict} (exit ${code}): ${why}`,
      `  wall: ${wall.toFixed(1)} s; peak RSS: harness ${mib(peak.harness)}, its worker ${mib(peak.worker)}, together ${mib(peak.harness + peak.worker)} (goal: under 1 GiB)`,
    ];
  } finally {
    rmSync(reports, { recursive: true, force: true });
  }
}
