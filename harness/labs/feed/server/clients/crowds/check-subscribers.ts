// The statistical snapshot race, judged per subscriber (server contract section 3): a null-cursor
// subscribe is due a snapshot, then every event of its accounts above the snapshot's cursor, in
// cursor order, exactly as committed, none missing. A row it lacks while it read later ones was
// lost; when that row was committed after the subscriber subscribed (above the outbox's head
// then), it came between the snapshot and the moment the server followed the outbox: the race,
// lost. Findings are data: the rows, their blocks, the head at the subscribe.

import type { RealEvent } from '../../../../../../publisher/feed/server/misbehaviour.js';
import type { Finding, Verdict } from '../../../../../findings/verdict.js';
import type { JournalEntry } from '../../../../../record/journal.js';
import { blockOf, cursorList, cursorSubject, plural, seconds } from '../../../report/words.js';
import { type ClientFacts, clientFactsOf, endWords } from '../facts.js';
import { subscriberName } from './subscribers.js';

export interface SubscriberJudgement {
  findings: Finding[];
  snapshotCursor?: string;
  eventsRead: number;
  /** Rows it lacks below the last one it read: lost. */
  lost: string[];
  /** Rows above the last one it read when the run was over. */
  missingAtEnd: string[];
}

/** Same type and payload, whatever the order of the frame's keys. */
function sameEvent(frame: Record<string, unknown>, due: RealEvent): boolean {
  const payload = frame.payload;
  if (frame.type !== due.type || typeof payload !== 'object' || payload === null) return false;
  const got = payload as Record<string, unknown>;
  const want = due.payload as unknown as Record<string, unknown>;
  const keys = Object.keys(want);
  return Object.keys(got).length === keys.length && keys.every((k) => got[k] === want[k]);
}

/** The blocks a list of cursors spans, in words. */
function blocksOf(cursors: readonly string[]): string {
  const first = blockOf(cursors[0]);
  const last = blockOf(cursors.at(-1));
  return first === last ? `block ${first}` : `blocks ${first}..${last}`;
}

function lostFinding(who: string, f: ClientFacts, lost: string[], around: { before: string; after?: string }): Finding {
  const head = f.subscribedAtHead;
  const subscribed = `subscribed with cursor null at ${seconds(f.openedAt ?? 0)}${head === undefined ? '' : `, when the outbox's head was block ${head}`}`;
  const afterSubscribe = head !== undefined && lost.every((c) => (blockOf(c) ?? 0) > head);
  const then = `it got ${around.before}${around.after ? ` and next ${around.after}` : ''}`;
  const subject = { t: f.openedAt ?? 0, ...cursorSubject(lost) };
  if (afterSubscribe)
    return {
      code: 'lost-in-snapshot-race',
      text: `the snapshot was taken before following the outbox: ${who} ${subscribed}; ${then}, but never ${plural(lost.length, 'event')} of its accounts between them (${blocksOf(lost)}: ${cursorList(lost)}), committed after it subscribed — between the snapshot and the moment the server followed the outbox — and lost: a server must start buffering before it reads the snapshot, then release what is after its cursor (server contract §3)`,
      subject,
    };
  return {
    code: 'subscriber-gap',
    text: `${who} ${subscribed}; ${then}, but never ${plural(lost.length, 'event')} of its accounts between them (${blocksOf(lost)}: ${cursorList(lost)}), which the outbox already held: every row above the snapshot's cursor is due, in order (server contract §3)`,
    subject,
  };
}

/** Reads the subscriber's events against what it was due; `out` gathers order and content findings. */
function eventsRead(f: ClientFacts, who: string, owed: Map<string, RealEvent>, from: string, out: SubscriberJudgement): { got: string[]; last: string } {
  const got: string[] = [];
  let last = from;
  for (const r of f.read) {
    if (r.op !== 'event' || !r.frame) continue;
    out.eventsRead++;
    const cursor = String(r.frame.cursor);
    if (cursor <= last) {
      if (!out.findings.some((x) => x.code === 'event-order'))
        out.findings.push({
          code: 'event-order',
          text: `${who} read ${cursor} after ${last}: out of cursor order (server contract §3: rows go in cursor order, by block and log index, not in the order they were inserted)`,
          subject: { t: r.t, ...cursorSubject([cursor]) },
        });
      continue;
    }
    const due = owed.get(cursor);
    if (due && sameEvent(r.frame, due)) got.push(cursor);
    else if (!out.findings.some((x) => x.code === 'client-wrong-frame'))
      out.findings.push({
        code: 'client-wrong-frame',
        text: `${who} read ${r.line.trim().slice(0, 160)}, which is not the chain's event of its accounts at ${cursor}: frames are the outbox's rows, exactly as committed (server contract §3)`,
        subject: { t: r.t, ...cursorSubject([cursor]) },
      });
    last = cursor;
  }
  return { got, last };
}

export function judgeSubscriber(f: ClientFacts, due: readonly RealEvent[]): SubscriberJudgement {
  const who = `subscriber \`${f.name}\``;
  const out: SubscriberJudgement = { findings: [], eventsRead: 0, lost: [], missingAtEnd: [] };
  const first = f.read.find((r) => r.op !== 'ping' && r.op !== 'pong');
  if (first?.op !== 'snapshot' || typeof first.frame?.cursor !== 'string') {
    const what = first ? first.line.trim().slice(0, 120) : f.openedAt === undefined ? 'none: it could not connect' : 'none';
    out.findings.push({
      code: 'client-no-snapshot',
      text: `${who} subscribed with cursor null and its first frame was ${what}, not a snapshot (server contract §3)`,
    });
    return out;
  }
  out.snapshotCursor = first.frame.cursor;
  const owed = due.filter((e) => e.cursor > out.snapshotCursor!);
  const { got, last } = eventsRead(f, who, new Map(owed.map((e) => [e.cursor, e])), out.snapshotCursor, out);
  const have = new Set(got);
  const missing = owed.filter((e) => !have.has(e.cursor)).map((e) => e.cursor);
  out.lost = missing.filter((c) => c < last);
  out.missingAtEnd = missing.filter((c) => c > last);
  if (out.lost.length > 0) {
    const before = got.filter((c) => c < out.lost[0]!).at(-1);
    const after = got.find((c) => c > out.lost[0]!);
    // Only the first run of lost rows is named in words; every lost row is in the subject.
    const run = out.lost.filter((c) => after === undefined || c < after);
    const finding = lostFinding(who, f, run, { before: before ?? `its snapshot at ${out.snapshotCursor}`, ...(after ? { after } : {}) });
    if (run.length < out.lost.length) finding.subject = { ...finding.subject, ...cursorSubject(out.lost) };
    out.findings.push(finding);
  }
  const reset = f.read.find((r) => r.op === 'reset');
  if (reset)
    out.findings.push({
      code: 'subscriber-reset',
      text: `${who} read ${reset.line.trim().slice(0, 100)} while it read every frame as it came: nothing made a reset due`,
      subject: { t: reset.t },
    });
  else if (out.missingAtEnd.length > 0)
    out.findings.push({
      code: 'subscriber-incomplete',
      text: `${who} had read up to ${last} when its connection ended (${endWords(f)}${f.close ? ` at ${seconds(f.close.t)}` : ''}); ${plural(out.missingAtEnd.length, 'event')} of its accounts above it never came (${cursorList(out.missingAtEnd)}): live delivery must send every new row (server contract §3)`,
      subject: { t: f.close?.t ?? f.read.at(-1)?.t ?? 0, ...cursorSubject(out.missingAtEnd) },
    });
  return out;
}

type Table = Verdict['tables'][number];

/** Every subscriber judged: its findings, a table of what each got, and a few words for a passing headline. */
export function checkSubscribers(
  journal: readonly JournalEntry[],
  plan: { count: number } | undefined,
  due: readonly RealEvent[],
): { findings: Finding[]; table?: Table; words?: string } {
  if (!plan) return { findings: [] };
  const findings: Finding[] = [];
  const rows: Table['rows'] = [];
  let losing = 0;
  for (let n = 1; n <= plan.count; n++) {
    const f = clientFactsOf(journal, subscriberName(n));
    const j = judgeSubscriber(f, due);
    findings.push(...j.findings);
    if (j.lost.length > 0) losing++;
    rows.push({
      label: f.name,
      cells: [
        f.openedAt === undefined ? '—' : seconds(f.openedAt),
        f.subscribedAtHead ?? null,
        j.snapshotCursor ?? '—',
        j.eventsRead,
        j.lost.length > 0 ? `${j.lost.length} (${blocksOf(j.lost)})` : '0',
        j.missingAtEnd.length,
      ],
    });
  }
  return {
    findings,
    table: {
      id: 'subscribers',
      title: `Null-cursor subscribers: ${losing} of ${plan.count} lost events committed after they subscribed`,
      columns: ['subscribed at', 'outbox head then', 'snapshot', 'events read', 'lost', 'missing at the end'],
      rows,
    },
    ...(findings.length === 0 ? { words: `each of ${plural(plan.count, 'null-cursor subscriber')} got its snapshot and every later event, in order` } : {}),
  };
}
