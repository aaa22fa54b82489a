// The crowd's part of the verdict (fan-out, server contract sections 3 and 4): every client of the
// crowd got its snapshot, then every event of its accounts after it, in cursor order, with no gap,
// exactly as committed (the digest of its event frames against the chain's), and was neither
// reset nor closed: a thousand clients that read as fast as frames come are no slow consumers.
// One finding per kind of trouble, counting the clients it hit and naming the first.

import { createHash } from 'node:crypto';
import type { Finding, Verdict } from '../../../../../findings/verdict.js';
import type { JournalEntry } from '../../../../../record/journal.js';
import type { RealEvent } from '../../../../../../publisher/feed/server/misbehaviour.js';
import { plural } from '../../../report/words.js';
import { eventFrameKey } from './crowd.js';

type CrowdEntry = Extract<JournalEntry, { type: 'crowd-client' }>;
type Trouble = 'crowd-not-accepted' | 'crowd-no-snapshot' | 'crowd-gap' | 'crowd-wrong-frame' | 'crowd-behind' | 'crowd-reset' | 'crowd-closed';

/** What one client's record says is wrong, in words; none when it is right. */
export function crowdClientTrouble(c: CrowdEntry, due: readonly RealEvent[]): { code: Trouble; words: string } | undefined {
  const who = `client ${c.client}`;
  if (c.subscribedAt === undefined) return { code: 'crowd-not-accepted', words: `${who} could not connect (${c.close?.reason ?? 'no reason'})` };
  if (c.snapshot === undefined)
    return {
      code: 'crowd-no-snapshot',
      words: `${who} subscribed with cursor null and got ${c.firstFrame ? `first ${c.firstFrame}` : 'no frame'}, not a snapshot (server contract §3)`,
    };
  const owed = due.filter((e) => e.cursor > c.snapshot!);
  const wrongAt = c.events.findIndex((cursor, i) => owed[i]?.cursor !== cursor);
  if (wrongAt >= 0) {
    const got = c.events[wrongAt]!;
    const skipTo = owed.findIndex((e) => e.cursor === got);
    return skipTo > wrongAt
      ? {
          code: 'crowd-gap',
          words: `${who} read ${wrongAt === 0 ? 'its snapshot' : owed[wrongAt - 1]!.cursor} then ${got}: ${plural(skipTo - wrongAt, 'event')} of its accounts between them never came (server contract §4: a queue is dropped whole, with a reset)`,
        }
      : {
          code: 'crowd-wrong-frame',
          words: `${who} read an event at ${got} where the chain's next event of its accounts is ${owed[wrongAt]?.cursor ?? 'none'} (server contract §3)`,
        };
  }
  const digest = createHash('sha256');
  for (const e of owed.slice(0, c.events.length)) digest.update(eventFrameKey(e));
  if (digest.digest('hex') !== c.digest)
    return {
      code: 'crowd-wrong-frame',
      words: `${who} read the right cursors but not the outbox's events as committed (type or payload differ) (server contract §3)`,
    };
  if (c.reset !== undefined)
    return { code: 'crowd-reset', words: `${who} read every frame as it came and was reset ${c.reset} after ${plural(c.events.length, 'event')}` };
  if (c.close && c.close.by !== 'consumer')
    return {
      code: 'crowd-closed',
      words: `${who} was ${c.close.by === 'reset' ? 'reset (TCP RST)' : 'closed'} by the server after ${plural(c.events.length, 'event')}`,
    };
  if (c.events.length < owed.length)
    return { code: 'crowd-behind', words: `${who} had read ${c.events.length} of the ${owed.length} events due after its snapshot when the run was over` };
  return undefined;
}

const WHY: Record<Trouble, string> = {
  'crowd-not-accepted': 'could not connect: a server must accept every client',
  'crowd-no-snapshot': 'got no snapshot for their subscribe',
  'crowd-gap': 'missed events with no reset before the gap',
  'crowd-wrong-frame': 'read events that are not the chain’s next ones as committed',
  'crowd-reset': 'were reset though they read every frame as it came',
  'crowd-closed': 'were closed by the server before the run was over',
  'crowd-behind': 'had not read every event due when the run was over (the harness waited converge_ms)',
};

export interface CrowdVerdict {
  findings: Finding[];
  table?: Verdict['tables'][number];
  /** Clients journaled. */
  clients: number;
}

export function checkCrowd(journal: readonly JournalEntry[], planned: number, due: readonly RealEvent[]): CrowdVerdict {
  const entries = journal.filter((e): e is CrowdEntry & { t: number } => e.type === 'crowd-client');
  const troubles = new Map<Trouble, string[]>();
  for (const c of entries) {
    const trouble = crowdClientTrouble(c, due);
    if (trouble) troubles.set(trouble.code, [...(troubles.get(trouble.code) ?? []), trouble.words]);
  }
  const findings: Finding[] = [...troubles].map(([code, words]) => ({
    code,
    text: `${words.length} of the crowd's ${entries.length} clients ${WHY[code]}; first, ${words[0]}`,
  }));
  if (entries.length < planned)
    findings.push({
      code: 'crowd-not-accepted',
      text: `only ${entries.length} of the crowd's ${planned} clients were started: the run ended before the rest connected`,
    });
  const ok = entries.length - [...troubles.values()].reduce((sum, w) => sum + w.length, 0);
  const events = entries.reduce((sum, c) => sum + c.events.length, 0);
  return {
    findings,
    clients: entries.length,
    table: {
      id: 'crowd',
      title: `The crowd: ${planned} light clients of the harness's own, through one shared proxy`,
      columns: ['clients', 'served as due', 'events read', ...Object.keys(WHY)],
      rows: [{ label: 'crowd', cells: [entries.length, ok, events, ...Object.keys(WHY).map((code) => troubles.get(code as Trouble)?.length ?? 0)] }],
    },
  };
}
