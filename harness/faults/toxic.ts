// A Toxiproxy toxic on the proxy in front of the consumer under test. Toxics belong to the
// proxy, not to a connection: one left in place also hits the restarted consumer.
import type { FaultEffect } from '../scenario/types.js';
import type { Effect } from './effect.js';

export const applyToxic: Effect<Extract<FaultEffect, { kind: 'toxic' }>> = async (spec, name, { proxy }) => {
  await proxy.addToxic({ name, type: spec.toxic, stream: spec.stream, toxicity: 1, attributes: spec.attributes });
  const attrs = Object.entries(spec.attributes)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return {
    detail: `${spec.toxic} ${spec.stream}${attrs ? ` ${attrs}` : ''}`,
    lift: async () => {
      await proxy.removeToxic(name);
      return `${spec.toxic} removed`;
    },
  };
};
