// Reports of feed runs speak the feed's language: real runs (golden journals recorded from the
// feed scenarios with the reference consumer, test/fixtures/journals/feed-*.jsonl) rendered as
// report.html, summary.md and the console say cursors, snapshots, subscribes, resets with their
// reason, revokes with the band they void and reconnect gaps, and never a ledger word. Long runs
// (a slow reader's thousands of frames) collapse as ledger runs do, and a finding about one
// cursor highlights that frame, not every frame of its block.
import t from 'tap';
import type { JournalEntry, JournalEvent } from '../../../harness/record/journal.js';
import type { Vocabulary } from '../../../harness/lab-api/lab.js';
import { createConsoleReporter } from '../../../harness/report/console.js';
import { gapWords, READ_MOMENTS } from '../../../harness/report/diagram-model.js';
import { renderHtml } from '../../../harness/report/html.js';
import { bandLabel, renderSequenceDiagram } from '../../../harness/report/sequence-diagram.js';
import { renderSummary } from '../../../harness/report/summary.js';
import { viewOf } from '../../../harness/report/view.js';
import { vocabularyFor } from '../../../harness/report/vocabulary.js';
import { at, FEED_GOLDEN_NAMES, find, golden, insertAfter, withVerdict } from '../../helpers/journals.js';

/** Words of the ledger protocol and its reports: none may appear in what the harness writes about a feed run. */
const LEDGER_WORDS = /\b(seqs?|ACKs?|RESUME|RESYNC|EVENT|ledger|total|acknowledged)\b/;

/** What the harness itself wrote in report.html: without the scenario file and the processes' own output (their words, not ours). */
const harnessWords = (html: string): string =>
  html.replace(/<section id="output">[\s\S]*?<\/section>/, '').replace(/<section id="scenario">[\s\S]*?<\/section>/, '');

/** What the console prints for a run: its milestones as the entries come, then its verdict. */
function consoleOf(journal: readonly JournalEntry[], name: string): string {
  let text = '';
  let now = 0;
  const out = {
    write: (s: string) => {
      text += s;
      return true;
    },
  };
  const r = createConsoleReporter({ tty: false, quiet: false, out, now: () => now, interval: false, cwd: '/' });
  r.scenarioStarted(name);
  for (const e of journal) {
    now += 400; // a "still …" line now and then, with the progress word
    r.onJournal(e);
    r.tick();
  }
  r.scenarioFinished(name, { status: viewOf(journal).status, runDir: '/reports/run', view: viewOf(journal) });
  r.close();
  return text;
}

const firstMatch = (text: string, re: RegExp): string => {
  const m = re.exec(text);
  return m ? `"${m[0]}" in …${text.slice(Math.max(0, m.index - 80), m.index + 80)}…` : '';
};

t.test('real feed runs: report.html, summary.md and the console never speak ledger', async (t) => {
  for (const name of FEED_GOLDEN_NAMES) {
    const journal = golden(name);
    const view = viewOf(journal);
    t.equal(view.protocol, 'feed', `${name} is a feed run`);
    t.equal(view.status, 'pass', `${name} passed when recorded`);
    const { html, diagram } = renderHtml(journal);
    const summary = renderSummary(journal);
    const console = consoleOf(journal, view.name);
    for (const [what, text] of [
      ['report.html', harnessWords(html)],
      ['summary.md', summary],
      ['console', console],
    ] as const)
      t.equal(firstMatch(text, LEDGER_WORDS), '', `${name}: no ledger word in its ${what}`);

    // The feed's words, in each.
    t.match(html, /subscribe from \d+:\d+|subscribe, cursor null/, `${name}: the diagram names the subscribe's cursor`);
    t.match(html, /snapshot at \d+:\d+/, `${name}: … and the snapshot's`);
    t.match(html, /event \d+:\d+ Transfer/, `${name}: an event by its cursor`);
    t.match(html, /read at subscribe: cursor /, `${name}: the read at each subscribe, in the lab's words`);
    t.notMatch(html, /◆ file: cursor|>file: cursor/, `${name}: no read is a plain "file" read any more`);
    t.match(html, /<section id="activity"><h2>Activity list: the consumer vs the chain<\/h2>/, `${name}: the activity list table`);
    t.match(html, /<section id="balances"><h2>Balances: the consumer vs the chain<\/h2>/, `${name}: the balances table`);
    t.match(summary, /\| first difference in the activity list \|/, `${name}: summary.md has the first-difference column`);
    t.match(summary, /## Activity list: the consumer vs the chain/);
    t.match(summary, /activity list matches the chain/, `${name}: the headline in the feed's words`);
    t.match(console, /[1-9]\d* events delivered/, `${name}: the console's progress is the lab's word: events delivered`);
    t.notMatch(console, /resumed/, `${name}: not "resumed", which means nothing in the feed lab`);
    t.match(console, /consumer #1's file \(read at subscribe\): cursor /, `${name}: the console's reads in the feed's words`);
    t.ok(diagram.arrows > 0);
  }
});

t.test('reconnect gaps: every open after a close says how long the consumer was away', async (t) => {
  const journal = golden('feed-cut-30s-pass');
  const { diagram } = renderHtml(journal);
  const opens = [...diagram.svg.matchAll(/<g class="mark open"[^>]*><title>[^<]*<\/title>[\s\S]*?<text x="[^"]*" y="[^"]*">([^<]*)<\/text><\/g>/g)].map(
    (m) => m[1]!,
  );
  const consumerOpens = journal.filter((e) => e.type === 'wire' && e.kind === 'open' && e.owner?.role === 'consumer').length;
  t.ok(consumerOpens >= 2, `the cut makes the consumer reconnect (${consumerOpens} connections)`);
  t.ok(
    opens.some((o) => /^reconnected after \d/.test(o)),
    `a reconnect names its gap: ${opens.join(' | ')}`,
  );
  t.ok(
    opens.some((o) => /^connected \(conn \d+\)$/.test(o)),
    'the first connection of each role is just "connected"',
  );
});

t.test('gapWords: a gap in as few characters as a mark has room for', async (t) => {
  t.equal(gapWords(512), '0.512 s');
  t.equal(gapWords(1234), '1.2 s');
  t.equal(gapWords(42_400), '42 s');
  t.equal(gapWords(10 * 60_000 + 5_000), '10 min 5 s');
  t.same(READ_MOMENTS, { 'after-exit': 'read after exit', 'while-stopped': 'read while stopped', final: 'final read' });
});

// ----------------------------------------------------------------------------------------- a slow reader

const C = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const A = `0x${'a1'.repeat(20)}`;
const eventLine = (block: number, log = 0) =>
  `${JSON.stringify({ op: 'event', cursor: C(block, log), type: 'Transfer', payload: { from: A, to: A, amount: '1', txHash: '0x1', blockHash: '0x2' } })}\n`;

/**
 * Ten minutes of a slow reader, as a feed journal: one consumer process subscribing with a null
 * cursor, a snapshot at block 9, `n` events (two per block) with a ping/pong every 50 events,
 * then `reset slow-consumer`, a reconnect 1.5 s later from its durable cursor, a revoke of the
 * last three blocks it was sent, and the new branch.
 */
function slowReader(n: number): JournalEntry[] {
  const base = golden('feed-happy-path-pass');
  const head = base.filter((e) => e.type === 'run-start' || e.type === 'scenario' || (e.type === 'stream' && e.role === 'consumer'));
  // A wire entry of the consumer's stream (the transcript's kinds: open, send, recv, close).
  const w = (conn: number, rest: Record<string, unknown>): JournalEvent => ({ type: 'wire', stream: 'consumer', conn, ...rest }) as JournalEvent;
  const owner = { role: 'consumer' as const, incarnation: 1 };
  const events: [number, JournalEvent][] = [
    [100, { type: 'process-start', role: 'consumer', incarnation: 1, pid: 100, command: 'node client.js', env: { CHAOSLAB_APPLY_DELAY_MS: '100' } }],
    [110, w(1, { kind: 'open', tag: 'consumer 1', owner })],
    [120, w(1, { kind: 'recv', line: `${JSON.stringify({ op: 'subscribe', client: 'c', topics: [A], cursor: null, blockHash: null })}\n` })],
    [130, w(1, { kind: 'send', line: `${JSON.stringify({ op: 'snapshot', cursor: C(9), blockHash: '0x9', state: { balances: { [A]: '1' } } })}\n` })],
  ];
  const ms = (i: number) => 200 + (i * 600_000) / n;
  for (let i = 0; i < n; i++) {
    events.push([ms(i), w(1, { kind: 'send', line: eventLine(10 + Math.floor(i / 2), i % 2) })]);
    if (i % 50 === 49) {
      events.push([ms(i) + 1, w(1, { kind: 'send', line: `{"op":"ping","id":${i}}\n` })]);
      events.push([ms(i) + 2, w(1, { kind: 'recv', line: `{"op":"pong","id":${i}}\n` })]);
    }
  }
  const lastBlock = 10 + Math.floor((n - 1) / 2);
  const end = ms(n);
  events.push(
    [end, w(1, { kind: 'send', line: '{"op":"reset","reason":"slow-consumer"}\n' })],
    [end + 1, w(1, { kind: 'close', by: 'publisher', reason: 'reset slow-consumer' })],
    [end + 1501, w(2, { kind: 'open', tag: 'consumer 1', owner })],
    [
      end + 1502,
      w(2, { kind: 'recv', line: `${JSON.stringify({ op: 'subscribe', client: 'c', topics: [A], cursor: C(lastBlock - 100), blockHash: '0x3' })}\n` }),
    ],
    [end + 1503, w(2, { kind: 'send', line: `${JSON.stringify({ op: 'revoke', fromCursor: C(lastBlock - 2) })}\n` })],
    [end + 1504, w(2, { kind: 'send', line: eventLine(lastBlock - 2) })],
    [
      end + 1600,
      {
        type: 'process-exit',
        role: 'consumer',
        incarnation: 1,
        code: 0,
        signal: null,
        durationMs: end + 1500,
        stdoutTail: '',
        stderrTail: '',
        stdoutBytes: 0,
        stderrBytes: 0,
      },
    ],
    [end + 1700, { type: 'run-end', status: 'pass' }],
  );
  return [...head, ...events.map(([time, e]) => at(time, e))];
}

t.test('a slow reader: ten minutes, thousands of frames, a few dozen rows', async (t) => {
  const n = 6000;
  const journal = slowReader(n);
  const vocabulary = vocabularyFor('feed');
  const d = renderSequenceDiagram(journal, vocabulary, []);
  t.ok(d.rows < 80, `${d.rows} rows for ${journal.length} entries`);
  t.ok(d.bands >= 1, 'collapsed into bands');
  t.ok(d.collapsed > n - 20, `${d.collapsed} lines collapsed`);
  t.match(d.svg, /publisher → consumer #1: event blocks \d+…\d+, [\d ]+ lines/, 'the band names its blocks, in the feed’s words');
  t.match(d.svg, /consumer #1 → publisher: pong ×\d+|publisher → consumer #1: ping ×\d+/, 'heartbeats collapse too');
  t.match(d.svg, />reset slow-consumer</, 'the reset stays, with its reason');
  t.match(d.svg, />reconnected after 1\.5 s \(conn 2\)</, 'the reconnect gap');
  t.match(d.svg, />subscribe from \d+:0</, 'the resubscribe from its durable cursor');
  const lastBlock = 10 + Math.floor((n - 1) / 2);
  t.match(d.svg, new RegExp(`>revoke ${lastBlock - 2}:0…${lastBlock}:1 ×6<`), 'the revoke names the band of delivered events it voids');
  t.match(d.svg, />snapshot at 9:0</);
  t.match(d.svg, new RegExp(`>event ${lastBlock - 2}:0 Transfer<`), 'the new branch after the revoke');
  t.notMatch(d.svg, LEDGER_WORDS);
  t.match(d.svg, /\{&quot;op&quot;:&quot;reset&quot;,&quot;reason&quot;:&quot;slow-consumer&quot;\}/, 'the tooltip keeps the exact bytes');
});

t.test('a finding about one cursor highlights that frame, not every frame of its block', async (t) => {
  const journal = slowReader(200);
  const named = journal.find((e) => e.type === 'wire' && e.kind === 'send' && e.line === eventLine(50, 1))!;
  const sibling = journal.find((e) => e.type === 'wire' && e.kind === 'send' && e.line === eventLine(50, 0))!;
  const findings = [{ code: 'wrong-content', text: 'event 50:1 …', subject: { cursors: [C(50, 1)], seqs: [50], t: named.t } }];
  const vocabulary = vocabularyFor('feed');
  const d = renderSequenceDiagram(journal, vocabulary, findings);
  const culprits = [...d.svg.matchAll(/<g class="msg msg-event culprit" data-t="([^"]*)"/g)].map((m) => Number(m[1]));
  t.same(culprits, [named.t], 'the named cursor, at its time');
  t.match(d.svg, new RegExp(`data-t="${sibling.t}"`), 'its block-mate stays visible only as context, if at all');
  const siblingGroup = new RegExp(`<g class="msg msg-event" data-t="${sibling.t}"`);
  t.match(d.svg, siblingGroup, 'the block-mate is drawn (it is next to the named one) but not highlighted');

  // The same finding with its block only (a lab without exact keys): the block decides, as for the ledger.
  const blockOnly = renderSequenceDiagram(journal, vocabulary, [{ ...findings[0]!, subject: { seqs: [50], t: named.t } }]);
  t.same(
    [...blockOnly.svg.matchAll(/<g class="msg msg-event culprit" data-t="([^"]*)"/g)].map((m) => Number(m[1])),
    [named.t],
  );
  // A vocabulary that gives no keys: cursors in findings change nothing.
  const noKeys: Vocabulary = { ...vocabulary, classify: (line) => ({ ...vocabulary.classify(line), key: undefined }) as never };
  const far = journal.find((e) => e.type === 'wire' && e.kind === 'send' && e.line === eventLine(80, 0))!;
  const byKeyOnly = [{ code: 'x', text: 'x', subject: { cursors: [C(80, 0)], t: far.t } }];
  t.same([...renderSequenceDiagram(journal, noKeys, byKeyOnly).svg.matchAll(/culprit" data-t="/g)].length, 0, 'no key: not named');
  t.same([...renderSequenceDiagram(journal, vocabulary, byKeyOnly).svg.matchAll(/culprit" data-t="/g)].length, 1, 'by key alone');
});

t.test('labels never hide a line that broke the grammar; the ledger keeps its lines as they are', async (t) => {
  const journal = golden('feed-happy-path-pass');
  const sub = find(journal, 'wire', (e) => e.kind === 'recv' && e.line.includes('"op":"subscribe"'));
  const broken = insertAfter(journal, sub, {
    type: 'wire',
    stream: 'consumer',
    conn: 1,
    kind: 'recv',
    line: '{"op":"subscribe"\n',
    error: 'not JSON',
  } as JournalEvent);
  const { diagram } = renderHtml(broken);
  t.match(diagram.svg, /\{&quot;op&quot;:&quot;subscribe&quot; {2}⚠ not JSON|⚠ not JSON/, 'the broken line itself, with why');
  const ledger = renderHtml(golden('ack-crash-pass')).diagram.svg;
  t.match(ledger, />EVENT 0 \d+</, 'ledger lines keep their own text');
  t.match(ledger, /EVENT 0…\d+|ACK/, 'and the ledger bands have no position word');
});

t.test('bandLabel: the position word is the lab’s', async (t) => {
  const lanes = [
    { id: 'publisher', kind: 'publisher' as const, title: 'publisher', subtitle: '' },
    { id: 'consumer#1', kind: 'consumer' as const, title: 'consumer #1', subtitle: '' },
  ];
  const g = { from: 'publisher', to: 'consumer#1', cls: 'event', count: 1200, min: 10, max: 609 };
  t.equal(bandLabel(g, lanes, 'blocks'), 'publisher → consumer #1: event blocks 10…609, 1 200 lines');
  t.equal(bandLabel({ ...g, cls: 'EVENT', count: 1 }, lanes), 'publisher → consumer #1: EVENT 10…609, 1 line');
  t.equal(bandLabel({ from: 'consumer#1', to: 'consumer#1', cls: 'read', count: 3 }, lanes), 'consumer #1: read ×3');
});

t.test('a failing feed run: the verdict’s words, the first difference marked, still no ledger word', async (t) => {
  const journal = withVerdict(golden('feed-happy-path-pass'), (v) => ({
    ...v,
    status: 'fail',
    headline: 'consumer: 1 event of the chain missing from its activity list: 1:00000000000012:0000',
    findings: [
      {
        code: 'missing-events',
        text: 'consumer: 1 event of the chain missing from its activity list: 1:00000000000012:0000',
        subject: { cursors: [C(12)], seqs: [12] },
      },
    ],
    diff: ['consumer: 1 event missing (12:0)'],
  }));
  const fixed = journal.map((e) => (e.type === 'run-end' ? { ...e, status: 'fail' as const } : e));
  const summary = renderSummary(fixed);
  t.match(summary, /# chaoslab: feed-happy-path — FAIL/);
  t.match(summary, /## Why/);
  t.equal(firstMatch(summary, LEDGER_WORDS), '');
  t.equal(firstMatch(consoleOf(fixed, 'feed-happy-path'), LEDGER_WORDS), '');
});
