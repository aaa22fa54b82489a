// The half-open link: Toxiproxy's `timeout` toxic (timeout 0) on both streams at once lets
// nothing through and sends no FIN, so neither side learns that the connection is dead until its
// own idle timeout says so. The publisher cannot see the consumer close a connection it no
// longer hears from, but it sees the consumer connect again (the proxy dials the publisher for
// every connection it accepts, even while the toxic drops the bytes). A consumer that stays
// connected to nothing through a half-open stretch far longer than its CHAOSLAB_IDLE_MS has no
// idle timeout (contract section 5).

import type { Finding } from '../../../findings/verdict.js';
import type { RunFacts } from './facts.js';
import { seconds } from '../report/words.js';

/** Harness slack on top of the consumer's own limits: scheduling on a loaded machine. */
export const HALF_OPEN_SLACK_MS = 2000;

export interface HalfOpenSpan {
  from: number;
  to: number;
}

const blackhole = (detail: string, stream: 'upstream' | 'downstream'): boolean => {
  const [toxic, direction, ...attrs] = detail.split(' ');
  const timeout = attrs.find((a) => a.startsWith('timeout='))?.slice('timeout='.length) ?? '0';
  return toxic === 'timeout' && direction === stream && Number(timeout) === 0;
};

/** Where a `timeout` toxic (timeout 0) was in force on both streams at once (journal time; an open end is `end`). */
export function halfOpenSpans(windows: RunFacts['faultWindows'], end: number): HalfOpenSpan[] {
  const toxics = windows.filter((w) => w.kind === 'toxic');
  const ups = toxics.filter((w) => blackhole(w.detail, 'upstream'));
  const downs = toxics.filter((w) => blackhole(w.detail, 'downstream'));
  return ups
    .flatMap((u) => downs.map((d) => ({ from: Math.max(u.from, d.from), to: Math.min(u.to ?? end, d.to ?? end) })))
    .filter((s) => s.to > s.from)
    .sort((a, b) => a.from - b.from);
}

/**
 * Each half-open stretch long enough for an idle timeout, a backoff wait and a reconnect must
 * see a new connection of the consumer under test, if one of its processes lived through it.
 */
export function halfOpenProblems(facts: RunFacts, consumer: { idleMs: number; backoffCapMs: number }, end: number): Finding[] {
  const enough = consumer.idleMs + 1.5 * consumer.backoffCapMs + HALF_OPEN_SLACK_MS;
  const out: Finding[] = [];
  for (const span of halfOpenSpans(facts.faultWindows, end)) {
    if (span.to - span.from < enough) continue;
    const p = facts.consumers.find((c) => c.startedAt !== undefined && c.startedAt <= span.from && (c.exit === undefined || c.exit.t >= span.to));
    if (!p) continue;
    if (facts.conns.consumer.some((c) => c.openedAt > span.from && c.openedAt <= span.to)) continue;
    const held = p.conns.filter((c) => c.openedAt <= span.from).at(-1);
    out.push({
      code: 'half-open-kept',
      text:
        `process ${p.incarnation} kept ${held ? `connection ${held.conn}` : 'its connection'} through ${seconds(span.to - span.from)} of a half-open link ` +
        `(Toxiproxy \`timeout\` both ways, from ${seconds(span.from)}): it received nothing at all for far longer than CHAOSLAB_IDLE_MS (${consumer.idleMs} ms), ` +
        'yet it never closed the connection and connected again — without an idle timeout a half-open connection stays open for ever: close a connection on which nothing at all came for CHAOSLAB_IDLE_MS, then reconnect (CONTRACT.md §5)',
      subject: { process: { role: 'consumer', incarnation: p.incarnation }, t: span.from },
    });
  }
  return out;
}
