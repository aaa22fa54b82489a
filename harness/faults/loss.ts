// Packet loss on the consumer's path (harness/sandbox/loss.ts): installed in the run's network
// namespace on the proxy's listening port; lifted by reading the counters back, then removing
// the table. The counters go to the journal as a `loss` entry, the evidence the loss check
// (harness/judge/loss-check.ts) judges. Unsealed runs never get here: the runner skips them.
import type { FaultEffect } from '../scenario/types.js';
import { installLoss, LOSS_TABLE, lossRules, readLossCounters, removeLoss } from '../sandbox/loss.js';
import type { Effect } from './effect.js';

export const applyLoss: Effect<Extract<FaultEffect, { kind: 'loss' }>> = async ({ percent }, name, { proxy, netns }) => {
  if (!netns) throw new Error("packet loss needs a sealed run's own network namespace (nftables); this run has none");
  const port = proxy.listen.port;
  await installLoss(netns, port, percent);
  return {
    detail: `${percent} % of the packets to and from port ${port} (the consumer's proxy) dropped, both ways (nftables table ${LOSS_TABLE})`,
    lift: async () => {
      const { dropped, passed } = await readLossCounters(netns);
      await removeLoss(netns);
      const total = dropped.packets + passed.packets;
      const share = total > 0 ? ` (${((100 * dropped.packets) / total).toFixed(1)} %)` : '';
      return {
        detail: `loss removed: ${dropped.packets} of ${total} packets dropped${share}`,
        evidence: { type: 'loss', name, percent, port, rules: lossRules(port, percent), dropped, passed },
      };
    },
  };
};
