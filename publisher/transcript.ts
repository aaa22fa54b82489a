// What the publisher saw and did on each connection, with monotonic timestamps. The harness
// journals these entries; the checker reads them back to judge RESUMEs and ACKs.

export type CloseParty = 'publisher' | 'consumer' | 'reset';

export interface SocketEnds {
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
}

/** A socket's two ends, when it has both (it always has, right after accept). */
export function endsOf(socket: { localAddress?: string; localPort?: number; remoteAddress?: string; remotePort?: number }): SocketEnds | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || localPort === undefined || remoteAddress === undefined || remotePort === undefined) return undefined;
  return { localAddress, localPort, remoteAddress, remotePort };
}

export type TranscriptEvent =
  /** A connection accepted; `ends` are its two addresses, so whoever journals it can tell who connected. */
  | { kind: 'open'; tag?: string; ends?: SocketEnds }
  /** A line received from the consumer, as text; `error` when it broke the grammar. */
  | { kind: 'recv'; line: string; error?: string }
  /** A line (or deliberate raw bytes, with a `note` saying which misbehaviour) sent to the consumer. */
  | { kind: 'send'; line: string; note?: string }
  /** The publisher's own state changed (retention moved, fell silent, ...). */
  | { kind: 'note'; text: string }
  | { kind: 'close'; by: CloseParty; reason: string };

export type TranscriptEntry = { t: number; stream: string; conn: number } & TranscriptEvent;

export type TranscriptSink = (entry: TranscriptEntry) => void;
