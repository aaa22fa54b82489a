// Reports of the feed lab's server runs speak of the server under test and its probes: real runs
// (golden journals of the TypeScript reference server, test/fixtures/journals/feed-server-*.jsonl)
// drawn with a lane per party as the run named them (each server instance, each probe, each raw
// client), the server's memory as a plot with its bound, and what each probe and client was due
// against what it received. A consumer run's diagram is the one it always was.
import t from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { followEntry, newLive } from '../../../harness/report/console-live.js';
import { renderHtml } from '../../../harness/report/html.js';
import { runJson } from '../../../harness/report/run-json.js';
import { viewOf } from '../../../harness/report/view.js';
import { MEMORY_FIGURE, type MemoryFigureData } from '../../../harness/labs/feed/report/memory-figure.js';
import { deliveryTable } from '../../../harness/labs/feed/server/wire/tally.js';
import { expectedOf } from '../../../harness/labs/feed/check/state.js';
import { simulate } from '../../../harness/labs/feed/scenario/chain-script.js';
import type { FeedPlan } from '../../../harness/labs/feed/scenario/plan.js';
import { golden } from '../../helpers/journals.js';

const titles = (journal: readonly JournalEntry[]): string[] => renderHtml(journal).diagram.lanes.map((l) => l.title);

/** The diagram's arrows as "from → to: class", from their tooltips. */
function arrows(svg: string): string[] {
  return [...svg.matchAll(/<g class="msg msg-([a-z]+)[^"]*"[^>]*><title>[\d.]+ s {2}(\S+) → (\S+) {2}/g)].map((m) => `${m[2]} → ${m[3]}: ${m[1]}`);
}

/** The console's milestone lines for a journal. */
function milestones(journal: readonly JournalEntry[]): string[] {
  const live = newLive('run', 0);
  const lines: string[] = [];
  for (const e of journal) followEntry(live, e, (text) => lines.push(text));
  return lines;
}

const expectedOfRun = (journal: readonly JournalEntry[]) => {
  const plan = (journal.find((e) => e.type === 'scenario') as { plan: { lab: FeedPlan } }).plan.lab;
  return expectedOf(simulate(plan.chain, plan.topicIndexes));
};

t.test('two instances: a lane per instance and per probe, as the run names them', async (t) => {
  const journal = golden('feed-server-two-instances-pass');
  t.same(titles(journal), ['server instance 1', 'server instance 2', 'probe 1', 'probe 2', 'probe 3']);
  const { diagram, html } = renderHtml(journal);
  const drawn = arrows(diagram.svg);
  // Probe 1 subscribes to instance 1, and after the kill and its repoint to instance 2.
  t.ok(drawn.includes('party:probe-1 → party:instance-1: subscribe'), 'probe 1 subscribes to instance 1');
  t.ok(drawn.includes('party:probe-1 → party:instance-2: subscribe'), 'and, repointed, to instance 2');
  // Probe 3 was led to instance 2 from the start: its reset shutdown comes from there, on its lane.
  t.ok(drawn.includes('party:instance-2 → party:probe-3: reset'), 'the reset shutdown on probe 3’s lane');
  t.notOk(
    drawn.some((a) => /publisher|control|consumer/.test(a)),
    'no arrow from a publisher lane or to a control one',
  );
  t.match(diagram.svg, /<title>[\d.]+ s {2}party:instance-1: killed by SIGKILL<\/title>/, 'the kill is a mark on instance 1');
  t.match(diagram.svg, /party:probe-2: repoint-probe-2 \(signal\)/, 'the repoint is a mark on probe 2');
  t.notMatch(html, /control consumer/, 'the process output names the probes');
  t.match(html, /<p class="quiet-process">probe 3 — exit 0 /, 'the process output names probe 3');
});

t.test('the console and the run record name the server and its probes, never the control', async (t) => {
  const journal = golden('feed-server-two-instances-pass');
  const lines = milestones(journal);
  t.ok(
    lines.some((l) => /^server instance 2 started \(pid \d+\)$/.test(l)),
    'server instance 2 started',
  );
  t.ok(
    lines.some((l) => /^probe 3 exited 0 after /.test(l)),
    'probe 3 exited',
  );
  t.ok(
    lines.some((l) => /^probe 2's file \(read while converging\)/.test(l)),
    'each probe’s own read',
  );
  t.ok(
    lines.some((l) => /SIGTERM to probe 1 \(pid/.test(l)),
    'the SIGTERM names the probe',
  );
  t.notOk(
    lines.find((l) => /\bcontrol\b(?! \(signal\))|consumer #/.test(l.replace('end-of-run-control', ''))),
    'no line speaks of the control or a consumer',
  );
  const record = runJson(viewOf(journal), '/reports/run');
  t.same(
    record.parties?.map((p) => `${p.side}: ${p.name}`),
    ['server: server instance 1', 'server: server instance 2', 'client: probe 1', 'client: probe 2', 'client: probe 3'],
  );
  t.match(record.server, /server\/main\.js/);
});

t.test('slow reader: the server, the probe and the slow client each on a lane; resets on theirs', async (t) => {
  const journal = golden('feed-server-slow-reader');
  t.same(titles(journal), ['server under test', 'probe', 'slow']);
  const drawn = arrows(renderHtml(journal).diagram.svg);
  t.ok(drawn.includes('party:server → party:client:slow: reset'), 'the slow client’s reset');
  t.ok(drawn.includes('party:server → party:probe-1: reset'), 'the probe’s reset (it was reset as slow under load)');
});

t.test('slow reader: the memory plot holds every sample and the bound', async (t) => {
  const journal = golden('feed-server-slow-reader');
  const samples = journal.filter((e) => e.type === 'memory');
  const view = viewOf(journal);
  const figure = view.figures?.find((f) => f.id === MEMORY_FIGURE);
  if (!figure) return t.fail('no memory figure in the verdict');
  const data = figure.data as MemoryFigureData;
  t.same(
    data.samples,
    samples.map((s) => [s.t, s.rssBytes]),
    'the figure’s data is the samples',
  );
  t.equal(data.boundBytes, 32 * 1024 * 1024);
  const { html } = renderHtml(journal);
  const svg = /<section id="server-memory-plot"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  t.match(svg, /<svg [^>]*class="time-plot"/);
  t.equal([...svg.matchAll(/<circle [^>]*><title>[\d.]+ s: [\d.]+ MiB<\/title>/g)].length, samples.length, 'a point per sample');
  t.match(svg, /<g class="limit">[\s\S]*?bound: \+32\.0 MiB/, 'the bound drawn');
  t.notMatch(html, /<td><code>memory<\/code><\/td>/, 'memory is no longer an unknown entry');
  t.match(html, /id="server-memory"/, 'the table stays');
});

t.test('each probe and client: the events due against those received', async (t) => {
  const slow = golden('feed-server-slow-reader');
  const table = viewOf(slow).tables.find((x) => x.id === 'delivery');
  t.same(
    table?.rows.map((r) => [r.label, ...r.cells]),
    [
      ['probe', 1791, 1122, 669, 0, 0, '1: slow-consumer', 0],
      ['slow', 1791, 94, 1697, 0, 0, '1: slow-consumer', 0],
    ],
  );
  t.same(deliveryTable(slow, expectedOfRun(slow), new Set()), table, 'the verdict’s table is the checker’s facts');
  const two = golden('feed-server-two-instances-pass');
  t.same(
    viewOf(two)
      .tables.find((x) => x.id === 'delivery')
      ?.rows.map((r) => [r.label, ...r.cells]),
    [
      ['probe 1', 24, 24, 0, 0, 0, 0, 0],
      ['probe 2', 24, 24, 0, 0, 0, 0, 0],
      ['probe 3', 24, 24, 0, 0, 0, '1: shutdown', 0],
    ],
  );
  const { html } = renderHtml(slow);
  t.match(html, /<section id="delivery">[\s\S]*?<td[^>]*>1 122<\/td>/, 'the HTML shows the numbers');
});

t.test('a consumer run has no parties: its diagram is the one it was', async (t) => {
  // Lanes and counts as the diagram drew these journals before runs named their parties (26c9a38).
  const before: [Parameters<typeof golden>[0], string[], number, number, number][] = [
    ['feed-happy-path-pass', ['control', 'publisher', 'consumer #1'], 21, 1, 45],
    ['ack-crash-pass', ['control', 'publisher', 'consumer #1', 'consumer #2'], 16, 0, 32],
    ['feed-crash-apply-pass', ['control', 'publisher', 'consumer #1', 'consumer #2', 'consumer #3'], 61, 3, 106],
  ];
  for (const [name, lanes, arrowCount, bands, rows] of before) {
    const { diagram } = renderHtml(golden(name));
    t.same(
      diagram.lanes.map((l) => l.title),
      lanes,
      name,
    );
    t.same([diagram.arrows, diagram.bands, diagram.rows], [arrowCount, bands, rows], `${name}: arrows, bands, rows`);
    t.equal(viewOf(golden(name)).parties, undefined);
  }
  const lines = milestones(golden('feed-happy-path-pass'));
  t.ok(lines.some((l) => /^control started/.test(l)) && lines.some((l) => /^consumer #1 started/.test(l)), 'the console still says control and consumer');
});
