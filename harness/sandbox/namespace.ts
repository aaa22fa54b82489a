// One network namespace per run, held open by a tiny holder process:
//
//   setpriv --pdeathsig KILL -- unshare --net -- sh -c 'ip link set lo up && echo ready && exec sleep infinity'
//
// The namespace has nothing but its own loopback (127.0.0.1 and ::1, up), so whatever runs in
// it — the run's worker with its publisher, Toxiproxy, the control, the consumer — talks over a
// loopback no other run and no host process shares. A command joins it with
// `nsenter --net=/proc/<holder>/ns/net -- …` (enterArgv) or inherits it from a parent that
// already is inside. Firewall rules installed in it (firewall.ts) die with it.
//
// Nothing is left behind: no name under /run/netns (unlike `ip netns add`), so the namespace
// lives exactly as long as some process is in it. destroy() SIGKILLs every process whose
// /proc/<pid>/ns/net is this namespace, then the holder. If the harness dies first, the
// holder's parent-death signal (set by setpriv, kept across the execs) kills the holder; the
// processes started inside must carry their own (confine.ts does), so nothing survives.

import { spawn } from 'node:child_process';
import { onCleanup } from '../base/cleanup.js';
import { atMost } from '../base/at-most.js';
import { isAlive, namespaceOf, pidsInNamespace, readStat, sleep } from './proc.js';
import { requireTool, runTool, type ToolResult } from './tools.js';

export interface RunNamespace {
  /** The holder's pid (the `sleep`): the namespace is reached through /proc/<holderPid>/ns/net. */
  readonly holderPid: number;
  /** The namespace's identity, e.g. "net:[4026532281]": compare with namespaceOf(pid, 'net'). */
  readonly id: string;
  /** /proc/<holderPid>/ns/net. */
  readonly path: string;
  /** Whether the holder (hence the namespace) is still there. */
  alive(): boolean;
  /** argv that runs `argv` inside the namespace (nsenter). With dieWithParent, the command is
   *  also SIGKILLed when the process that spawns it dies. Throws once the namespace is gone. */
  enterArgv(argv: readonly string[], options?: { dieWithParent?: boolean }): string[];
  /** Runs a program inside the namespace to completion (as the harness's user: e.g. nft, ip). */
  exec(argv: readonly string[], options?: { input?: string; timeoutMs?: number }): Promise<ToolResult>;
  /** Live processes in the namespace, the holder included; none once the holder is gone. */
  processes(): number[];
  /** Kills every process in the namespace, then the holder; resolves once none is left (or after
   *  timeoutMs); returns how many processes besides the holder had to be killed, and those
   *  still there when the holder went. Idempotent. */
  destroy(timeoutMs?: number): Promise<{ killed: number; leftover: number[] }>;
}

export interface CreateNamespaceOptions {
  /** For messages. */
  label?: string;
  /** How long the holder may take to say "ready" (default 5 s). */
  readyTimeoutMs?: number;
  /** More `ip link set lo …` settings, e.g. loss.ts's LOOPBACK_LINK_ARGS (MTU 1500, one segment per packet). */
  loopback?: readonly string[];
}

const holders = new Set<Namespace>();
let exitHookInstalled = false;

/** Creates a run's network namespace with loopback up. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN). */
export async function createRunNamespace(options: CreateNamespaceOptions = {}): Promise<RunNamespace> {
  const label = options.label ?? 'run';
  const setpriv = requireTool('setpriv');
  const unshare = requireTool('unshare');
  const sh = requireTool('sh');
  const ip = requireTool('ip');
  const sleepBin = requireTool('sleep');
  // The settings are ours (never a scenario's words), but quote them anyway: this is a shell line.
  const loopback = options.loopback?.length ? ` && ${ip} link set lo ${options.loopback.map((a) => `'${a.replace(/'/g, '')}'`).join(' ')}` : '';
  const script = `${ip} link set lo up${loopback} && echo ready && exec ${sleepBin} infinity`;
  const child = spawn(setpriv, ['--pdeathsig', 'KILL', '--', unshare, '--net', '--', sh, '-c', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // a Ctrl-C to the terminal's group must not end the namespace before the cleanups do
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`network namespace for ${label}: could not start ${setpriv}`);
  child.unref();
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const ready = new Promise<'ready' | 'exited'>((resolve) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('ready\n')) resolve('ready');
    });
    child.once('exit', () => resolve('exited'));
  });
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = options.readyTimeoutMs ?? 5000;
  const outcome = await Promise.race([ready, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))]);
  clearTimeout(timer);
  const id = outcome === 'ready' ? namespaceOf(pid, 'net') : undefined;
  if (outcome !== 'ready' || id === undefined || id === namespaceOf('self', 'net')) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
    const why =
      outcome === 'timeout' ? `no "ready" within ${timeoutMs} ms` : outcome === 'exited' ? 'the holder exited' : 'the holder is not in a new namespace';
    throw new Error(`network namespace for ${label}: ${why} (holder pid ${pid} killed)${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
  }
  child.stdout.destroy();
  child.stderr.destroy();
  const start = readStat(pid)?.start ?? '';
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const ns = new Namespace(label, pid, start, id, exited);
  holders.add(ns);
  installExitHook();
  return ns;
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // process.exit() or a crash: no async cleanup runs; kill synchronously what we can see.
  process.on('exit', () => {
    for (const ns of holders) ns.killSync();
  });
}

class Namespace implements RunNamespace {
  readonly path: string;
  private destroying: Promise<{ killed: number; leftover: number[] }> | undefined;
  private readonly unregister: () => void;

  constructor(
    private readonly label: string,
    readonly holderPid: number,
    private readonly holderStart: string,
    readonly id: string,
    private readonly holderExited: Promise<void>,
  ) {
    this.path = `/proc/${holderPid}/ns/net`;
    this.unregister = onCleanup(`network namespace of ${label} (holder pid ${holderPid})`, async () => {
      await this.destroy();
    });
  }

  alive(): boolean {
    return !this.destroying && this.holderInside();
  }

  enterArgv(argv: readonly string[], options: { dieWithParent?: boolean } = {}): string[] {
    if (!this.alive()) throw new Error(`network namespace of ${this.label} is gone`);
    const enter = [requireTool('nsenter'), `--net=${this.path}`, '--', ...argv];
    return options.dieWithParent ? [requireTool('setpriv'), '--pdeathsig', 'KILL', '--', ...enter] : enter;
  }

  exec(argv: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<ToolResult> {
    return runTool(this.enterArgv(argv), options);
  }

  /**
   * The holder pins the namespace, and the kernel gives a freed namespace's inode number to the
   * next one made — another run's, maybe another harness's. So a scan by id finds only ours
   * while the holder lives: once it is gone this finds nothing, never a stranger.
   */
  processes(): number[] {
    if (!this.holderInside()) return [];
    const found = pidsInNamespace('net', this.id);
    // The holder outlived the scan, so the namespace did too: every pid found was in ours.
    return this.holderInside() ? found : [];
  }

  private holderInside(): boolean {
    return isAlive(this.holderPid, this.holderStart) && namespaceOf(this.holderPid, 'net') === this.id;
  }

  killSync(): void {
    for (const pid of this.processes()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }

  destroy(timeoutMs = 5000): Promise<{ killed: number; leftover: number[] }> {
    this.destroying ??= (async () => {
      const until = Date.now() + timeoutMs;
      const killed = new Set<number>();
      // Everything else first, the holder last: while it lives the namespace's id is ours alone.
      for (;;) {
        const others = this.processes().filter((pid) => pid !== this.holderPid);
        for (const pid of others) {
          killed.add(pid);
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        }
        if (others.length === 0 || Date.now() > until) break;
        await sleep(10);
      }
      const leftover = this.processes().filter((pid) => pid !== this.holderPid);
      if (isAlive(this.holderPid, this.holderStart)) {
        try {
          process.kill(this.holderPid, 'SIGKILL');
        } catch {}
      }
      await atMost(this.holderExited, Math.max(0, until - Date.now()));
      holders.delete(this);
      this.unregister();
      return { killed: killed.size, leftover };
    })();
    return this.destroying;
  }
}
