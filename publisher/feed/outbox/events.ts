// An outbox row as the event frame a consumer receives. The payload members follow the log
// type: a Transfer moves `amount` from `from` to `to`; an Approval lets `spender` move up to
// `amount` of `owner`'s tokens (and changes no balance).

import { formatCursor } from '../../../protocol/feed/cursor.js';
import { encodeEvent } from '../../../protocol/feed/encode.js';
import type { EventPayload } from '../../../protocol/feed/frames.js';
import type { RealEvent } from '../server/misbehaviour.js';
import type { OutboxRow } from './schema.js';

export function eventOf(row: OutboxRow): RealEvent {
  const cursor = formatCursor({ chainId: row.chain_id, blockNumber: row.block_number, logIndex: row.log_index });
  const common = { amount: row.amount, txHash: row.tx_hash, blockHash: row.block_hash };
  const payload: EventPayload =
    row.type === 'Transfer' ? { from: row.from_account, to: row.to_account, ...common } : { owner: row.from_account, spender: row.to_account, ...common };
  return { cursor, type: row.type, payload };
}

export const encodeRealEvent = (event: RealEvent): string => encodeEvent(event.cursor, event.type, event.payload);
