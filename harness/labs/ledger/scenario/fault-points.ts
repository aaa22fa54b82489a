// The ledger lab's fault points: where in its traffic a shared fault starts or ends. The lab's
// plug-in declares them, and its checker words a trigger that never came with them.

import type { FaultPointSpec } from '../../../scenario/fault-points.js';

export const LEDGER_FAULT_POINTS: Record<string, FaultPointSpec> = {
  before_event: { description: 'Before EVENT <seq> is first sent.', value: 'seq', canEnd: true, random: true, describe: (seq) => `before EVENT ${seq}` },
  on_ack: { description: 'When ACK <seq> first arrives.', value: 'seq', canEnd: true, describe: (seq) => `ACK ${seq} arrived` },
  on_resume: {
    description: 'When the n-th RESUME arrives on the stream (1-based).',
    value: 'ordinal',
    canEnd: false,
    describe: (n) => `RESUME #${n} arrived`,
  },
};
