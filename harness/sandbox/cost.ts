// What sealing costs: start-to-exit of `bash -c true` run plainly (as the supervisor does today)
// and through the sealed chain, piece by piece, interleaved so machine load hits every variant
// alike; plus the one-off cost per run (namespace, firewall, teardown). Used by
// bench/sandbox.bench.mjs and printed by test/harness/sandbox/cost.test.ts; never asserted.

import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createProcessCgroup } from './cgroup.js';
import { confinedArgv, confinedCommand } from './confine.js';
import { installFirewall } from './firewall.js';
import { createRunNamespace } from './namespace.js';
import { requireTool } from './tools.js';

export interface CostLine {
  variant: string;
  /** Median start-to-exit, ms. */
  medianMs: number;
  /** Median minus the plain variant's median, ms. */
  addedMs: number;
  /** CPU time (user + system, all processes of the chain) per process, ms: what load does not
   *  inflate. Measured by bash's `time` over a loop; absent for the cgroup variant. */
  cpuMs?: number;
  /** cpuMs minus the plain variant's. */
  addedCpuMs?: number;
}

export interface CostReport {
  runs: number;
  perProcess: CostLine[];
  perRun: { namespaceMs: number; firewallMs: number; destroyMs: number };
}

function runOnce(argv: readonly string[], cwd: string, env?: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), env === undefined ? { stdio: 'ignore', cwd } : { stdio: 'ignore', cwd, env });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${argv.join(' ')}: exit ${code}`))));
  });
}

/** CPU ms per run of argv, from bash's `time` (user + sys of the loop and all its children). */
async function cpuPerRun(argv: readonly string[], cwd: string, runs: number): Promise<number> {
  const script = `TIMEFORMAT='%U %S'; time (for ((i = 0; i < ${runs}; i++)); do "$@" </dev/null >/dev/null 2>&1 || exit 1; done)`;
  const result = await new Promise<string>((resolve, reject) => {
    const child = spawn(requireTool('bash'), ['-c', script, 'chaoslab-cost', ...argv], { stdio: ['ignore', 'ignore', 'pipe'], cwd });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(err) : reject(new Error(`${argv.join(' ')}: exit ${code}`))));
  });
  const [user, system] = result.trim().split(/\s+/).map(Number);
  return (((user ?? 0) + (system ?? 0)) * 1000) / runs;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Needs root and a working probe. `uid` is a leased slot uid; `cwd` must be reachable by it. */
export async function measureSealingCost(options: { uid: number; cwd: string; runs?: number }): Promise<CostReport> {
  const runs = options.runs ?? 30;
  const { uid, cwd } = options;
  let started = performance.now();
  const ns = await createRunNamespace({ label: 'cost' });
  const namespaceMs = performance.now() - started;
  started = performance.now();
  await installFirewall(ns, [{ uid, allowTcpPorts: [] }]);
  const firewallMs = performance.now() - started;
  try {
    const base = { command: 'true', uid, home: cwd };
    const variants: Array<{ variant: string; run: () => Promise<number> }> = [
      { variant: 'plain: bash -c true', run: () => runOnce([requireTool('bash'), '-c', 'true'], cwd) },
      { variant: 'PID namespace + tini + setpriv + prlimit + env -i', run: () => runOnce(confinedArgv({ ...base, privateProc: false }), cwd) },
      { variant: '… + private /proc (mount namespace)', run: () => runOnce(confinedArgv(base), cwd) },
      {
        variant: '… the same, env given at spawn (no env -i)',
        run: () => {
          const { argv, env } = confinedCommand(base);
          return runOnce(argv, cwd, env);
        },
      },
      { variant: '… + join the run network namespace', run: () => runOnce(confinedArgv({ ...base, netnsPath: ns.path }), cwd) },
      {
        variant: '… + own pids/memory cgroups (create, join, remove)',
        run: async () => {
          const t0 = performance.now();
          const cgroup = createProcessCgroup('cost', { pids: 64, memoryBytes: 256 * 1024 * 1024 });
          await runOnce(confinedArgv({ ...base, netnsPath: ns.path, cgroup }), cwd);
          await cgroup.remove();
          return performance.now() - t0;
        },
      },
    ];
    const samples = variants.map(() => [] as number[]);
    for (const variant of variants) await variant.run(); // warm the page cache
    for (let i = 0; i < runs; i++) {
      for (let v = 0; v < variants.length; v++) samples[v]!.push(await variants[v]!.run());
    }
    const cpuArgv = [
      [requireTool('bash'), '-c', 'true'],
      confinedArgv({ ...base, privateProc: false }),
      confinedArgv(base),
      confinedCommand(base).argv, // bash's loop passes its own environment: the saving of one exec is what counts
      confinedArgv({ ...base, netnsPath: ns.path }),
    ];
    const cpu: number[] = [];
    for (const argv of cpuArgv) cpu.push(await cpuPerRun(argv, cwd, runs));
    const plain = median(samples[0]!);
    const r2 = (ms: number) => Math.round(ms * 100) / 100;
    const perProcess = variants.map(({ variant }, v): CostLine => {
      const m = median(samples[v]!);
      const line: CostLine = { variant, medianMs: r2(m), addedMs: r2(m - plain) };
      const c = cpu[v];
      if (c !== undefined) Object.assign(line, { cpuMs: r2(c), addedCpuMs: r2(c - cpu[0]!) });
      return line;
    });
    started = performance.now();
    await ns.destroy();
    const destroyMs = performance.now() - started;
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return { runs, perProcess, perRun: { namespaceMs: round(namespaceMs), firewallMs: round(firewallMs), destroyMs: round(destroyMs) } };
  } finally {
    await ns.destroy();
  }
}

/** The report as aligned lines. */
export function formatCost(report: CostReport): string[] {
  const width = Math.max(...report.perProcess.map((line) => line.variant.length));
  return [
    `per process (start to exit of \`true\`; wall: median of ${report.runs}; cpu: user+system of the whole chain, per process):`,
    ...report.perProcess.map((line) => {
      const cpu = line.cpuMs === undefined ? '' : `   cpu ${line.cpuMs.toFixed(2).padStart(6)} ms (+${(line.addedCpuMs ?? 0).toFixed(2)})`;
      return `  ${line.variant.padEnd(width)}  wall ${line.medianMs.toFixed(2).padStart(7)} ms (+${line.addedMs.toFixed(2)})${cpu}`;
    }),
    `per run: network namespace ${report.perRun.namespaceMs} ms, nftables table ${report.perRun.firewallMs} ms, teardown ${report.perRun.destroyMs} ms`,
  ];
}
