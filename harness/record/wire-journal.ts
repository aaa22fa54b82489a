// Journals a publisher's transcript with bounds, because the consumer decides what it sends:
// each line is kept up to a length (the rest counted), and what a consumer sends on one
// connection is kept up to a total (the rest counted on the connection's close). Legitimate
// traffic stays far below both; a consumer flooding the socket cannot flood the journal.

import type { SocketEnds, TranscriptEntry } from '../../publisher/transcript.js';
import type { JournalWriter, Peer } from './journal.js';
import type { ProcessRef } from '../findings/verdict.js';

export const WIRE_LIMITS = {
  /** Characters of one line kept in the journal. */
  lineChars: 4096,
  /** Characters a consumer's lines may take in the journal, per connection (100 000 ACKs take about 1 MB). */
  recvCharsPerConnection: 8 * 1024 * 1024,
};

/** What the harness makes of a new connection: who is at its far end, and whose it is after all. */
export interface Attribution {
  peer: Peer;
  /** The owner the lab named, kept, corrected (the process found), or dropped (none of this run's). */
  owner: ProcessRef | undefined;
}

/**
 * The function a lab hands its publisher as its transcript sink; `ownerOf` names the process
 * behind a new connection (the lab's guess), `attribute` (unsealed runs) looks up the process at
 * its other end and says whose it is: a connection not tied to this run is nobody's.
 */
export function wireRecorder(
  journal: JournalWriter,
  ownerOf: (entry: TranscriptEntry) => ProcessRef | undefined,
  attribute?: (ends: SocketEnds, stream: string, guess: ProcessRef | undefined) => Attribution,
  limits = WIRE_LIMITS,
) {
  const perConnection = new Map<string, { chars: number; omittedLines: number; omittedChars: number }>();
  return ({ t: _t, ...entry }: TranscriptEntry): void => {
    const key = `${entry.stream}#${entry.conn}`;
    let used = perConnection.get(key);
    if (!used) perConnection.set(key, (used = { chars: 0, omittedLines: 0, omittedChars: 0 }));
    if (entry.kind === 'open') {
      const guess = ownerOf({ t: 0, ...entry });
      const found = entry.ends && attribute ? attribute(entry.ends, entry.stream, guess) : undefined;
      const owner = found ? found.owner : guess;
      journal.write({ type: 'wire', ...entry, ...(owner ? { owner } : {}), ...(found ? { peer: found.peer } : {}) });
      return;
    }
    if (entry.kind === 'close') {
      const omitted = used.omittedLines > 0 ? { omitted: { lines: used.omittedLines, chars: used.omittedChars } } : {};
      journal.write({ type: 'wire', ...entry, ...omitted });
      return;
    }
    if (entry.kind === 'note') {
      journal.write({ type: 'wire', ...entry });
      return;
    }
    if (entry.kind === 'recv' && used.chars + Math.min(entry.line.length, limits.lineChars) > limits.recvCharsPerConnection) {
      used.omittedLines++;
      used.omittedChars += entry.line.length;
      return;
    }
    const cut = entry.line.length - limits.lineChars;
    const line = cut > 0 ? entry.line.slice(0, limits.lineChars) : entry.line;
    if (entry.kind === 'recv') used.chars += line.length;
    journal.write({ type: 'wire', ...entry, line, ...(cut > 0 ? { truncated: cut } : {}) });
  };
}
