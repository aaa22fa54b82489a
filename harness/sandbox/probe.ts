// Does sealing work here? Answered by trying the real thing once per process, not by guessing
// from the environment:
//
//   unshare --net --pid --fork --kill-child=SIGKILL --mount-proc -- sh -c '
//     ip link set lo up && nft -f - (a one-rule table) &&
//     tini -g -p SIGKILL -- setpriv --reuid 61999 --regid 61999 --clear-groups --no-new-privs -- id -u'
//
// which must print 61999. Cheap checks come first so the common "no" answers are precise and
// fast: not Linux, not root, no CAP_SYS_ADMIN (a container's root often lacks it: unshare then
// fails with "Operation not permitted"), a program missing (with its Debian package). The
// cgroup controllers are probed apart: without them sealing still works, only the pids/memory
// caps are missing, and the probe says so.

import { existsSync } from 'node:fs';
import { controllerUsable } from './cgroup.js';
import { CAP, effectiveCapabilities, hasCapability } from './proc.js';
import { PROBE_UID } from './uids.js';
import { findTool, missingTools, runTool, TOOL_PACKAGES, type ToolName } from './tools.js';

export interface SealingProbe {
  /** Namespaces, nftables and the uid change all worked. */
  available: boolean;
  /** Why not, in one line a person can act on (set when !available). */
  reason?: string;
  /** Paths of the programs found. */
  tools: Partial<Record<ToolName, string>>;
  /** cgroup (v1 or v2) folders per usable controller; `notes` tell why one is not. */
  cgroups: { pids?: string; memory?: string; notes: string[] };
  /** The namespace's loopback has ::1 (IPv6 is filtered too). */
  ipv6: boolean;
  /** How long the trial took, ms. */
  tookMs: number;
}

/** What sealed mode needs. */
export const SEALING_TOOLS: readonly ToolName[] = [
  'unshare',
  'nsenter',
  'setpriv',
  'prlimit',
  'nft',
  'tini',
  'ip',
  'sh',
  'bash',
  'env',
  'sleep',
  'cp',
  'find',
  'mount',
  'umount',
  'ipcrm',
];

let cached: Promise<SealingProbe> | undefined;

/** The answer for this machine, computed once per process (pass fresh to ask again). */
export function probeSealing(options: { fresh?: boolean } = {}): Promise<SealingProbe> {
  if (options.fresh || !cached) cached = runProbe();
  return cached;
}

async function runProbe(): Promise<SealingProbe> {
  const started = Date.now();
  const tools: Partial<Record<ToolName, string>> = {};
  for (const name of SEALING_TOOLS) {
    const path = findTool(name);
    if (path !== undefined) tools[name] = path;
  }
  const cgroups: SealingProbe['cgroups'] = { notes: [] };
  const result = (available: boolean, reason?: string, ipv6 = false): SealingProbe => {
    const probe: SealingProbe = { available, tools, cgroups, ipv6, tookMs: Date.now() - started };
    if (reason !== undefined) probe.reason = reason;
    return probe;
  };

  if (process.platform !== 'linux') return result(false, `sealed runs need Linux namespaces; this is ${process.platform}`);
  const euid = process.geteuid?.() ?? -1;
  if (euid !== 0) return result(false, `sealed runs need root (namespaces, nftables, a uid per slot); running as uid ${euid}`);
  const caps = effectiveCapabilities();
  const lacking = (['SYS_ADMIN', 'NET_ADMIN', 'SETUID', 'SETGID', 'KILL'] as const).filter((cap) => !hasCapability(caps, CAP[cap]));
  if (lacking.length > 0) {
    return result(
      false,
      `root here lacks ${lacking.map((cap) => `CAP_${cap}`).join(', ')} (a restricted container): namespaces or the uid change are not allowed`,
    );
  }
  const missing = missingTools(SEALING_TOOLS);
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((name) => TOOL_PACKAGES[name]))];
    return result(false, `missing ${missing.join(', ')} (Debian: apt-get install ${packages.join(' ')}; \`make sandbox-tools\` does it)`);
  }

  for (const controller of ['pids', 'memory'] as const) {
    const usable = controllerUsable(controller);
    if (usable.ok) cgroups[controller] = usable.parent;
    else
      cgroups.notes.push(
        `${usable.reason}: ${controller === 'memory' ? 'sealed consumers’ memory is capped by RLIMIT_DATA instead' : 'sealed consumers run without a pids cap'}`,
      );
  }

  const t = tools as Record<ToolName, string>;
  const rules = [
    'table inet chaoslab_probe {',
    '  chain output {',
    '    type filter hook output priority filter; policy accept;',
    `    meta skuid ${PROBE_UID} tcp dport 9 accept`,
    `    meta skuid ${PROBE_UID} reject`,
    '  }',
    '}',
    '',
  ].join('\n');
  const script = [
    `${t.ip} link set lo up`,
    `printf '%s' "$1" | ${t.nft} -f -`,
    `if [ -e /proc/net/if_inet6 ] && grep -q '^0*1 ' /proc/net/if_inet6; then echo ipv6; fi`,
    `exec ${t.tini} -g -p SIGKILL -- ${t.setpriv} --reuid=${PROBE_UID} --regid=${PROBE_UID} --clear-groups --no-new-privs -- /usr/bin/id -u`,
  ].join(' && ');
  const argv = [t.unshare, '--net', '--pid', '--fork', '--kill-child=SIGKILL', '--mount-proc', '--', t.sh, '-c', script, 'chaoslab-probe', rules];
  let trial: Awaited<ReturnType<typeof runTool>>;
  try {
    trial = await runTool(argv, { timeoutMs: 10_000 });
  } catch (error) {
    return result(false, `could not run ${t.unshare}: ${(error as Error).message}`);
  }
  const lines = trial.stdout.split('\n');
  if (trial.code !== 0 || !lines.includes(String(PROBE_UID))) {
    return result(false, `the sealing trial (network+PID namespace, nftables, tini, setpriv to uid ${PROBE_UID}) failed: ${trial.summary}`);
  }
  return result(true, undefined, lines.includes('ipv6') || existsSync('/proc/sys/net/ipv6'));
}

export type SealMode = 'auto' | 'on' | 'off';

export interface SealingDecision {
  sealed: boolean;
  /** One line for the console and the journal: what was decided and why. */
  note: string;
}

/**
 * auto: sealed wherever the probe says it works; on: sealed or an error naming the reason;
 * off: never. The mode would come from a CLI flag or CHAOSLAB_SEAL.
 */
export function decideSealing(mode: SealMode, probe: SealingProbe): SealingDecision {
  if (mode === 'off')
    return { sealed: false, note: 'sealed mode off (asked): the consumer runs as the harness user; connections around the proxy are found through /proc' };
  if (probe.available) {
    const limits = probe.cgroups.notes.length > 0 ? `; ${probe.cgroups.notes.join('; ')}` : '';
    return {
      sealed: true,
      note: `sealed mode on: own network, PID and IPC namespace, private temporary folders, a room with a disk quota, uid per slot, nftables${limits}`,
    };
  }
  if (mode === 'on') throw new Error(`sealed mode was asked for but is not available: ${probe.reason ?? 'unknown reason'}`);
  return {
    sealed: false,
    note: `sealed mode not available (${probe.reason ?? 'unknown reason'}): runs are honest for honest code only; connections around the proxy are found through /proc`,
  };
}

/** CHAOSLAB_SEAL=on|off|auto (default auto). */
export function sealModeFromEnv(value = process.env.CHAOSLAB_SEAL): SealMode {
  const mode = (value ?? '').trim().toLowerCase();
  if (mode === '' || mode === 'auto') return 'auto';
  if (mode === 'on' || mode === '1' || mode === 'true') return 'on';
  if (mode === 'off' || mode === '0' || mode === 'false') return 'off';
  throw new Error(`CHAOSLAB_SEAL must be on, off or auto, not ${JSON.stringify(value)}`);
}
