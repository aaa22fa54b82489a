// Fixture folders for end-to-end files. The e2e files run in two chains, each one process
// (test/helpers/e2e-chains.ts), so a top-level `t.testdir()` in two files of a chain would name
// the same folder (the chain's), and the second file's would wipe the first's. Each file's
// folder is named after the file instead.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

type Content = Parameters<Test['testdir']>[0];

/** `t.testdir(content)`, in a folder of this test file's own (`import.meta.url`). */
export function fileTestdir(t: Test, fileUrl: string, content: Content): string {
  const shared = t.testdirName;
  t.testdirName = `${shared}-${basename(fileURLToPath(fileUrl)).replace(/\.test\.ts$/, '')}`;
  try {
    return t.testdir(content);
  } finally {
    t.testdirName = shared;
  }
}

/** Processes whose command line or environment names `path` (what a run or a grading left behind), with their state and parent. */
export function processesNaming(path: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    try {
      const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8') + readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (!text.includes(path)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()} (state ${state}, parent ${ppid})`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/**
 * processesNaming(path), once it is empty or `ms` have passed: a process already killed may take
 * a moment to be gone (a Go server's threads, on a loaded machine), and is no leak; one that is
 * still there after that is.
 */
export async function processesNamingSettled(path: string, ms = 3000): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = processesNaming(path);
    if (left.length === 0 || Date.now() >= until) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Processes whose command line is exactly `argv` (words joined by spaces), e.g. a test's own `sleep 6001`. */
export function processesRunning(argv: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      if (cmdline === argv && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) out.push(`${pid} ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
