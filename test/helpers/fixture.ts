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

/** Processes whose command line or environment names `path` (what a run or a grading left behind). */
export function processesNaming(path: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    try {
      const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8') + readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (text.includes(path)) out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
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
