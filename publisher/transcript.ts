// What the publisher saw and did on each connection, with monotonic timestamps. The harness
// journals these entries; the checker reads them back to judge RESUMEs and ACKs.

export type CloseParty = 'publisher' | 'consumer' | 'reset';

export type TranscriptEvent =
  | { kind: 'open'; tag?: string }
  /** A line received from the consumer, as text; `error` when it broke the grammar. */
  | { kind: 'recv'; line: string; error?: string }
  /** A line (or deliberate raw bytes, with a `note` saying which misbehaviour) sent to the consumer. */
  | { kind: 'send'; line: string; note?: string }
  /** The publisher's own state changed (retention moved, fell silent, ...). */
  | { kind: 'note'; text: string }
  | { kind: 'close'; by: CloseParty; reason: string };

export type TranscriptEntry = { t: number; stream: string; conn: number } & TranscriptEvent;

export type TranscriptSink = (entry: TranscriptEntry) => void;
