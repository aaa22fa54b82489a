// Real packet loss in a sealed run's network namespace (issue 12): nftables drops a share of the
// packets to and from the consumer's proxy port, both ways, in the kernel, so TCP retransmits,
// stalls and backs off as on a lossy link. Toxiproxy cannot do this: it is a TCP proxy.
//
//   table inet chaoslab_loss {
//     counter dropped { }
//     counter passed { }
//     chain output {
//       type filter hook output priority -10; policy accept;
//       tcp dport 41234 numgen random mod 100 < 10 counter name "dropped" drop
//       tcp sport 41234 numgen random mod 100 < 10 counter name "dropped" drop
//       tcp dport 41234 counter name "passed"
//       tcp sport 41234 counter name "passed"
//     }
//   }
//
// On loopback every packet crosses `output` once, so one chain sees both directions. Only the
// proxy port matches: Toxiproxy's upstream connection, the control's proxy and the API stay
// clean. Each packet is an independent draw, so `dropped` out of `dropped + passed` is binomial
// (loss-check.ts judges it). The loopback must carry real packets: see LOOPBACK_LINK_ARGS.
// The table is this module's own, beside the seal's (firewall.ts); it dies with the namespace.

import type { Counter } from './firewall.js';
import { requireTool, type ToolResult } from './tools.js';

export const LOSS_TABLE = 'chaoslab_loss';

/**
 * `ip link set lo …` arguments for a namespace that will carry loss. MTU 1500 alone is not
 * enough: segmentation offload still hands netfilter 64 KB super-packets (measured here: 28 KB
 * on average), so one drop would lose dozens of segments; gso_max_segs 1 makes every packet
 * netfilter sees one segment (under 1500 bytes).
 */
export const LOOPBACK_LINK_ARGS = ['mtu', '1500', 'gso_max_segs', '1'] as const;

/** Runs a program to completion in the namespace that gets the loss (tests: a namespace's exec). */
export type NamespaceExec = (argv: readonly string[], options?: { input?: string }) => Promise<ToolResult>;

export interface LossCounters {
  dropped: Counter;
  passed: Counter;
}

function checkArgs(port: number, percent: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`loss: port must be 1..65535, not ${port}`);
  if (!Number.isInteger(percent) || percent < 1 || percent > 99) throw new RangeError(`loss: percent must be an integer 1..99, not ${percent}`);
}

/** The rules of the chain, one a line, as nft lists them (the journal records these). */
export function lossRules(port: number, percent: number): string[] {
  checkArgs(port, percent);
  return [
    `tcp dport ${port} numgen random mod 100 < ${percent} counter name "dropped" drop`,
    `tcp sport ${port} numgen random mod 100 < ${percent} counter name "dropped" drop`,
    `tcp dport ${port} counter name "passed"`,
    `tcp sport ${port} counter name "passed"`,
  ];
}

/** The nft script that creates the table (pure; the module comment shows its shape). */
export function lossRuleset(port: number, percent: number, table = LOSS_TABLE): string {
  return [
    `table inet ${table} {`,
    '  counter dropped { }',
    '  counter passed { }',
    '  chain output {',
    '    type filter hook output priority -10; policy accept;',
    ...lossRules(port, percent).map((rule) => `    ${rule}`),
    '  }',
    '}',
    '',
  ].join('\n');
}

async function nft(exec: NamespaceExec, args: readonly string[], input?: string): Promise<string> {
  const result = await exec([requireTool('nft'), ...args], input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`nft ${args.join(' ')} (packet loss) failed: ${result.summary}`);
  return result.stdout;
}

/** Installs the loss table (replacing one of the same name), counters at zero. */
export async function installLoss(exec: NamespaceExec, port: number, percent: number, table = LOSS_TABLE): Promise<void> {
  await nft(exec, ['-f', '-'], `add table inet ${table}\ndelete table inet ${table}\n${lossRuleset(port, percent, table)}`);
}

/** The two named counters, read back from nftables. */
export async function readLossCounters(exec: NamespaceExec, table = LOSS_TABLE): Promise<LossCounters> {
  return parseLossCounters(await nft(exec, ['-j', 'list', 'counters', 'table', 'inet', table]), table);
}

/** Parses `nft -j list counters` output (exported for tests); a counter that is missing is an error, never a zero. */
export function parseLossCounters(json: string, table = LOSS_TABLE): LossCounters {
  const parsed = JSON.parse(json) as { nftables?: Array<{ counter?: { name?: string; table?: string; packets?: number; bytes?: number } }> };
  const found: Partial<LossCounters> = {};
  for (const item of parsed.nftables ?? []) {
    const c = item.counter;
    if (c?.table === table && (c.name === 'dropped' || c.name === 'passed')) found[c.name] = { packets: c.packets ?? 0, bytes: c.bytes ?? 0 };
  }
  if (!found.dropped || !found.passed) throw new Error(`nftables table ${table} has no ${found.dropped ? 'passed' : 'dropped'} counter`);
  return { dropped: found.dropped, passed: found.passed };
}

/** Removes the table: the loss ends (a namespace that is destroyed takes it along anyway). */
export async function removeLoss(exec: NamespaceExec, table = LOSS_TABLE): Promise<void> {
  await nft(exec, ['-f', '-'], `add table inet ${table}\ndelete table inet ${table}\n`);
}
