// What sealing costs: start-to-exit of `bash -c true` run plainly (as the supervisor does today)
// and through the sealed chain, piece by piece, interleaved so machine load hits every variant
// alike; plus the one-off cost per run (namespace, firewall, teardown). Used by
// bench/sandbox.bench.mjs and printed by test/sandbox-cost.test.ts; never asserted.

import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createProcessCgroup } from './cgroup.js';
import { confinedArgv } from './confine.js';
import { installFirewall } from './firewall.js';
import { createRunNamespace } from './namespace.js';
import { requireTool } from './tools.js';

export interface CostLine {
  variant: string;
  /** Median start-to-exit, ms. */
  medianMs: number;
  /** Median minus the plain variant's median, ms. */
  addedMs: number;
}

export interface CostReport {
  runs: number;
  perProcess: CostLine[];
  perRun: { namespaceMs: number; firewallMs: number; destroyMs: number };
}

function runOnce(argv: readonly string[], cwd: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', cwd });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${argv.join(' ')}: exit ${code}`))));
  });
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
    const plain = median(samples[0]!);
    const perProcess = variants.map(({ variant }, v) => {
      const m = median(samples[v]!);
      return { variant, medianMs: Math.round(m * 100) / 100, addedMs: Math.round((m - plain) * 100) / 100 };
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
    `per process (median of ${report.runs}, start to exit of \`true\`):`,
    ...report.perProcess.map((line) => `  ${line.variant.padEnd(width)}  ${line.medianMs.toFixed(2).padStart(7)} ms  (+${line.addedMs.toFixed(2)} ms)`),
    `per run: network namespace ${report.perRun.namespaceMs} ms, nftables table ${report.perRun.firewallMs} ms, teardown ${report.perRun.destroyMs} ms`,
  ];
}
