// A process that met a limit of the sandbox is told which, in words: memory (an OOM kill in its
// cgroup), processes (forks refused by pids.max), CPU time (SIGXCPU), file size (SIGXFSZ), open
// files (EMFILE); as a run's findings and in a build's reason alike.
import t from 'tap';
import { limitFindings } from '../../../harness/judge/core-findings.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { limitsMet } from '../../../harness/sandbox/limit-words.js';

const GiB = 1024 ** 3;

t.test('each limit in words, with its size', async (t) => {
  t.same(limitsMet({ signal: 'SIGKILL', limits: { oomKills: 1, memoryLimitBytes: 2 * GiB } }, 'sealed runs'), [
    { code: 'memory-limit', words: "was killed by the kernel's OOM killer: it used more than 2 GiB, the memory limit of sealed runs" },
  ]);
  t.same(limitsMet({ signal: null, limits: { oomKills: 2, memoryLimitBytes: 4 * GiB } }, 'sealed builds'), [
    { code: 'memory-limit', words: "had 2 processes killed by the kernel's OOM killer: it used more than 4 GiB, the memory limit of sealed builds" },
  ]);
  t.same(limitsMet({ signal: null, limits: { pidsDenied: 3, pidsLimit: 512 } }, 'sealed runs'), [
    {
      code: 'pids-limit',
      words: 'tried to run more processes and threads at once than 512, the limit of sealed runs: 3 forks were refused ("Resource temporarily unavailable")',
    },
  ]);
  t.same(limitsMet({ signal: 'SIGXCPU' }, 'sealed builds', { cpuSeconds: 1800 }), [
    { code: 'cpu-time-limit', words: 'was killed by SIGXCPU: it used more than 1800 s of CPU time, the limit of sealed builds (RLIMIT_CPU)' },
  ]);
  t.same(limitsMet({ signal: null, limits: {}, stderrTail: "Error: EMFILE: too many open files, open 'x'" }, 'sealed runs'), [
    { code: 'open-files-limit', words: 'said "EMFILE": it reached 1024 open files, the limit of sealed runs (RLIMIT_NOFILE)' },
  ]);
  t.same(
    limitsMet({ signal: 'SIGKILL', limits: { oomKills: 0, pidsDenied: 0, memoryLimitBytes: GiB } }, 'sealed runs'),
    [],
    'a SIGKILL with no OOM kill: no limit',
  );
  t.same(limitsMet({ signal: null }, 'sealed runs'), [], 'a plain exit: none');
});

t.test("a run's findings: memory and pids limits of a sealed consumer, EMFILE only when sealed", async (t) => {
  const exit = (incarnation: number, extra: object): JournalEntry =>
    ({
      t: incarnation,
      type: 'process-exit',
      role: 'consumer',
      incarnation,
      code: null,
      signal: 'SIGKILL',
      durationMs: 5,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      ...extra,
    }) as JournalEntry;
  const findings = limitFindings([
    exit(1, { limits: { oomKills: 1, memoryLimitBytes: 2 * GiB, pidsDenied: 0, pidsLimit: 512 } }),
    exit(2, { signal: null, code: 1, limits: { pidsDenied: 1, pidsLimit: 512 } }),
    exit(3, { signal: null, code: 1, stderrTail: 'OSError: [Errno 24] Too many open files' }), // unsealed: not the sandbox's limit
    exit(4, { signal: null, code: 1, stderrTail: 'OSError: [Errno 24] Too many open files', limits: {} }),
  ]);
  t.same(
    findings.map((f) => [f.code, f.text, f.subject?.process?.incarnation]),
    [
      ['memory-limit', "consumer incarnation 1 was killed by the kernel's OOM killer: it used more than 2 GiB, the memory limit of sealed runs", 1],
      [
        'pids-limit',
        'consumer incarnation 2 tried to run more processes and threads at once than 512, the limit of sealed runs: 1 fork was refused ("Resource temporarily unavailable")',
        2,
      ],
      ['open-files-limit', 'consumer incarnation 4 said "Too many open files": it reached 1024 open files, the limit of sealed runs (RLIMIT_NOFILE)', 4],
    ],
  );
});

t.test("a sealed server's limits, room and leftovers are worded as the server's", async (t) => {
  const base = { stdoutTail: '', stderrTail: '', stdoutBytes: 0, stderrBytes: 0, durationMs: 5 };
  const findings = limitFindings([
    { t: 0, type: 'process-start', role: 'server', incarnation: 1, pid: 10, command: 'server', env: {}, sealed: { uid: 61450 } },
    { t: 1, type: 'process-exit', role: 'server', incarnation: 1, code: null, signal: 'SIGKILL', ...base, limits: { oomKills: 1, memoryLimitBytes: 2 * GiB } },
    { t: 2, type: 'process-exit', role: 'server', incarnation: 2, code: null, signal: 'SIGXCPU', ...base }, // unsealed: the lab's to judge
    { t: 3, type: 'room', name: 'server', quotaBytes: 1024 ** 2, usedBytes: 1024 ** 2, peakBytes: 1024 ** 2, files: 3, full: true },
    { t: 4, type: 'leftovers', when: 'after', uid: 61450, found: ['/var/tmp/x (a file)'], notRemoved: [], folders: [], tookMs: 1 },
    { t: 5, type: 'leftovers', when: 'after', uid: 61000, found: ['/tmp/y (a file)'], notRemoved: [], folders: [], tookMs: 1 },
  ] as JournalEntry[]);
  t.same(
    findings.map((f) => [f.code, f.text]),
    [
      ['memory-limit', "the server under test was killed by the kernel's OOM killer: it used more than 2 GiB, the memory limit of sealed runs"],
      ['disk-limit', `the server's room reached its disk limit of 1 MiB (1 MiB used at most): writes past it failed with "No space left on device"`],
      ['left-behind', 'the server under test left /var/tmp/x (a file) behind, outside its room (owned by its uid 61450); the harness removed it'],
      ['left-behind', 'the consumer left /tmp/y (a file) behind, outside its room (owned by its uid 61000); the harness removed it'],
    ],
  );
  t.same(findings[0]?.subject?.process, { role: 'server', incarnation: 1 });
});
