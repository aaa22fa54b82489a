// The argv that runs one consumer command sealed, and how to see and signal what it became.
//
// confinedArgv() builds this chain (each step execs the next, so they share one pid until
// unshare forks; steps in brackets are left out when not asked for):
//
//   setpriv --pdeathsig KILL --                     dies (SIGKILL) when the process that spawned it dies
//   [sh -c 'echo 0 > <pids>/tasks …; exec "$@"']  joins its cgroups (cgroup.ts) before anything forks
//   [nsenter --net=/proc/<holder>/ns/net --]        joins the run's network namespace
//   prlimit --cpu=… --nofile=… --fsize=… [--data=…] --nproc=… --core=0 --
//   unshare --pid --ipc --fork --kill-child=SIGKILL [--mount-proc] --
//        └─ fork: pid 1 of a new PID namespace, in IPC and mount namespaces of its own
//   [sh -c PRIVATE_FS]                              private /tmp, /var/tmp, /dev/shm, /run/lock; / read-only
//   tini -g -p SIGKILL --                           a trusted init: reaps, forwards signals to the
//                                                   consumer's process group, exits with its status
//        └─ fork: pid 2
//   setpriv --reuid U --regid U --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all --pdeathsig KILL --
//   env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=<room> <contract variables>
//   bash -c <command>                               the consumer (bash execs a lone simple command)
//
// Why each piece:
//  - PID namespace with tini as pid 1: when pid 1 dies the kernel SIGKILLs every process of the
//    namespace, so `env -i setsid sleep 1000 &` or a double fork cannot outlive the consumer.
//    The consumer is never pid 1 itself (pid 1 ignores every signal it has no handler for,
//    its own SIGSTOP included).
//  - `unshare` stays as the parent of tini: it blocks SIGINT/SIGTERM, waits, and exits with
//    tini's status; its --kill-child and tini's -p make tini die with it.
//  - setpriv: the consumer runs as the slot's uid with no groups, no capabilities, no way to
//    regain any (no_new_privs: set-uid programs do not elevate), and dies with tini.
//  - env -i: nothing of the harness's environment leaks in.
//  - IPC namespace: SysV message queues, semaphores, shared memory and POSIX message queues are
//    the namespace's and die with it; nothing a consumer makes there reaches a later one.
//  - Mount namespace (with the private /proc): /tmp, /var/tmp, /dev/shm, /run/lock (and
//    /var/lock when it is a folder) are fresh, empty, size-limited tmpfs that vanish with the
//    namespace; the root filesystem is read-only, so no world-writable folder of the machine
//    (found: /tmp, /var/tmp, /run/lock) can carry anything to a later run. The room stays
//    writable, and the working directory reachable, also when they lie under one of those.
//  - rlimits are set before the uid change and cannot be raised again by the consumer.
//  - No RLIMIT_AS: address space is not memory. V8 reserves large virtual ranges for each
//    WebAssembly memory (8 GiB RLIMIT_AS made `new WebAssembly.Memory({maximum: 65536})` fail
//    with "could not allocate memory"), the JVM and Go reserve their heaps the same way. Memory
//    is capped by the memory cgroup the process joins (cgroup.ts), which counts pages used;
//    only where it joins none, by RLIMIT_DATA (writable private mappings: a PROT_NONE
//    reservation costs nothing until it is made writable).
//
// Signals (verified on this machine, see test/harness/sandbox/confine.test.ts):
//  - SIGSTOP sent to tini stops tini only. To stop the consumer, send SIGSTOP to the members of
//    the PID namespace (signalSealed does); SIGCONT likewise. SIGCONT and SIGTERM sent to tini
//    are forwarded to the consumer's process group, but a member that left the group (setsid)
//    would miss them, so signalSealed sends every signal but SIGKILL to each member directly.
//    The supervisor does the same for a process started with `sealed` (it never signals tini:
//    its forwarded SIGCONT came after a self-stopping consumer had stopped again, and let it run).
//  - SIGKILL goes to tini: the whole namespace dies at once.
//  - A consumer that stopped itself (kill -STOP $$) is seen as state "T" in /proc/<pid>/stat of
//    the namespace's pid 2 (tini's child, the "main" pid) or of another member; tini does not
//    notice (it waits without WUNTRACED). sealedStopped() watches every member but tini.
//  - Exit status: tini exits with the consumer's code, or 128+n when the consumer died of signal
//    n; unshare passes that on. So the harness sees 128+n where it used to see a signal
//    (decodeSealedExit). When the harness SIGKILLs tini, unshare exits 1.

import { constants as osConstants } from 'node:os';
import { cmdlineOf, childrenOf, isAlive, namespaceOf, pidsInNamespace, readStat } from './proc.js';
import type { ProcessCgroup } from './cgroup.js';
import { SEALED_PATH } from './room.js';
import { requireTool } from './tools.js';

export interface Limits {
  /** RLIMIT_CPU, seconds of CPU time (SIGXCPU, then SIGKILL a second later). */
  cpuSeconds: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** RLIMIT_FSIZE, bytes one file may grow to (SIGXFSZ / EFBIG beyond). */
  fileSizeBytes: number;
  /** RLIMIT_DATA, bytes of writable private memory: set only where the process joins no memory
   *  cgroup (the cgroup is the memory cap); at least 256 MiB (a runtime's own start needs ~100). */
  dataBytes: number;
  /** RLIMIT_NPROC for the slot's uid (a second bound next to pids.max). */
  processes: number;
}

const GiB = 1024 ** 3;
export const MIN_DATA_BYTES = 256 * 1024 ** 2;

export const DEFAULT_LIMITS: Limits = {
  cpuSeconds: 600,
  openFiles: 1024,
  fileSizeBytes: 1 * GiB,
  dataBytes: 2 * GiB,
  processes: 512,
};

export interface ConfineOptions {
  /** The consumer's shell command line. */
  command: string;
  /** The slot's uid (and gid, unless given). */
  uid: number;
  gid?: number;
  /** The room: the consumer's HOME. */
  home: string;
  /** Contract variables added to the clean environment (CHAOSLAB_*). */
  env?: Record<string, string>;
  /** The run's network namespace (path /proc/<holder>/ns/net); leave out when the spawning
   *  process already is inside it (the worker design). */
  netnsPath?: string;
  /** Groups to join before anything runs (cgroup.ts). */
  cgroup?: Pick<ProcessCgroup, 'joinFiles' | 'dirs'>;
  limits?: Partial<Limits>;
  /** Mount a /proc of the new PID namespace, so the consumer sees only its own processes
   *  (default true; costs a mount namespace). */
  privateProc?: boolean;
  /** A folder the process must reach read-only (a server's outbox's), kept reachable, read-only, where a private /tmp covers it. */
  readOnlyDir?: string;
  /** The shell that runs the command (default /bin/bash, as the supervisor). */
  shell?: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The argv of the chain described in the module comment. Whatever environment the spawner
 *  passes, the consumer gets only the clean one (`env -i` near the end). */
export function confinedArgv(options: ConfineOptions): string[] {
  const { argv, env } = confinedCommand(options);
  const shellAt = argv.length - 3;
  return [...argv.slice(0, shellAt), requireTool('env'), '-i', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), ...argv.slice(shellAt)];
}

/**
 * The same chain without `env -i` (one exec less, about 1 ms here), and the exact environment to
 * spawn it with: for a spawner that passes an environment as given (child_process.spawn with
 * `env`, not the supervisor, which adds process.env). Every step of the chain passes its
 * environment on unchanged.
 */
export function confinedCommand(options: ConfineOptions): { argv: string[]; env: Record<string, string> } {
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const uid = options.uid;
  const gid = options.gid ?? uid;
  for (const [what, id] of [
    ['uid', uid],
    ['gid', gid],
  ] as const) {
    if (!Number.isInteger(id) || id <= 0) throw new RangeError(`confine: ${what} must be a positive integer (never root), not ${id}`);
  }
  if (limits.dataBytes < MIN_DATA_BYTES) throw new RangeError(`confine: the data limit must be at least 256 MiB, not ${limits.dataBytes}`);
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`confine: limit ${key} must be a positive integer, not ${value}`);
  }
  const env: Record<string, string> = { ...options.env, PATH: SEALED_PATH, HOME: options.home, TMPDIR: options.home };
  for (const [key, value] of Object.entries(env)) {
    if (!NAME.test(key)) throw new Error(`confine: invalid environment variable name ${JSON.stringify(key)}`);
    if (value.includes('\0')) throw new Error(`confine: environment variable ${key} holds a NUL byte`);
  }

  const argv = [requireTool('setpriv'), '--pdeathsig', 'KILL', '--'];
  const joinFiles = options.cgroup?.joinFiles ?? [];
  if (joinFiles.length > 0) {
    argv.push(requireTool('sh'), '-c', JOIN_CGROUPS, 'chaoslab-join', String(joinFiles.length), ...joinFiles);
  }
  if (options.netnsPath !== undefined) argv.push(requireTool('nsenter'), `--net=${options.netnsPath}`, '--');
  argv.push(
    requireTool('prlimit'),
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--nofile=${limits.openFiles}`,
    `--fsize=${limits.fileSizeBytes}`,
    ...(options.cgroup?.dirs.memory === undefined ? [`--data=${limits.dataBytes}`] : []),
    `--nproc=${limits.processes}`,
    '--core=0',
    '--',
  );
  argv.push(requireTool('unshare'), '--pid', '--ipc', '--fork', '--kill-child=SIGKILL');
  if (options.privateProc ?? true) {
    // A mount namespace of its own: its /proc, private temporary folders, / read-only; TMPDIR
    // points into the room.
    argv.push(
      '--mount-proc',
      '--',
      requireTool('sh'),
      '-c',
      PRIVATE_FS,
      'chaoslab-fs',
      options.home,
      String(TEMP_SIZE_BYTES),
      String(TEMP_INODES),
      options.readOnlyDir ?? '',
    );
  } else argv.push('--');
  argv.push(requireTool('tini'), '-g', '-p', 'SIGKILL', '--');
  argv.push(
    requireTool('setpriv'),
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--pdeathsig=KILL',
    '--',
  );
  argv.push(options.shell ?? requireTool('bash'), '-c', options.command);
  return { argv, env };
}

/** Size of each private temporary folder (/tmp, /var/tmp, /dev/shm; /run/lock gets 1 MiB). */
export const TEMP_SIZE_BYTES = 64 * 1024 ** 2;
/** Files each of them may hold. */
const TEMP_INODES = 4096;

/**
 * `sh -c` script, as root inside the new mount namespace, before the uid change: $1 the room,
 * $2 the size of each temporary folder, $3 its inode count, $4 a folder to keep reachable
 * read-only (or empty), then the command to exec.
 *  - fds 3 and 4 hold the room and the working directory: the tmpfs mounted next may cover them
 *    (a run folder under /tmp); /proc/self/fd/N still reaches the folders underneath, and
 *    `mount -c` (no canonicalisation) binds them back at their paths; the folders made on the way
 *    there are 0711 (umask 066), passable but not listable, as the run folder, whatever the
 *    spawner's umask (a sealed worker's is 077).
 *  - fd 5 holds $4 the same way; it is bound back before the room, which may lie inside it.
 *  - /run/lock is the last of the folders: a /var/lock that is a link to it needs nothing more.
 *  - `remount,bind,ro /` makes the root mount read-only in this namespace only; the tmpfs, the
 *    room and the other mounts are mounts of their own and keep their flags.
 */
const PRIVATE_FS = [
  'room=$1 size=$2 inodes=$3 ro=$4; shift 4',
  'fail() { echo "chaoslab: cannot $1" >&2; exit 125; }',
  'cwd=$PWD && exec 3<"$room" 4<. || fail "open the room and the working directory"', // sh checks $PWD against "." at start
  'if [ -n "$ro" ]; then exec 5<"$ro" || fail "open $ro"; fi',
  'dirs="/tmp /var/tmp /dev/shm"; [ -L /var/lock ] || dirs="$dirs /var/lock"',
  'for d in $dirs /run/lock; do [ -d "$d" ] || continue; s=$size; [ "$d" = /run/lock ] || [ "$d" = /var/lock ] && s=1048576; ' +
    'mount -t tmpfs -o "nosuid,nodev,mode=1777,size=$s,nr_inodes=$inodes" chaoslab-tmp "$d" || fail "make a private $d"; done',
  'mount -o remount,bind,ro / || fail "make / read-only"',
  'if ! [ "$cwd" -ef /proc/self/fd/4 ]; then (umask 066 && mkdir -p "$cwd") && mount -c --bind /proc/self/fd/4 "$cwd" && mount -c -o remount,bind,ro "$cwd" || fail "keep the working directory reachable"; fi',
  'if [ -n "$ro" ] && ! [ "$ro" -ef /proc/self/fd/5 ]; then (umask 066 && mkdir -p "$ro") && mount -c --bind /proc/self/fd/5 "$ro" && mount -c -o remount,bind,ro "$ro" || fail "keep $ro reachable"; fi',
  'if ! { [ "$room" -ef /proc/self/fd/3 ] && [ -w "$room" ]; }; then (umask 066 && mkdir -p "$room") && mount -c --bind /proc/self/fd/3 "$room" && mount -c -o remount,bind,rw "$room" || fail "keep the room writable"; fi',
  // Again through the new mounts: a working directory inside the room (a build's) must be the writable one.
  'cd "$cwd" || fail "enter the working directory"',
  'exec 3<&- 4<&- 5<&-; exec "$@"',
].join('\n');

/** `sh -c` script: writes 0 (itself: echo is a builtin, no fork) to each of the first $1 files that follow, then execs the rest. */
const JOIN_CGROUPS =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || { echo "chaoslab: cannot join cgroup $1" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

/** Quotes argv for `bash -c` / `sh -c` (e.g. to hand the chain to the supervisor as a command line). */
export function shellCommandLine(argv: readonly string[]): string {
  return argv.map((arg) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
}

// ---------------------------------------------------------------------------------------------
// What a confined command became, seen from the harness (host pids)

export interface SealedTree {
  /** The process the harness spawned, which ends up as `unshare` (the parent of tini). */
  launcher: number;
  /** tini: pid 1 of the PID namespace. */
  init?: number;
  /** tini's child: pid 2 inside, the consumer's own process (after bash's exec). */
  main?: number;
  /** Every live process of the namespace but tini (the consumer and all its descendants). */
  members: number[];
  /** The PID namespace, e.g. "pid:[4026532290]". */
  pidNamespace?: string;
}

/** Finds tini (the launcher's child in another PID namespace), its child, and the namespace's members. */
export function sealedTree(launcher: number): SealedTree {
  const own = namespaceOf(launcher, 'pid');
  const init = childrenOf(launcher).find((pid) => {
    const ns = namespaceOf(pid, 'pid');
    return ns !== undefined && ns !== own;
  });
  if (init === undefined) return { launcher, members: [] };
  const pidNamespace = namespaceOf(init, 'pid');
  if (pidNamespace === undefined) return { launcher, members: [] };
  const members = pidsInNamespace('pid', pidNamespace).filter((pid) => pid !== init);
  // A freed namespace's inode number goes to the next one made (another run's): the scan found
  // only ours if tini, which pins the namespace, outlived it.
  if (!isAlive(init) || namespaceOf(init, 'pid') !== pidNamespace) return { launcher, members: [] };
  const main = childrenOf(init).sort((a, b) => a - b)[0];
  return main === undefined ? { launcher, init, members, pidNamespace } : { launcher, init, main, members, pidNamespace };
}

/**
 * Sends `signal` to what the launcher runs: SIGKILL to tini (the kernel then kills the whole
 * namespace); any other signal to each member but tini, so SIGSTOP really stops the consumer and
 * its descendants (tini cannot forward SIGSTOP). Returns how many processes it was sent to.
 */
export function signalSealed(launcher: number, signal: NodeJS.Signals): number {
  const tree = sealedTree(launcher);
  const targets = signal === 'SIGKILL' ? (tree.init === undefined ? [] : [tree.init]) : tree.members;
  let sent = 0;
  for (const pid of targets) {
    try {
      process.kill(pid, signal);
      sent++;
    } catch {}
  }
  return sent;
}

/** Whether some member of the namespace (not tini) is stopped: state "T" in /proc/<pid>/stat. */
export function sealedStopped(launcher: number): boolean {
  return sealedTree(launcher).members.some((pid) => readStat(pid)?.state === 'T');
}

/** Whether any process of the sealed tree (launcher, tini, members) is still alive. */
export function sealedAlive(launcher: number): boolean {
  const tree = sealedTree(launcher);
  return isAlive(launcher) || [tree.init, ...tree.members].some((pid) => pid !== undefined && isAlive(pid));
}

export interface SealedExit {
  code: number | null;
  signal: string | null;
}

/**
 * What the consumer's own exit was, from the launcher's: tini and unshare turn a death by signal
 * n into status 128+n. (A consumer that calls exit(128+n) itself looks the same: the price of
 * an init in between.)
 */
export function decodeSealedExit(code: number | null, signal: string | null): SealedExit {
  if (signal !== null || code === null) return { code, signal };
  if (code > 128 && code < 128 + 65) {
    const name = Object.entries(osConstants.signals).find(([, number]) => number === code - 128)?.[0];
    if (name !== undefined) return { code: null, signal: name };
  }
  return { code, signal: null };
}

/** For messages: the argv of each member ("pid: cmdline"). */
export function describeMembers(launcher: number): string[] {
  return sealedTree(launcher).members.map((pid) => `${pid}: ${cmdlineOf(pid).join(' ')}`);
}
