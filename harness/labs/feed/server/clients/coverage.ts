// Whether each of the harness's own clients met the server as its kind means to (coverage as
// data, findings/coverage.ts), from its wire record: a bad client connected and sent its bad
// frame; the half-open client stayed silent longer than CHAOSLAB_PING_MS while its connection
// lived (so a ping was due); the pinger pinged and its connection outlived CHAOSLAB_IDLE_MS (so a
// server that forgets what it hears would have closed it); a slow or never-reading client's
// queue overflowed — the server reset it or closed it, or its backlog was past what the queue and
// the run's socket buffers can hold (then check-readers.ts names the missing reset).

import type { FaultCoverage } from '../../../../findings/coverage.js';
import type { JournalEntry } from '../../../../record/journal.js';
import type { Expected } from '../../check/state.js';
import { plural, seconds } from '../../report/words.js';
import type { FeedPlan, ServerUnderTestPlan } from '../../scenario/plan.js';
import { judgeReader, PATH_ALLOWANCE_FRAMES } from './check-readers.js';
import { type ClientFacts, clientFactsOf, endWords } from './facts.js';
import type { ClientPlan } from './schema.js';

const ended = (f: ClientFacts): string => `${endWords(f)}${f.close ? ` at ${seconds(f.close.t)}` : ''}`;

function badRow(f: ClientFacts, c: ClientPlan): Pick<FaultCoverage, 'took' | 'how'> {
  const first = f.sent[0];
  const what = c.kind === 'garbage' ? 'a line that is not JSON' : 'a 2 MiB line';
  return first
    ? { took: true, how: `the ${c.kind} client \`${c.name}\` connected and sent ${what} as its first frame at ${seconds(first.t)}; it was ${ended(f)}` }
    : { took: false, how: `the ${c.kind} client \`${c.name}\` connected but never sent its bad frame` };
}

function halfOpenRow(f: ClientFacts, c: ClientPlan, plan: FeedPlan): Pick<FaultCoverage, 'took' | 'how'> {
  const lastByte = f.sent.at(-1)?.t ?? f.openedAt ?? 0;
  const end = f.close?.t ?? f.read.at(-1)?.t ?? lastByte;
  const silent = end - lastByte;
  const pingMs = plan.server.pingMs;
  return silent >= pingMs
    ? {
        took: true,
        how: `the half-open client \`${c.name}\` fell silent at ${seconds(lastByte)} and its connection lived ${seconds(silent)} more (CHAOSLAB_PING_MS ${pingMs} ms): it was ${ended(f)}`,
      }
    : {
        took: false,
        how: `the half-open client \`${c.name}\` was silent only ${seconds(silent)} before its connection ended (${endWords(f)}), less than CHAOSLAB_PING_MS (${pingMs} ms): no ping was due`,
      };
}

function pingerRow(f: ClientFacts, c: ClientPlan, plan: FeedPlan): Pick<FaultCoverage, 'took' | 'how'> {
  const pings = f.sent.filter((s) => /"op"\s*:\s*"ping"/.test(s.line)).length;
  const from = f.sent[0]?.t ?? f.openedAt ?? 0;
  const lived = (f.close?.t ?? f.read.at(-1)?.t ?? from) - from;
  const idleMs = plan.server.idleMs;
  if (pings > 0 && lived > idleMs)
    return {
      took: true,
      how: `the pinger \`${c.name}\` sent ${plural(pings, 'ping')} over ${seconds(lived)}, longer than CHAOSLAB_IDLE_MS (${idleMs} ms); it was ${ended(f)}`,
    };
  return {
    took: false,
    how: `the pinger \`${c.name}\` sent ${plural(pings, 'ping')} over ${seconds(lived)}, ${pings === 0 ? 'none at all' : `not longer than CHAOSLAB_IDLE_MS (${idleMs} ms)`}: whether a heard client stays open was not tested`,
  };
}

function readerRow(
  f: ClientFacts,
  c: ClientPlan & { kind: 'slow-reader' | 'never-reads' },
  plan: FeedPlan,
  expected: Expected,
): Pick<FaultCoverage, 'took' | 'how'> {
  const j = judgeReader(f, c.kind, c.quiet ? [] : expected.events, plan.server.queueLimit);
  const who = `the ${c.kind} client \`${c.name}\``;
  const bound = 2 * plan.server.queueLimit + PATH_ALLOWANCE_FRAMES;
  const behind = j.behindAtSceneOver === undefined ? '' : `, ${plural(j.behindAtSceneOver, 'event')} behind when the script was over`;
  if (j.reset !== undefined)
    return { took: true, how: `${who} overflowed its queue: the server reset it (${j.reset}) after ${plural(j.eventsRead, 'event')}${behind}` };
  if (c.kind === 'never-reads' && f.close && f.close.by !== 'consumer')
    return { took: true, how: `${who} read nothing and the server ended it: it was ${ended(f)}${behind}` };
  if ((j.behindAtSceneOver ?? 0) > bound)
    return {
      took: true,
      how: `${who} overflowed its queue: it was ${plural(j.behindAtSceneOver!, 'event')} behind when the script was over, past the ${bound} the queue (limit ${plan.server.queueLimit}) and the socket buffers can hold`,
    };
  return {
    took: false,
    how: `${who} never overflowed its queue: it was not reset${behind || ''}, within the ${bound} events the queue (limit ${plan.server.queueLimit}) and the socket buffers can hold; it was ${ended(f)}`,
  };
}

/** One row per client of the harness. */
export function clientCoverage(journal: readonly JournalEntry[], plan: FeedPlan, under: ServerUnderTestPlan, expected: Expected): FaultCoverage[] {
  return under.clients.map((c) => {
    const f = clientFactsOf(journal, c.name);
    const base = { fault: `client ${c.name}`, kind: c.kind };
    if (f.openedAt === undefined) return { ...base, took: false, how: `the ${c.kind} client \`${c.name}\` never connected` };
    if (c.kind === 'garbage' || c.kind === 'oversized') return { ...base, ...badRow(f, c) };
    if (c.kind === 'half-open') return { ...base, ...halfOpenRow(f, c, plan) };
    if (c.kind === 'pinger') return { ...base, ...pingerRow(f, c, plan) };
    return { ...base, ...readerRow(f, { ...c, kind: c.kind }, plan, expected) };
  });
}
