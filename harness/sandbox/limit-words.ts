// Which limit of the sandbox a process met, in words a student can act on: from how it ended
// (its signal), what its cgroups counted (OOM kills, refused forks) and what it said last
// (EMFILE). One source for a run's findings (core-findings.ts) and a build's reason (build.ts),
// so both say the same thing about the same limit.

import { formatBytes } from '../text/bytes.js';
import type { CgroupStats } from './cgroup.js';
import { DEFAULT_LIMITS, type Limits } from './confine.js';

export type LimitCode = 'memory-limit' | 'pids-limit' | 'cpu-time-limit' | 'file-size-limit' | 'open-files-limit';

export interface LimitMet {
  code: LimitCode;
  /** A sentence that starts after its subject ("was killed by …"), e.g. after "your consumer". */
  words: string;
}

export interface EndedProcess {
  signal: string | null;
  /** What its cgroups counted; absent when it joined none (then memory is capped by RLIMIT_DATA). */
  limits?: CgroupStats;
  stderrTail?: string;
}

/** What an open-files failure looks like in the languages' own words. */
const TOO_MANY_FILES = /EMFILE|Too many open files/;

/**
 * Every limit the process met. `of` names whose limit it is ("sealed runs", "sealed builds");
 * `rlimits` are the ones it ran under (DEFAULT_LIMITS for a consumer).
 */
export function limitsMet(ended: EndedProcess, of: string, rlimits: Partial<Limits> = {}): LimitMet[] {
  const limits: Limits = { ...DEFAULT_LIMITS, ...rlimits };
  const met: LimitMet[] = [];
  const stats = ended.limits ?? {};
  if ((stats.oomKills ?? 0) > 0) {
    const size = stats.memoryLimitBytes === undefined ? 'its memory limit' : `${formatBytes(stats.memoryLimitBytes)}, the memory limit of ${of}`;
    const who = ended.signal === 'SIGKILL' ? 'was killed' : `had ${stats.oomKills === 1 ? 'a process' : `${stats.oomKills} processes`} killed`;
    met.push({ code: 'memory-limit', words: `${who} by the kernel's OOM killer: it used more than ${size}` });
  }
  if ((stats.pidsDenied ?? 0) > 0) {
    const size = stats.pidsLimit === undefined ? 'its limit' : `${stats.pidsLimit}, the limit of ${of}`;
    met.push({
      code: 'pids-limit',
      words: `tried to run more processes and threads at once than ${size}: ${stats.pidsDenied} fork${stats.pidsDenied === 1 ? ' was' : 's were'} refused ("Resource temporarily unavailable")`,
    });
  }
  if (ended.signal === 'SIGXCPU')
    met.push({ code: 'cpu-time-limit', words: `was killed by SIGXCPU: it used more than ${limits.cpuSeconds} s of CPU time, the limit of ${of} (RLIMIT_CPU)` });
  if (ended.signal === 'SIGXFSZ')
    met.push({
      code: 'file-size-limit',
      words: `was killed by SIGXFSZ: it wrote a file past its size limit of ${formatBytes(limits.fileSizeBytes)} (RLIMIT_FSIZE)`,
    });
  const said = TOO_MANY_FILES.exec(ended.stderrTail ?? '');
  if (said) met.push({ code: 'open-files-limit', words: `said "${said[0]}": it reached ${limits.openFiles} open files, the limit of ${of} (RLIMIT_NOFILE)` });
  return met;
}
