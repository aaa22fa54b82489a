// Why a journaled feed line breaks the wire grammar (contract section 2), in the codec's words,
// or undefined: for the reports' red lines and the checker's bad-frame findings. A frame of an
// unknown op is no break (it is ignored). The run's chain id is not known line by line, so a
// cursor of another chain is left to the checker, which knows it.

import { FrameError, parseClientFrame, parseServerFrame } from '../../../../protocol/feed/frames.js';
import { MAX_LINE_BYTES } from '../../../../protocol/feed/lines.js';

const stripLf = (line: string): string => (line.endsWith('\n') ? line.slice(0, -1) : line);

/**
 * `send` lines went from the publisher to a consumer, `recv` lines the other way. `cut`: the
 * characters the journal left out of the line: a cut line is judged by its length alone (its
 * kept head is never valid JSON, whether the whole line was or not).
 */
export function frameBreak(line: string, direction: 'send' | 'recv', cut = 0): string | undefined {
  if (cut > 0) {
    const bytes = Buffer.byteLength(line, 'utf8') + cut;
    return bytes > MAX_LINE_BYTES + 1 ? `a line of about ${bytes} bytes, longer than the ${MAX_LINE_BYTES}-byte limit` : undefined;
  }
  try {
    (direction === 'send' ? parseServerFrame : parseClientFrame)(stripLf(line));
    return undefined;
  } catch (error) {
    if (error instanceof FrameError) return error.reason;
    throw error;
  }
}
