// The bad clients, the half-open one and the pinger (server contract section 5). A bad frame
// (not JSON, a line past 1 MiB) is answered by a close with nothing sent first; a client that is
// silent is pinged after CHAOSLAB_PING_MS without a frame and closed after CHAOSLAB_IDLE_MS
// without a byte; a ping is answered by a pong with its id, and a client that is heard stays open.

import type { Finding } from '../../../../findings/verdict.js';
import { plural, seconds } from '../../report/words.js';
import { type ClientFacts, endWords } from './facts.js';
import type { BadFrameSent } from '../server-problems.js';

/** Slack for the harness's own timing of the server's timers (scheduling under load, the proxy's hop). */
export const TIMER_SLACK_MS = 1000;

const BAD_FRAME = { garbage: 'a line that is not JSON', oversized: 'a 2 MiB line' } as const;

/** A bad client's bad frame as it was sent (its first line), to name a crash it caused; none before it sent it. */
export function badFrameSent(f: ClientFacts, kind: 'garbage' | 'oversized'): BadFrameSent | undefined {
  const first = f.sent[0];
  return first && { who: `the ${kind} client \`${f.name}\``, what: BAD_FRAME[kind], t: first.t };
}

/**
 * A bad first frame closes the connection with nothing sent. The oversized client's line is bad
 * only once the server has read its first MiB, which the run's 4 KiB buffers and the proxy carry
 * slowly (on a loaded machine 1 to 8 s): pings until then are the server's duty (a connection
 * it has sent nothing on for PING_MS), and the harness cannot tell when it had read that far, so
 * they are not counted; anything else (a snapshot, a pong) is.
 */
export function judgeBadClient(f: ClientFacts, kind: 'garbage' | 'oversized'): Finding[] {
  const who = `the ${kind} client \`${f.name}\``;
  const bad = BAD_FRAME[kind];
  const out: Finding[] = [];
  const sent = kind === 'oversized' ? f.read.filter((r) => r.op !== 'ping') : f.read;
  if (sent.length > 0)
    out.push({
      code: 'sent-after-bad-frame',
      text: `the server sent ${plural(sent.length, 'frame')} to ${who} after its bad frame (${bad}), first ${sent[0]!.line.trim().slice(0, 100)}: a bad frame is answered by closing the connection, sending nothing first (server contract §5)`,
      subject: { t: sent[0]!.t },
    });
  if (!f.close || f.close.by === 'consumer')
    out.push({
      code: 'bad-client-not-closed',
      text: `${who} sent ${bad} as its first frame and the server did not close the connection (${endWords(f)} at the end of the run): a bad frame closes the connection (server contract §5)`,
    });
  return out;
}

/** Longest time the client read nothing while open, from its subscribe. */
function longestSilence(f: ClientFacts, from: number, until: number): { ms: number; at: number } {
  let last = from;
  let worst = { ms: 0, at: from };
  for (const t of [...f.read.map((r) => r.t), until]) {
    if (t - last > worst.ms) worst = { ms: t - last, at: last };
    last = Math.max(last, t);
  }
  return worst;
}

export function judgeHalfOpen(f: ClientFacts, pingMs: number, idleMs: number): Finding[] {
  const who = `the half-open client \`${f.name}\` (it subscribed, then sent nothing and ignored pings)`;
  const lastByte = f.sent.at(-1)?.t ?? f.openedAt ?? 0;
  const closedByServer = f.close && f.close.by !== 'consumer' ? f.close : undefined;
  const end = f.close?.t ?? lastByte;
  const out: Finding[] = [];
  const pings = f.read.filter((r) => r.op === 'ping');
  if (pings.length === 0 && end - lastByte > pingMs + TIMER_SLACK_MS)
    out.push({
      code: 'no-ping',
      text: `no ping on a silent connection: ${who} got no ping in ${seconds(end - lastByte)} with nothing else sent to it (CHAOSLAB_PING_MS is ${pingMs} ms): the server must ping after that long without sending (server contract §5)`,
      subject: { t: lastByte + pingMs },
    });
  else {
    const silence = longestSilence(f, lastByte, closedByServer?.t ?? end);
    if (silence.ms > pingMs + TIMER_SLACK_MS && !closedByServer)
      out.push({
        code: 'ping-late',
        text: `${who} read nothing for ${seconds(silence.ms)} (CHAOSLAB_PING_MS is ${pingMs} ms): pings must come after that long without sending (server contract §5)`,
        subject: { t: silence.at },
      });
  }
  if (!closedByServer)
    out.push({
      code: 'idle-not-closed',
      text: `no idle close: ${who} was still open ${seconds(end - lastByte)} after its last byte (CHAOSLAB_IDLE_MS is ${idleMs} ms) when the harness closed it: a connection on which nothing arrived for that long must be closed (server contract §5)`,
      subject: { t: lastByte + idleMs },
    });
  else if (closedByServer.t - lastByte < idleMs - 100)
    out.push({
      code: 'idle-closed-early',
      text: `${who} was closed ${seconds(closedByServer.t - lastByte)} after its last byte, before CHAOSLAB_IDLE_MS (${idleMs} ms) had passed (server contract §5)`,
      subject: { t: closedByServer.t },
    });
  const reset = f.read.find((r) => r.op === 'reset');
  if (closedByServer && reset)
    out.push({
      code: 'reset-on-idle',
      text: `${who} read ${reset.line.trim()} before its idle close: an idle close sends nothing first (server contract §5)`,
      subject: { t: reset.t },
    });
  return out;
}

export function judgePinger(f: ClientFacts, windUpAt: number | undefined): Finding[] {
  const who = `the pinging client \`${f.name}\``;
  const out: Finding[] = [];
  const pongs = new Set(f.read.filter((r) => r.op === 'pong').map((r) => JSON.stringify(r.frame?.id)));
  const sentIds = f.sent.flatMap((s) => {
    try {
      const frame = JSON.parse(s.line) as { op?: unknown; id?: unknown };
      return frame.op === 'ping' ? [{ t: s.t, id: JSON.stringify(frame.id) }] : [];
    } catch {
      return [];
    }
  });
  const end = f.close?.t ?? windUpAt ?? Infinity;
  const unanswered = sentIds.filter((p) => !pongs.has(p.id) && p.t < end - TIMER_SLACK_MS);
  if (unanswered.length > 0)
    out.push({
      code: 'ping-unanswered',
      text: `${who} sent ${plural(sentIds.length, 'ping')}; ${plural(unanswered.length, 'was', 'were')} never answered with a pong of the same id (ids ${unanswered
        .slice(0, 4)
        .map((p) => p.id)
        .join(', ')}) (server contract §5)`,
      subject: { t: unanswered[0]!.t },
    });
  const strange = [...pongs].filter((id) => !sentIds.some((p) => p.id === id));
  if (strange.length > 0)
    out.push({
      code: 'pong-wrong-id',
      text: `${who} got a pong with id ${strange[0]}, which it never sent in a ping: a pong carries its ping's id (server contract §5)`,
    });
  if (f.close && f.close.by !== 'consumer')
    out.push({
      code: 'heard-client-closed',
      text: `${who} pinged all along and was ${endWords(f)} at ${seconds(f.close.t)}: a client that is heard must stay open`,
      subject: { t: f.close.t },
    });
  return out;
}
