// Runs the compiled chaoslab CLI as a real process (end-to-end tests) and inspects what the
// run left behind.
import { execa } from 'execa';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type JournalEntry, readJournal } from '../../harness/record/journal.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const cli = join(root, 'dist', 'harness', 'cli.js');

export async function chaoslab(args: string[], options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}) {
  return execa('node', [cli, ...args], { cwd: options.cwd ?? root, env: options.env ?? {}, reject: false, timeout: options.timeout ?? 240_000 });
}

/** The single run folder under `reportsDir` and its journal. */
export function onlyRun(reportsDir: string): { dir: string; journal: JournalEntry[] } {
  const runs = readdirSync(reportsDir).filter((d) => d !== 'latest');
  if (runs.length !== 1) throw new Error(`expected one run folder in ${reportsDir}, found ${runs.join(', ')}`);
  const dir = join(reportsDir, runs[0]!);
  return { dir, journal: readJournal(join(dir, 'journal.jsonl')) };
}

/** Processes still alive among those the journal says were started, plus any toxiproxy the run owned. */
export function survivors(journal: JournalEntry[]): string[] {
  const alive: string[] = [];
  for (const e of journal) {
    if (e.type === 'process-start' && isAlive(e.pid)) alive.push(`${e.role}#${e.incarnation} pid ${e.pid}`);
  }
  const tp = journal.find((e) => e.type === 'toxiproxy');
  if (tp?.owned && tp.pid !== undefined) {
    // By pid: once this run's server is gone its port is free, and a test beside it may start its
    // own server on the same port (a port scan took that one for a leak of this run's).
    if (isAlive(tp.pid) && commandOf(tp.pid).includes('toxiproxy')) alive.push(`toxiproxy-server pid ${tp.pid}`);
  } else if (tp?.owned) {
    const port = new URL(tp.url).port;
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      const cmd = commandOf(Number(pid));
      if (cmd.includes('toxiproxy') && cmd.includes(`-port ${port}`)) alive.push(`toxiproxy-server pid ${pid}`);
    }
  }
  return alive;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}
