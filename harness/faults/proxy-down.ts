// A cut: the proxy disabled. Toxiproxy closes its open connections and refuses new ones until
// it is enabled again.
import type { Effect } from './effect.js';

export const applyProxyDown: Effect<unknown> = async (_spec, _name, { proxy }) => {
  await proxy.setEnabled(false);
  return {
    detail: 'proxy disabled (connections closed, new ones refused)',
    lift: async () => {
      await proxy.setEnabled(true);
      return 'proxy enabled';
    },
  };
};
