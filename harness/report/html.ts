// report.html: one self-contained page (no script, no network: a Content-Security-Policy
// forbids both) that opens from disk. Read top to bottom: the verdict and why, in plain words,
// then the smallest diff that shows it; the final state (consumer vs expected vs control);
// the sequence diagram; each process's output; the scenario file. Rendered from the journal
// alone, so it works for any run folder, also for the partial journal of an interrupted run.
//
// `explainRun` is the one place that turns a journal into the words a reader sees first; the
// console, JUnit and this page all use it.

import type { JournalEntry } from '../journal.js';
import { type Verdict, compareAcks } from '../labs/ledger/checker.js';
import {
  type DiagramOptions,
  KNOWN_TYPES,
  type SequenceDiagram,
  count,
  describeUnknown,
  escapeMarkup as esc,
  renderSequenceDiagram,
  seconds,
} from './sequence-diagram.js';

export type RunStatus = 'pass' | 'fail' | 'error' | 'interrupted';

export interface StoreState {
  /** Where the numbers come from: the final read, else the last read of that role. */
  read: 'final' | 'after-exit' | 'while-stopped' | 'none';
  exists: boolean;
  error?: string;
  last: number | null;
  total: number | null;
  rows: number;
  ledgerSum: number;
  /** Seqs of the script that the ledger does not hold. */
  missing: number[];
  /** Seqs the ledger holds that the script never had. */
  extra: number[];
  wrongDelta: { seq: number; got: number; want: number }[];
}

export interface IncarnationRow {
  incarnation: number;
  pid?: number;
  fault?: string;
  startedAt?: number;
  resumes: number[];
  acks: { seq: number; t: number }[];
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string; durationMs?: number };
  /** The harness's read of the file right after this process ended. */
  fileAfter?: { last: number | null; total: number | null; rows: number; ledger: [number, number][] };
}

export interface RunExplanation {
  name: string;
  runId: string;
  status: RunStatus;
  /** False when the journal has no run-end (interrupted, or still being written). */
  complete: boolean;
  /** One line in plain words: what happened. */
  headline: string;
  /** Every reason, harness problems first, most telling first. */
  reasons: string[];
  /** The smallest diff that shows it: one fact per line, e.g. "ledger: seq 7 missing; total 412, expected 419". */
  diff: string[];
  durationMs: number;
  expected?: { last: number; total: number; events: number };
  consumer?: StoreState;
  control?: StoreState;
  incarnations: IncarnationRow[];
}

interface LoosePlan {
  events?: { seq: number; delta: number }[];
  deadlineMs?: number;
  consumer?: { incarnations?: { fault?: string; expectExit?: string }[] };
  expect?: { transcript?: { incarnation: number; resume: number; acks?: number[] }[] };
}

const planOf = (journal: JournalEntry[]): LoosePlan => (journal.find((e) => e.type === 'scenario')?.plan ?? {}) as LoosePlan;

/** "seq 7", "seqs 3, 4, 9", "seqs 100…9000 (8 901 seqs)", "seqs 1, 5…9, 12 (7 seqs)". */
export function seqList(seqs: number[], maxParts = 6): string {
  if (seqs.length === 1) return `seq ${seqs[0]}`;
  const sorted = [...seqs].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}…${sorted[j]}` : j === i ? `${sorted[i]}` : `${sorted[i]}, ${sorted[j]}`);
    i = j + 1;
  }
  const shown = parts.length > maxParts ? [...parts.slice(0, maxParts), '…'] : parts;
  const all = shown.join(', ');
  const plain = parts.length <= maxParts && !parts.some((p) => p.includes('…'));
  return plain ? `seqs ${all}` : `seqs ${all} (${count(sorted.length)} seqs)`;
}

type StoreRead = Extract<JournalEntry, { type: 'store-read' }>;

/** Everything the explanation needs, from one pass over the journal (entries of many shapes: one pass is what keeps 400 000 entries fast). */
interface Gathered {
  start?: Extract<JournalEntry, { type: 'run-start' }>;
  end?: Extract<JournalEntry, { type: 'run-end' }>;
  verdict?: Extract<JournalEntry, { type: 'verdict' }>;
  harnessErrors: string[];
  /** The final read of each role, else its last read. */
  lastRead: { consumer?: StoreRead; control?: StoreRead };
  consumerReads: StoreRead[];
  incarnations: IncarnationRow[];
}

function gather(journal: JournalEntry[]): Gathered {
  const plan = planOf(journal);
  const g: Gathered = { harnessErrors: [], lastRead: {}, consumerReads: [], incarnations: [] };
  const rows = new Map<number, IncarnationRow>();
  const row = (n: number): IncarnationRow => {
    let r = rows.get(n);
    if (!r) {
      const fault = plan.consumer?.incarnations?.[n - 1]?.fault;
      rows.set(n, (r = { incarnation: n, resumes: [], acks: [], ...(fault ? { fault } : {}) }));
    }
    return r;
  };
  for (let i = 1; i <= (plan.consumer?.incarnations ?? []).length; i++) row(i);
  const consumerStreams = new Set<string>();
  const owner = new Map<string, Map<number, IncarnationRow>>();
  for (const e of journal) {
    switch (e.type) {
      case 'wire': {
        if (!consumerStreams.has(e.stream)) break;
        let conns = owner.get(e.stream);
        if (!conns) owner.set(e.stream, (conns = new Map()));
        if (e.kind === 'open') {
          const n = Number(/^incarnation (\d+)$/.exec(e.tag ?? '')?.[1]);
          if (Number.isInteger(n) && n > 0) conns.set(e.conn, row(n));
        } else if (e.kind === 'recv' && !e.error) {
          const r = conns.get(e.conn);
          if (!r || typeof e.line !== 'string' || !e.line.endsWith('\n')) break;
          if (e.line.startsWith('ACK ')) {
            const digits = e.line.slice(4, -1);
            if (/^\d+$/.test(digits)) r.acks.push({ seq: Number(digits), t: e.t });
          } else if (e.line.startsWith('RESUME ')) {
            const digits = e.line.slice(7, -1);
            if (/^-?\d+$/.test(digits)) r.resumes.push(Number(digits));
          }
        }
        break;
      }
      case 'run-start':
        g.start ??= e;
        break;
      case 'run-end':
        g.end ??= e;
        break;
      case 'verdict':
        g.verdict ??= e;
        break;
      case 'harness-error':
        g.harnessErrors.push(e.message);
        break;
      case 'stream':
        if (e.role === 'consumer') consumerStreams.add(e.stream);
        break;
      case 'process-start':
        if (e.role === 'consumer') {
          const r = row(e.incarnation);
          r.pid = e.pid;
          r.startedAt = e.t;
          if (e.env?.CHAOSLAB_FAULT) r.fault = e.env.CHAOSLAB_FAULT;
        }
        break;
      case 'process-exit':
        if (e.role === 'consumer')
          row(e.incarnation).exit = { t: e.t, code: e.code, signal: e.signal, ...(e.killedBy ? { killedBy: e.killedBy } : {}), durationMs: e.durationMs };
        break;
      case 'store-read': {
        if (e.role !== 'consumer' && e.role !== 'control') break;
        const previous = g.lastRead[e.role];
        if (previous?.when !== 'final') g.lastRead[e.role] = e;
        if (e.role !== 'consumer') break;
        g.consumerReads.push(e);
        if (e.when === 'after-exit' && e.incarnation !== undefined) {
          const c = e.store?.checkpoint?.[0];
          const ledger = Array.isArray(e.store?.ledger) ? e.store.ledger : [];
          row(e.incarnation).fileAfter = { last: c?.last ?? null, total: c?.total ?? null, rows: ledger.length, ledger };
        }
        break;
      }
      default:
        break;
    }
  }
  g.incarnations = [...rows.values()].sort((a, b) => a.incarnation - b.incarnation);
  return g;
}

function storeState(read: StoreRead | undefined, plan: LoosePlan): StoreState | undefined {
  if (!read) return undefined;
  const store = read.store ?? { exists: false, checkpoint: [], ledger: [] };
  const ledger: [number, number][] = Array.isArray(store.ledger) ? store.ledger : [];
  const row = Array.isArray(store.checkpoint) && store.checkpoint.length === 1 ? store.checkpoint[0] : undefined;
  const events = plan.events ?? [];
  // The script's seqs are 0…n-1 (events[i].seq === i): arrays, not maps, for 100 000 rows.
  const dense = events.every((e, i) => e.seq === i);
  const script = dense ? undefined : new Map(events.map((e) => [e.seq, e.delta]));
  const deltaOf = (seq: number): number | undefined =>
    script ? script.get(seq) : Number.isInteger(seq) && seq >= 0 && seq < events.length ? events[seq]!.delta : undefined;
  const held = dense ? new Uint8Array(events.length) : undefined;
  const heldMap = dense ? undefined : new Set<number>();
  let ledgerSum = 0;
  const extra: number[] = [];
  const wrongDelta: StoreState['wrongDelta'] = [];
  for (const [seq, delta] of ledger) {
    ledgerSum += delta;
    const want = deltaOf(seq);
    if (want === undefined) extra.push(seq);
    else {
      if (held) held[seq] = 1;
      else heldMap!.add(seq);
      if (want !== delta) wrongDelta.push({ seq, got: delta, want });
    }
  }
  const missing: number[] = [];
  if (held)
    held.forEach((h, seq) => {
      if (!h) missing.push(seq);
    });
  else for (const e of events) if (!heldMap!.has(e.seq)) missing.push(e.seq);
  return {
    read: read.when,
    exists: Boolean(store.exists),
    ...(store.error ? { error: store.error } : {}),
    last: row?.last ?? null,
    total: row?.total ?? null,
    rows: ledger.length,
    ledgerSum,
    missing,
    extra,
    wrongDelta,
  };
}

/** Per consumer incarnation, from the journal alone: RESUMEs, ACKs, exit, the file after it. */
export function incarnationRows(journal: JournalEntry[]): IncarnationRow[] {
  return gather(journal).incarnations;
}

/** A journal entry in a few words, for "the journal stops after …". */
function entryInWords(e: JournalEntry | undefined): string {
  if (!e) return 'nothing';
  const x = e as unknown as Record<string, unknown>;
  const who = x.role === 'control' ? 'the control consumer' : x.incarnation !== undefined ? `consumer incarnation ${String(x.incarnation)}` : 'the consumer';
  switch (e.type) {
    case 'run-start':
    case 'scenario':
      return 'the run started';
    case 'toxiproxy':
      return 'Toxiproxy was ready';
    case 'stream':
    case 'proxy':
      return 'the publisher was set up';
    case 'process-start':
      return `${who} started (pid ${e.pid})`;
    case 'process-exit':
      return `${who} ended`;
    case 'wire':
      return `${e.stream} traffic (${e.kind}${'line' in e ? ` ${JSON.stringify(e.line)}` : ''})`;
    case 'store-read':
      return `a read of ${who}'s file`;
    case 'verdict':
      return 'the verdict';
    default:
      return describeUnknown(x, 80);
  }
}

const acksList = (acks: { seq: number }[]): string =>
  acks.length === 0 ? 'none' : acks.length <= 8 ? acks.map((a) => a.seq).join(', ') : seqList(acks.map((a) => a.seq)).replace(/^seqs /, '');

function ledgerLine(who: string, s: StoreState, expected: { last: number; total: number; events: number }): { line: string; differs: boolean } {
  if (!s.exists) return { line: `${who}: no SQLite file was ever created`, differs: true };
  if (s.error) return { line: `${who}: the file cannot be read as a ledger (${s.error})`, differs: true };
  const parts: string[] = [];
  if (s.missing.length) parts.push(`${seqList(s.missing)} missing`);
  if (s.extra.length) parts.push(`${seqList(s.extra)} not in the script`);
  for (const w of s.wrongDelta.slice(0, 3)) parts.push(`seq ${w.seq} has delta ${w.got}, the script says ${w.want}`);
  if (s.last !== expected.last) parts.push(`last ${s.last ?? '—'}, expected ${expected.last}`);
  if (s.total !== expected.total) parts.push(`total ${s.total ?? '—'}, expected ${expected.total}`);
  if (s.total !== null && s.total !== s.ledgerSum) parts.push(`total ${s.total} but the ledger rows sum to ${s.ledgerSum}`);
  if (parts.length === 0) return { line: `${who}: matches the script (last ${s.last}, total ${s.total}, ${count(s.rows)} rows)`, differs: false };
  return { line: `${who}: ${parts.join('; ')}`, differs: true };
}

/** Turns a journal into what a reader needs first: status, one plain line, reasons, the smallest diff. */
export function explainRun(journal: JournalEntry[]): RunExplanation {
  const g = gather(journal);
  const { start, end, verdict: verdictEntry, harnessErrors, incarnations } = g;
  const details = (verdictEntry?.details ?? {}) as Partial<Verdict>;
  const plan = planOf(journal);
  const lastEntry = journal[journal.length - 1];
  const durationMs = end?.t ?? lastEntry?.t ?? 0;
  const events = plan.events ?? [];
  const expected = events.length
    ? { last: events.length - 1, total: events.reduce((s, e) => s + e.delta, 0), events: events.length }
    : (details.expected ?? undefined);
  const consumer = storeState(g.lastRead.consumer, plan);
  const control = storeState(g.lastRead.control, plan);

  const status: RunStatus = end?.status ?? (harnessErrors.length ? 'error' : verdictEntry ? (verdictEntry.pass ? 'pass' : 'fail') : 'interrupted');
  const reasons = [...harnessErrors.map((m) => `harness error: ${m}`), ...(Array.isArray(verdictEntry?.reasons) ? verdictEntry.reasons : [])];
  const diff: string[] = [];

  if (verdictEntry && !verdictEntry.pass && expected) {
    let sameLedger: string | undefined;
    if (consumer) {
      const l = ledgerLine('ledger', consumer, expected);
      if (l.differs) diff.push(l.line);
      else sameLedger = l.line;
    }
    // Broken promises: an ACK the publisher saw for a seq the file did not hold.
    const everHeld = new Set<number>();
    for (const e of g.consumerReads) for (const [s] of e.store?.ledger ?? []) everHeld.add(s);
    const broken: string[] = [];
    for (const inc of incarnations) {
      if (!inc.fileAfter) continue;
      const held = new Set(inc.fileAfter.ledger.map(([s]) => s));
      for (const a of inc.acks) {
        if (held.has(a.seq) && (inc.fileAfter.last ?? -1) >= a.seq) continue;
        broken.push(
          everHeld.has(a.seq)
            ? `publisher saw ACK ${a.seq} at ${seconds(a.t)} from incarnation ${inc.incarnation}, but its file did not hold seq ${a.seq} when it ended (last ${inc.fileAfter.last ?? '—'})`
            : `publisher saw ACK ${a.seq} at ${seconds(a.t)} but the consumer's file never held seq ${a.seq}`,
        );
      }
    }
    diff.push(...broken.slice(0, 3));
    if (broken.length > 3) diff.push(`… and ${broken.length - 3} more ACKs for seqs the file did not hold`);
    // The transcript the scenario expects, against what the publisher saw.
    for (const want of plan.expect?.transcript ?? []) {
      const got = incarnations.find((r) => r.incarnation === want.incarnation);
      if (!got) continue;
      const who = `incarnation ${want.incarnation}`;
      if (got.resumes.length === 0 && got.startedAt !== undefined) diff.push(`${who}: no RESUME, expected RESUME ${want.resume}`);
      else if (got.resumes.length && got.resumes[0] !== want.resume) diff.push(`${who}: RESUME ${got.resumes[0]}, expected RESUME ${want.resume}`);
      if (!want.acks) continue;
      const seqs = got.acks.map((a) => a.seq);
      if (seqs.join() === want.acks.join()) continue;
      const { unexpected: extra, missing } = compareAcks(got.acks, want.acks);
      const notes = [
        ...(extra.length
          ? [
              `extra: ${extra
                .slice(0, 3)
                .map((a) => `ACK ${a.seq} at ${seconds(a.t)}`)
                .join(', ')}${extra.length > 3 ? ', …' : ''}`,
            ]
          : []),
        ...(missing.length ? [`missing: ${missing.length <= 3 ? missing.map((s) => `ACK ${s}`).join(', ') : `ACKs for ${seqList(missing)}`}`] : []),
      ];
      diff.push(
        `${who}: ACKs ${acksList(got.acks)} — expected ${acksList(want.acks.map((seq) => ({ seq })))}${notes.length ? ` (${notes.join('; ')})` : ' (order differs)'}`,
      );
    }
    // How each process ended, against what the scenario expects.
    (plan.consumer?.incarnations ?? []).forEach((inc, i) => {
      const got = incarnations.find((r) => r.incarnation === i + 1);
      const who = `incarnation ${i + 1}`;
      if (!got?.exit) {
        diff.push(`${who}: ${got?.startedAt === undefined ? 'never started' : 'no recorded exit'}`);
        return;
      }
      if (got.exit.killedBy === 'deadline') diff.push(`${who}: killed at the deadline (${count(plan.deadlineMs ?? 0)} ms), expected to end on its own`);
      else if (inc.expectExit === 'zero' && got.exit.code !== 0)
        diff.push(`${who}: ${got.exit.signal ? `killed by ${got.exit.signal}` : `exit status ${got.exit.code}`}, expected 0`);
      else if (inc.expectExit === 'nonzero' && got.exit.code === 0)
        diff.push(`${who}: exit status 0, expected non-zero${inc.fault ? ` (fault ${inc.fault})` : ''}`);
    });
    if (control) {
      const c = ledgerLine('control', control, expected);
      if (c.differs) diff.push(c.line);
    }
    if (sameLedger) diff.push(`${sameLedger.replace(/^ledger: /, "ledger: the consumer's file ")}`);
  }

  let headline: string;
  if (status === 'pass') {
    headline =
      consumer && expected
        ? `the consumer ended with last ${consumer.last}, total ${consumer.total}: as the script says, and as the control consumer`
        : 'the consumer did what the scenario expects';
  } else if (status === 'interrupted') {
    headline = `the run did not finish: the journal stops at ${seconds(lastEntry?.t ?? 0)}, after ${entryInWords(lastEntry)}`;
  } else {
    headline = reasons[0] ?? (status === 'error' ? 'the harness failed (no message recorded)' : 'the consumer failed (no reason recorded)');
  }
  if (!end && status !== 'interrupted') reasons.push(`the journal has no run-end entry: the run was interrupted after ${entryInWords(lastEntry)}`);

  return {
    name: start?.scenario?.name ?? 'unknown scenario',
    runId: start?.runId ?? '',
    status,
    complete: Boolean(end),
    headline,
    reasons,
    diff,
    durationMs,
    ...(expected ? { expected } : {}),
    ...(consumer ? { consumer } : {}),
    ...(control ? { control } : {}),
    incarnations,
  };
}

// ---------------------------------------------------------------------------------------------
// The page

const CSS = `
:root{--pass:#1d7a33;--fail:#c0162b;--error:#8a4b00;--interrupted:#5b5b7a;--ink:#1f2328;--muted:#5f6b7a;--line:#d8dee4}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#f6f8fa}
main{max-width:1280px;margin:0 auto;padding:0 20px 40px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.banner{margin:0 -20px 18px;padding:18px 24px;color:#fff}
.banner.pass{background:var(--pass)}.banner.fail{background:var(--fail)}.banner.error{background:var(--error)}.banner.interrupted{background:var(--interrupted)}
.banner .status{display:inline-block;font-weight:800;font-size:28px;letter-spacing:.04em;margin-right:14px;vertical-align:middle}
.banner h1{display:inline;font-size:24px;vertical-align:middle}
.banner .headline{font-size:19px;font-weight:600;margin:10px 0 4px}
.banner .meta{opacity:.9;font-size:13px;margin:8px 0 0}
.banner .meta code{background:rgba(255,255,255,.18);padding:1px 5px;border-radius:4px;color:#fff}
.banner h2{font-size:14px;text-transform:uppercase;letter-spacing:.06em;margin:14px 0 4px;opacity:.9}
.banner ol{margin:0;padding-left:22px}.banner li{margin:2px 0}
.banner pre.diff{background:rgba(0,0,0,.22);color:#fff;padding:10px 12px;border-radius:6px;white-space:pre-wrap;margin:4px 0 0}
nav{font-size:13px;margin:0 0 12px;color:var(--muted)}nav a{margin-right:12px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0 0 18px}
section h2{margin:0 0 10px;font-size:18px}
table{border-collapse:collapse;margin:6px 0 10px}
th,td{border:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f0f3f6;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fdecee}tr.good td{background:#eef8f0}
.bad-text{color:var(--fail);font-weight:600}
.muted{color:var(--muted)}
.scroll{overflow:auto;max-height:85vh;border:1px solid var(--line);border-radius:6px;background:#fff}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:22px;height:3px;vertical-align:middle;margin-right:5px}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}.quiet-process{margin:4px 0;font-weight:600}
pre.out{background:#0d1117;color:#e6edf3;padding:10px;border-radius:6px;max-height:360px;overflow:auto;white-space:pre-wrap;word-break:break-all}
pre.src{background:#f6f8fa;padding:10px;border-radius:6px;overflow:auto}
footer{color:var(--muted);font-size:12px}
`;

export interface HtmlOptions {
  diagram?: DiagramOptions;
  /** Shown in the footer. */
  renderedAt?: Date;
}

export interface HtmlReport {
  html: string;
  explanation: RunExplanation;
  diagram: SequenceDiagram;
}

const STATUS_WORD: Record<RunStatus, string> = { pass: 'PASS', fail: 'FAIL', error: 'ERROR', interrupted: 'INTERRUPTED' };

const cell = (v: number | null | undefined): string => `<td class="num">${v === null || v === undefined ? '—' : esc(count(v))}</td>`;

/** The scenario's time compression (1 = real time), from the journal's resolved plan. */
export function timeScaleOf(journal: JournalEntry[]): number {
  const plan = journal.find((e) => e.type === 'scenario')?.plan as { timeScale?: number } | undefined;
  return plan?.timeScale ?? 1;
}

export function renderHtml(journal: JournalEntry[], options: HtmlOptions = {}): HtmlReport {
  const x = explainRun(journal);
  const start = journal.find((e) => e.type === 'run-start');
  const scenario = journal.find((e) => e.type === 'scenario');
  const toxiproxy = journal.find((e) => e.type === 'toxiproxy');
  const diagram = renderSequenceDiagram(journal, options.diagram);
  const h: string[] = [];

  h.push(
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${STATUS_WORD[x.status]} ${esc(x.name)} — chaoslab</title>`,
    `<style>${CSS}</style></head><body><main>`,
  );

  // 1. The verdict, why, and the smallest diff.
  h.push(
    `<header class="banner ${x.status}" id="verdict" data-status="${x.status}">`,
    `<span class="status">${STATUS_WORD[x.status]}</span><h1>${esc(x.name)}</h1>`,
    `<p class="headline">${esc(x.headline)}</p>`,
  );
  const more = x.status === 'interrupted' ? x.reasons : x.reasons.slice(x.headline === x.reasons[0] ? 1 : 0);
  if (x.status !== 'pass' && more.length)
    h.push(`<h2>${x.headline === x.reasons[0] ? 'Also' : 'Why'}</h2><ol class="reasons">${more.map((r) => `<li>${esc(r)}</li>`).join('')}</ol>`);
  if (x.diff.length) h.push(`<h2>Smallest diff</h2><pre class="diff">${esc(x.diff.join('\n'))}</pre>`);
  const meta = [
    x.runId && `run <code>${esc(x.runId)}</code>`,
    start && `consumer <code>${esc(start.consumerCommand)}</code>`,
    `${esc(seconds(x.durationMs))}${x.complete ? '' : ' (incomplete journal)'}`,
    toxiproxy && `toxiproxy ${esc(toxiproxy.version)}`,
    start && `${esc(start.node)} ${esc(start.platform)}`,
  ].filter(Boolean);
  h.push(`<p class="meta">${meta.join(' · ')}</p>`, '</header>');
  if (start?.scenario?.description) h.push(`<p class="muted"><b>What this scenario proves:</b> ${esc(start.scenario.description)}</p>`);
  const timeScale = timeScaleOf(journal);
  if (timeScale !== 1)
    h.push(
      `<p class="muted"><b>Time compressed:</b> every nominal fault and restart duration in this scenario ran ${esc(String(timeScale))} times as long (time_scale ${esc(String(timeScale))}).</p>`,
    );
  h.push(
    '<nav><a href="#state">final state</a><a href="#incarnations">incarnations</a><a href="#diagram">sequence diagram</a><a href="#output">process output</a><a href="#scenario">scenario file</a></nav>',
  );

  // 2. Consumer vs expected vs control.
  h.push('<section id="state"><h2>Final state: consumer vs expected vs control</h2>');
  if (x.expected || x.consumer || x.control) {
    h.push('<table><tr><th></th><th>last</th><th>total</th><th>ledger rows</th><th>ledger sum</th><th>differences from the script</th></tr>');
    if (x.expected)
      h.push(
        `<tr><th>expected (from the script)</th>${cell(x.expected.last)}${cell(x.expected.total)}${cell(x.expected.events)}${cell(x.expected.total)}<td></td></tr>`,
      );
    for (const [label, s] of [
      ['consumer under test', x.consumer],
      ['control consumer', x.control],
    ] as const) {
      if (!s) {
        h.push(`<tr><th>${label}</th><td colspan="5" class="muted">no read of its file in the journal</td></tr>`);
        continue;
      }
      const d = x.expected ? ledgerLine('', s, x.expected) : { line: '', differs: false };
      const text = d.line.replace(/^: /, '');
      h.push(
        `<tr class="${d.differs ? 'bad' : 'good'}"><th>${label}${s.read === 'final' ? '' : ` <span class="muted">(${s.read} read)</span>`}</th>${cell(s.last)}${cell(s.total)}${cell(s.rows)}${cell(s.ledgerSum)}<td>${d.differs ? `<span class="bad-text">${esc(text)}</span>` : 'none'}</td></tr>`,
      );
    }
    h.push('</table>');
  } else {
    h.push('<p class="muted">No file was read: the run ended before any consumer finished.</p>');
  }
  h.push('</section>');

  // Per incarnation.
  h.push('<section id="incarnations"><h2>Consumer incarnations</h2>');
  if (x.incarnations.length) {
    h.push(
      '<table><tr><th>#</th><th>fault plan</th><th>started</th><th>RESUME</th><th>ACKs the publisher saw</th><th>ended</th><th>its file when it ended</th></tr>',
    );
    for (const r of x.incarnations) {
      const ended = !r.exit
        ? r.startedAt === undefined
          ? '<span class="muted">never started</span>'
          : '<span class="bad-text">no exit recorded</span>'
        : esc(
            `${r.exit.killedBy ? `killed (${r.exit.killedBy})` : r.exit.signal ? `killed by ${r.exit.signal}` : `exit ${r.exit.code}`} at ${seconds(r.exit.t)}${r.exit.durationMs !== undefined ? `, ran ${seconds(r.exit.durationMs)}` : ''}`,
          );
      const file = r.fileAfter
        ? esc(`last ${r.fileAfter.last ?? '—'}, total ${r.fileAfter.total ?? '—'}, ${count(r.fileAfter.rows)} rows`)
        : '<span class="muted">—</span>';
      h.push(
        `<tr><td class="num">${r.incarnation}</td><td><code>${esc(r.fault ?? '')}</code></td><td>${r.startedAt === undefined ? '—' : esc(`${seconds(r.startedAt)}${r.pid ? `, pid ${r.pid}` : ''}`)}</td>` +
          `<td class="mono">${esc(r.resumes.join(', ') || '—')}</td><td class="mono">${esc(acksList(r.acks))}</td><td>${ended}</td><td>${file}</td></tr>`,
      );
    }
    h.push('</table>');
  } else h.push('<p class="muted">No consumer incarnation in the journal.</p>');
  h.push('</section>');

  // 3. The diagram.
  h.push(
    '<section id="diagram"><h2>Sequence diagram</h2>',
    '<p class="muted">Time runs downwards, one row per thing that happened (the left column is seconds since the run started). ' +
      'Arrows are the lines on the wire, as the publisher sent or received them. ■ process start, ● exit 0, <b style="color:var(--fail)">✖</b> crash or kill, ⚡ a signal fault, ◆ the harness read the SQLite file, ○ connection opened, ▬ connection closed. ' +
      'Shaded orange bands are active network faults; grey dashed boxes stand for many uneventful lines (in-order EVENTs and ACKs), collapsed. Hover over anything for its exact time and text.' +
      (diagram.collapsed ? ` Here ${esc(count(diagram.collapsed))} lines are collapsed into ${diagram.bands} band${diagram.bands === 1 ? '' : 's'}.` : '') +
      '</p>',
    `<p class="legend">${(
      [
        ['EVENT', '#1f5fbf'],
        ['ACK', '#1d7a33'],
        ['RESUME', '#7a2fa8'],
        ['RESYNC', '#c26a00'],
        ['other line', '#555555'],
        ['broke the grammar', '#c0162b'],
      ] as const
    )
      .map(([name, color]) => `<span><i style="background:${color}"></i>${name}</span>`)
      .join('')}</p>`,
    `<div class="scroll">${diagram.svg}</div>`,
    '</section>',
  );

  // Faults and entries this renderer does not know (from newer harness versions).
  const faults = journal.filter((e) => (e as { type: string }).type === 'fault') as unknown as Record<string, unknown>[];
  if (faults.length) {
    h.push('<section id="faults"><h2>Faults</h2><table><tr><th>time</th><th>action</th><th>name</th><th>kind</th><th>detail</th></tr>');
    for (const f of faults.slice(0, 500)) {
      const detail = typeof f.detail === 'string' ? f.detail : f.detail === undefined ? '' : JSON.stringify(f.detail);
      h.push(
        `<tr><td class="num">${esc(seconds(Number(f.t)))}</td><td>${esc(String(f.action ?? ''))}</td><td>${esc(String(f.name ?? ''))}</td><td>${esc(String(f.kind ?? ''))}</td><td><code>${esc(detail)}</code></td></tr>`,
      );
    }
    h.push(`</table>${faults.length > 500 ? `<p class="muted">… ${count(faults.length - 500)} more in the journal.</p>` : ''}</section>`);
  }
  const unknown = new Map<string, { n: number; first: Record<string, unknown> }>();
  for (const e of journal) {
    const type = String((e as { type: unknown }).type);
    if (KNOWN_TYPES.has(type)) continue;
    const u = unknown.get(type);
    if (u) u.n++;
    else unknown.set(type, { n: 1, first: e as unknown as Record<string, unknown> });
  }
  if (unknown.size) {
    h.push(
      '<section id="other"><h2>Other journal entries</h2><p class="muted">Entry types this report does not draw specially (written by a newer harness):</p><table><tr><th>type</th><th>count</th><th>first one</th></tr>',
    );
    for (const [type, u] of unknown)
      h.push(`<tr><td><code>${esc(type)}</code></td>${cell(u.n)}<td><code>${esc(describeUnknown(u.first, 300))}</code></td></tr>`);
    h.push('</table></section>');
  }

  // 4. Process output.
  h.push('<section id="output"><h2>Process output</h2>');
  const exits = journal.filter((e) => e.type === 'process-exit');
  if (!exits.length) h.push('<p class="muted">No process had ended when the journal stops.</p>');
  for (const e of exits) {
    const who = e.role === 'control' ? 'control consumer' : `consumer incarnation ${e.incarnation}`;
    const how = e.killedBy ? `killed (${e.killedBy}${e.signal ? `, ${e.signal}` : ''})` : e.signal ? `killed by ${e.signal}` : `exit ${e.code}`;
    const stdout = typeof e.stdoutTail === 'string' ? e.stdoutTail : '';
    const stderr = typeof e.stderrTail === 'string' ? e.stderrTail : '';
    if (!stdout && !stderr && !e.stdoutBytes && !e.stderrBytes) {
      h.push(`<p class="quiet-process">${esc(`${who} — ${how}`)} <span class="muted">· no output</span></p>`);
      continue;
    }
    const failed = e.role === 'consumer' && (e.code !== 0 || e.signal !== null);
    h.push(`<details${x.status !== 'pass' && (failed || stderr) ? ' open' : ''}><summary>${esc(`${who} — ${how}`)}</summary>`);
    for (const [stream, shown, bytes] of [
      ['stdout', stdout, e.stdoutBytes],
      ['stderr', stderr, e.stderrBytes],
    ] as const) {
      const size = typeof bytes === 'number' ? bytes : 0;
      const tailBytes = Buffer.byteLength(shown);
      const label =
        size === 0 && !shown
          ? `${stream}: empty`
          : size > tailBytes
            ? `${stream}: last ${count(tailBytes)} of ${count(size)} bytes`
            : `${stream}: ${count(Math.max(size, tailBytes))} bytes`;
      h.push(`<div class="muted">${esc(label)}</div>${shown ? `<pre class="out">${esc(shown)}</pre>` : ''}`);
    }
    h.push('</details>');
  }
  h.push('</section>');

  // 5. The scenario file.
  h.push(
    `<section id="scenario"><h2>Scenario file</h2><p class="muted"><code>${esc(start?.scenario?.file ?? '')}</code></p>`,
    scenario && typeof scenario.source === 'string' ? `<pre class="src">${esc(scenario.source)}</pre>` : '<p class="muted">not in the journal</p>',
    '</section>',
  );
  h.push(
    `<footer>Rendered from journal.jsonl (${count(journal.length)} entries${x.complete ? '' : ', no run-end: partial'})${options.renderedAt ? ` at ${esc(options.renderedAt.toISOString())}` : ''}. ` +
      'Re-render any time with <code>chaoslab report &lt;run-folder&gt;</code>.</footer>',
    '</main></body></html>',
  );
  return { html: h.join('\n'), explanation: x, diagram };
}
