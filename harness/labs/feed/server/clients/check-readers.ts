// The slow reader and the never-reading client (server contract section 4): what they read must
// be the chain's events of their accounts after their snapshot, in order, with no gap — a queue
// may only be dropped whole, with `reset slow-consumer` — and nothing may follow a reset. A slow
// reader whose backlog at the end of the script is far past what the run's socket buffers and
// the queue can hold must have been reset; a never-reading client must have been closed (reset,
// or closed as idle).

import type { Finding } from '../../../../findings/verdict.js';
import type { RealEvent } from '../../../../../publisher/feed/server/misbehaviour.js';
import { cursorList, plural } from '../../report/words.js';
import type { ClientFacts, ReadLine } from './facts.js';

/**
 * Frames the run's path can hold between the server's socket and the client's reads, with the
 * 4 KiB socket buffers of a sealed run: measured at about 85 event frames (the server's send
 * buffer, Toxiproxy's two sockets and its copy buffer, the client's receive buffer and its 4 KiB
 * read-ahead; the reference's reset reached a client that stopped reading behind 84 events).
 * A backlog past twice the queue plus this allowance cannot be anywhere but the server's memory.
 */
export const PATH_ALLOWANCE_FRAMES = 500;

const eventKey = (e: RealEvent): string => JSON.stringify({ op: 'event', cursor: e.cursor, type: e.type, payload: e.payload });
const frameKey = (r: ReadLine): string => JSON.stringify({ op: 'event', cursor: r.frame?.cursor, type: r.frame?.type, payload: r.frame?.payload });

export interface ReaderJudgement {
  findings: Finding[];
  eventsRead: number;
  reset?: string;
  /** Events due but not read when the script was over. */
  behindAtSceneOver?: number;
}

const at = (t: number, cursors?: string[]) => ({ subject: { t, ...(cursors ? { cursors } : {}) } });

/** Events after the snapshot, in order, no gap, none after a reset. */
function sequenceFindings(f: ClientFacts, who: string, due: RealEvent[], out: ReaderJudgement): void {
  let next = 0;
  let afterReset = 0;
  for (const r of f.read) {
    if (out.reset !== undefined) {
      afterReset++;
      continue;
    }
    if (r.op === 'reset') out.reset = String(r.frame?.reason);
    if (r.op !== 'event') continue;
    out.eventsRead++;
    const cursor = String(r.frame?.cursor);
    const expected = due[next];
    if (expected && frameKey(r) === eventKey(expected)) {
      next++;
      continue;
    }
    const skipTo = due.findIndex((e, i) => i > next && e.cursor === cursor);
    if (skipTo > next) {
      const lost = due.slice(next, skipTo).map((e) => e.cursor);
      out.findings.push({
        code: 'dropped-silently',
        text: `a frame dropped without a reset: ${who} read ${next === 0 ? 'its snapshot' : due[next - 1]!.cursor} then ${cursor}: ${plural(lost.length, 'event')} of its accounts between them (${cursorList(lost)}) ${lost.length === 1 ? 'was' : 'were'} never sent, with no reset slow-consumer before the gap — a full queue must be dropped whole with a reset, never a frame silently (server contract §4)`,
        ...at(r.t, lost),
      });
      return;
    }
    out.findings.push({
      code: 'client-wrong-frame',
      text: `${who} read an event at ${cursor} where the chain's next event of its accounts is ${expected?.cursor ?? 'none'}: frames must be the outbox's rows in cursor order, exactly as committed (server contract §3)`,
      ...at(r.t, [cursor]),
    });
    return;
  }
  if (afterReset > 0)
    out.findings.push({
      code: 'frames-after-reset',
      text: `${who} read ${plural(afterReset, 'frame')} after the server's reset ${out.reset}: a reset drops everything pending and is the connection's last frame (server contract §4)`,
      ...at(f.read.at(-1)!.t),
    });
}

export function judgeReader(f: ClientFacts, kind: 'slow-reader' | 'never-reads', due: RealEvent[], queueLimit: number): ReaderJudgement {
  const who = `the ${kind} client \`${f.name}\``;
  const out: ReaderJudgement = { findings: [], eventsRead: 0 };
  const snapshot = f.read.find((r) => r.op !== 'ping' && r.op !== 'pong');
  if (snapshot?.op !== 'snapshot') {
    out.findings.push({
      code: 'client-no-snapshot',
      text: `${who} subscribed with cursor null and its first frame was ${snapshot ? snapshot.line.trim().slice(0, 120) : 'none'}, not a snapshot (server contract §3)`,
    });
    return out;
  }
  const after = String(snapshot.frame?.cursor);
  const owed = due.filter((e) => e.cursor > after);
  sequenceFindings(f, who, owed, out);
  if (out.reset !== undefined && out.reset !== 'slow-consumer')
    out.findings.push({ code: 'client-wrong-reset', text: `${who} was reset with reason ${out.reset}, expected slow-consumer (server contract §4)` });
  if (f.sceneOver) {
    const readBy = f.read.slice(0, f.sceneOver.linesRead).filter((r) => r.op === 'event').length;
    out.behindAtSceneOver = owed.length - readBy;
  }
  if (out.reset !== undefined || out.findings.length > 0) return out;
  if (kind === 'slow-reader' && out.behindAtSceneOver !== undefined && out.behindAtSceneOver > 2 * queueLimit + PATH_ALLOWANCE_FRAMES)
    out.findings.push({
      code: 'no-slow-consumer-reset',
      text: `a queue without a bound: ${who} was ${plural(out.behindAtSceneOver, 'event')} behind when the script was over (far more than the queue limit of ${queueLimit} and the ~${PATH_ALLOWANCE_FRAMES} frames the run's small socket buffers can hold) and the server never sent reset slow-consumer: it held the backlog in its own memory (server contract §4)`,
      subject: { t: f.sceneOver!.t },
    });
  if (kind === 'never-reads' && (!f.close || f.close.by === 'consumer'))
    out.findings.push({
      code: 'never-reader-kept',
      text: `${who} read nothing and was neither reset (slow-consumer) nor closed as idle by the server before the run was over: a client that does not read must cost the server at most its queue (server contract §4, §5)`,
    });
  return out;
}
