// Deliberate publisher misbehaviour on one connection of a stream. Each rule is anchored to
// the moment EVENT <seq> would be sent on that connection, so it lands at the same place in
// the stream on every run. Literal bytes come from the scenario, never from our own codec:
// a malformed line must be exactly what the scenario wrote.

export type MisbehaviourAction =
  /** Send EVENT seq, then the very same line again. */
  | 'duplicate'
  /** Never send EVENT seq (a gap); carry on with the next one. */
  | 'skip'
  /** Send `bytes` instead of EVENT seq. */
  | 'replace'
  /** Send `bytes` just before EVENT seq, then EVENT seq as usual. */
  | 'insert'
  /** Send `bytes` (if any) instead of EVENT seq, then fall silent: send nothing more, keep the connection open. */
  | 'silence'
  /** Send `bytes` (if any) instead of EVENT seq, then close the connection. */
  | 'close';

export interface Misbehaviour {
  action: MisbehaviourAction;
  seq: number;
  /** Literal bytes (Latin-1) for replace / insert / silence / close. */
  bytes?: string;
  /** Which connection of the stream, 1-based; default 1. */
  connection?: number;
}

/** What the connection does at EVENT seq: a list of steps, in order. */
export type SendStep = { send: 'event' } | { send: 'bytes'; bytes: string; note: string } | { stop: 'silence' } | { stop: 'close' };

/**
 * True when a rule waits for every ACK already owed before it acts: a consumer that rightly
 * hangs up at a bad line may reset the connection, and a reset throws away ACKs it had not
 * yet sent. Only a duplicate, which a consumer must take in its stride, goes out at once.
 */
export function waitsForAcks(rules: readonly Misbehaviour[], connection: number, seq: number): boolean {
  return rules.some((r) => r.seq === seq && (r.connection ?? 1) === connection && r.action !== 'duplicate');
}

export function stepsAt(rules: readonly Misbehaviour[], connection: number, seq: number): SendStep[] {
  const rule = rules.find((r) => r.seq === seq && (r.connection ?? 1) === connection);
  if (!rule) return [{ send: 'event' }];
  const bytes = rule.bytes ?? '';
  const note = `misbehaviour: ${rule.action} at EVENT ${seq}`;
  switch (rule.action) {
    case 'duplicate':
      return [{ send: 'event' }, { send: 'event' }];
    case 'skip':
      return [];
    case 'replace':
      return [{ send: 'bytes', bytes, note }];
    case 'insert':
      return [{ send: 'bytes', bytes, note }, { send: 'event' }];
    case 'silence':
      return [...(bytes ? [{ send: 'bytes', bytes, note } as const] : []), { stop: 'silence' }];
    case 'close':
      return [...(bytes ? [{ send: 'bytes', bytes, note } as const] : []), { stop: 'close' }];
  }
}
