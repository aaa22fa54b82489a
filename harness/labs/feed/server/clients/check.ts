// The harness-driven clients' part of the server run's verdict: each client judged by its kind,
// a table of what each read and how it ended, the null-cursor subscribers (check-subscribers.ts),
// and the server's memory over the run (data, and a finding past the scenario's bound).

import type { Figure, Finding, Verdict } from '../../../../findings/verdict.js';
import { memoryFigure } from '../../report/memory-figure.js';
import type { JournalEntry } from '../../../../record/journal.js';
import type { Expected } from '../../check/state.js';
import { plural } from '../../report/words.js';
import type { FeedPlan, ServerUnderTestPlan } from '../../scenario/plan.js';
import { badFrameSent, judgeBadClient, judgeHalfOpen, judgePinger } from './check-others.js';
import type { BadFrameSent } from '../server-problems.js';
import { judgeReader } from './check-readers.js';
import { checkSubscribers } from './crowds/check-subscribers.js';
import { clientFactsOf, endWords } from './facts.js';

type Table = Verdict['tables'][number];
const MIB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

export interface ClientsVerdict {
  findings: Finding[];
  tables: Table[];
  /** The server's memory over the run, when it was sampled. */
  figures: Figure[];
  /** A few words for a passing headline. */
  words: string[];
  /** What the bad clients sent, and when (server-problems.ts names a crash that followed). */
  badFrames: BadFrameSent[];
}

function memoryPart(journal: readonly JournalEntry[], under: ServerUnderTestPlan): { findings: Finding[]; table?: Table; figure?: Figure; words?: string } {
  const samples = journal.flatMap((e) => (e.type === 'memory' && e.role === 'server' ? [{ t: e.t, rss: e.rssBytes }] : []));
  if (samples.length === 0) return { findings: [] };
  const first = samples[0]!;
  const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
  const last = samples.at(-1)!;
  const growth = peak.rss - first.rss;
  const bound = under.maxRssGrowthBytes;
  const findings: Finding[] =
    bound !== undefined && growth > bound
      ? [
          {
            code: 'server-memory-grew',
            text: `the server's memory grew by ${mib(growth)} (RSS of its process tree ${mib(first.rss)} when it listened, ${mib(peak.rss)} at most): more than the scenario's bound of ${mib(bound)} — one slow client may cost the server at most its queue (server contract §4)`,
            subject: { t: peak.t },
          },
        ]
      : [];
  return {
    findings,
    figure: memoryFigure(samples, bound),
    words: `its memory grew by ${mib(growth)}${bound === undefined ? '' : ` (bound ${mib(bound)})`}`,
    table: {
      id: 'server-memory',
      title: "The server's memory: RSS of its process tree, sampled from /proc every 100 ms",
      columns: ['samples', 'first', 'peak', 'last', 'growth', 'bound'],
      rows: [{ label: 'server', cells: [samples.length, mib(first.rss), mib(peak.rss), mib(last.rss), mib(growth), bound === undefined ? '—' : mib(bound)] }],
    },
  };
}

export function checkClients(journal: readonly JournalEntry[], plan: FeedPlan, under: ServerUnderTestPlan, expected: Expected): ClientsVerdict {
  const findings: Finding[] = [];
  const rows: Table['rows'] = [];
  const badFrames: BadFrameSent[] = [];
  for (const c of under.clients) {
    const f = clientFactsOf(journal, c.name);
    let detail = '';
    if (c.kind === 'slow-reader' || c.kind === 'never-reads') {
      const j = judgeReader(f, c.kind, c.quiet ? [] : expected.events, plan.server.queueLimit);
      findings.push(...j.findings);
      detail = `${plural(j.eventsRead, 'event')} in order${j.reset ? `, then reset ${j.reset}` : ', no reset'}${j.behindAtSceneOver === undefined ? '' : `; ${j.behindAtSceneOver} behind when the script was over`}`;
    } else if (c.kind === 'garbage' || c.kind === 'oversized') {
      findings.push(...judgeBadClient(f, c.kind));
      const sent = badFrameSent(f, c.kind);
      if (sent) badFrames.push(sent);
    } else if (c.kind === 'half-open') findings.push(...judgeHalfOpen(f, plan.server.pingMs, plan.server.idleMs));
    else findings.push(...judgePinger(f, f.close?.t));
    const pings = f.read.filter((r) => r.op === 'ping').length;
    const pongs = f.read.filter((r) => r.op === 'pong').length;
    rows.push({
      label: c.name,
      cells: [c.kind, f.read.length, pings, pongs, detail || '—', `${endWords(f)}${f.close ? ` at ${(f.close.t / 1000).toFixed(3)} s` : ''}`],
    });
  }
  const subscribers = checkSubscribers(journal, under.subscribers, expected.events);
  findings.push(...subscribers.findings);
  const memory = memoryPart(journal, under);
  findings.push(...memory.findings);
  const tables: Table[] = [];
  if (rows.length > 0)
    tables.push({
      id: 'clients',
      title: "The harness's own clients (each through its own proxy)",
      columns: ['kind', 'lines read', 'pings', 'pongs', 'events', 'ended'],
      rows,
    });
  if (subscribers.table) tables.push(subscribers.table);
  if (memory.table) tables.push(memory.table);
  const words = [
    ...(under.clients.length > 0
      ? [`${plural(under.clients.length, 'client')} of the harness ${under.clients.length === 1 ? 'was' : 'were'} served as the contract says`]
      : []),
    ...(subscribers.words ? [subscribers.words] : []),
    ...(memory.words ? [memory.words] : []),
  ];
  return { findings, tables, figures: memory.figure ? [memory.figure] : [], words, badFrames: badFrames.sort((a, b) => a.t - b.t) };
}
