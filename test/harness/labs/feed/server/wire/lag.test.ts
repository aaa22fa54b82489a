// Delivery lag on known inputs: samples are arrival minus the last commit of the event's block
// before it arrived (a reorganisation commits a block number again), history committed before
// the stream subscribed is no sample; p50/p99 by linear interpolation, max; one point a block;
// every probe, client and the crowd as a stream of its own; the verdict's table, figure, words
// and its bound (probes and crowd only, a slow reader's lag never).
import t from 'tap';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import { CROWD_SERIES, commitTimes, lagSamples, lagSeriesOf, seriesOf, summarizeLag } from '../../../../../../harness/labs/feed/server/wire/lag.js';
import { LAG_FIGURE, type LagFigureData, lagVerdict } from '../../../../../../harness/labs/feed/server/wire/lag-verdict.js';
import { drawLagFigure } from '../../../../../../harness/labs/feed/report/lag-plot.js';
import { feedVocabulary } from '../../../../../../harness/labs/feed/report/vocabulary.js';

const c = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const event = (cursor: string) => `{"op":"event","cursor":"${cursor}","type":"Transfer","payload":{"amount":"5"}}\n`;
const commit = (t: number, ...blocks: number[]): JournalEntry => ({ t, type: 'outbox-commit', blocks, logs: blocks.length });
const wire = (t: number, stream: string, kind: 'send' | 'recv', line: string): JournalEntry => ({ t, type: 'wire', stream, conn: 1, kind, line });

t.test('summarizeLag: known percentiles (linear interpolation), max, none without samples', async (t) => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, shuffled order
  t.same(summarizeLag(hundred), { samples: 100, p50: 50.5, p99: 99, max: 100 });
  t.same(summarizeLag([7]), { samples: 1, p50: 7, p99: 7, max: 7 });
  t.same(summarizeLag([10, 20]), { samples: 2, p50: 15, p99: 19.9, max: 20 });
  t.equal(summarizeLag([]), undefined);
});

t.test('lagSamples: arrival minus the last commit of its block before it; history before the subscribe left out', async (t) => {
  const commits = commitTimes([commit(100, 5), commit(1000, 6), commit(2000, 7), commit(3000, 7, 8)]);
  t.same(commits.get(7), [2000, 3000], 'a reorganisation commits block 7 again');
  const samples = lagSamples(
    commits,
    [
      { t: 1200, cursor: c(5) }, // block 5 was committed before the subscribe at 500: history
      { t: 1040, cursor: c(6) },
      { t: 1060, cursor: c(6, 1) },
      { t: 2500, cursor: c(7) }, // the first block 7
      { t: 3010, cursor: c(7) }, // the reorganisation's block 7
      { t: 3020, cursor: c(8) },
      { t: 3030, cursor: c(9) }, // never committed: no sample
      { t: 3040, cursor: 'not a cursor' },
    ],
    500,
  );
  t.same(
    samples.map((s) => [s.block, s.lagMs]),
    [
      [6, 40],
      [6, 60],
      [7, 500],
      [7, 10],
      [8, 20],
    ],
  );
  const series = seriesOf('probe', samples)!;
  t.same(series.summary, { samples: 5, p50: 40, p99: 482.4, max: 500 });
  t.same(
    series.points,
    [
      [1000, 59.8],
      [2000, 500],
      [3000, 19.9],
    ],
    'one point a commit: the p99 of its events',
  );
});

function runJournal(slowLag = 4000): JournalEntry[] {
  const j: JournalEntry[] = [wire(50, 'probe', 'recv', '{"op":"subscribe"}\n'), wire(60, 'client:slow', 'recv', '{"op":"subscribe"}\n')];
  for (let b = 1; b <= 10; b++) {
    j.push(commit(b * 100, b));
    j.push(wire(b * 100 + 10, 'probe', 'send', event(c(b))));
    j.push(wire(b * 100 + slowLag, 'client:slow', 'send', event(c(b))));
  }
  j.push(wire(2000, 'probe', 'send', '{"op":"ping","id":1}\n'));
  for (const n of [1, 2])
    j.push({
      t: 5000,
      type: 'crowd-client',
      client: n,
      subscribedAt: 20,
      snapshot: c(0),
      events: Array.from({ length: 10 }, (_, i) => c(i + 1)),
      arrivals: Array.from({ length: 10 }, (_, i) => (i + 1) * 100 + 20 * n),
      digest: '',
      afterReset: 0,
    });
  j.push({ t: 5000, type: 'crowd-client', client: 3, events: [], arrivals: [], digest: '', afterReset: 0 });
  return j;
}

t.test('lagSeriesOf: a series per probe and client stream, then the crowd together; nothing without commits', async (t) => {
  const series = lagSeriesOf(runJournal());
  t.same(
    series.map((s) => [s.stream, s.summary]),
    [
      ['probe', { samples: 10, p50: 10, p99: 10, max: 10 }],
      ['client:slow', { samples: 10, p50: 4000, p99: 4000, max: 4000 }],
      [CROWD_SERIES, { samples: 20, p50: 30, p99: 40, max: 40 }],
    ],
  );
  t.same(lagSeriesOf(runJournal().filter((e) => e.type !== 'outbox-commit')), []);
});

t.test('lagVerdict: table, figure, headline words; the bound fails the probe or the crowd, never a slow reader', async (t) => {
  const ok = lagVerdict(runJournal(), 1000);
  t.same(ok.findings, [], 'the slow reader is 4 s behind by design: no finding');
  t.equal(ok.words, 'delivery lag p50/p99: probe 1 10 ms/10 ms, the crowd (3 clients) 30 ms/40 ms');
  t.same(
    ok.table?.rows.map((r) => [r.label, ...r.cells]),
    [
      ['probe 1', 10, '10 ms', '10 ms', '10 ms', '1000 ms'],
      ['client slow', 10, '4000 ms', '4000 ms', '4000 ms', '—'],
      ['the crowd (3 clients)', 20, '30 ms', '40 ms', '40 ms', '1000 ms'],
    ],
  );
  t.equal(ok.figure?.id, LAG_FIGURE);
  t.equal((ok.figure!.data as LagFigureData).boundMs, 1000);
  const tight = lagVerdict(runJournal(), 20);
  t.same(
    tight.findings.map((f) => f.code),
    ['lag-too-high'],
  );
  t.match(tight.findings[0]!.text, /^the crowd \(3 clients\): p99 delivery lag 40 ms .* past the scenario's bound of 20 ms/);
  t.same(lagVerdict(runJournal()).findings, [], 'no bound, no finding');
  t.same(lagVerdict([]), { findings: [] }, 'a run without lag data has no part');
});

t.test('the lag plot: one line a stream with its p50/p99, the bound dashed; other figures are not its', async (t) => {
  const figure = lagVerdict(runJournal(), 1000).figure!;
  const svg = drawLagFigure(figure)!;
  t.match(svg, /^<svg /);
  t.equal(svg.match(/<path /g)?.length, 3, 'three series');
  t.equal(svg.match(/<circle /g)?.length, 30, 'one point a block each');
  t.match(svg, /probe 1: p50 10 ms, p99 10 ms/);
  t.match(svg, /stroke-dasharray="4 3"><title>bound: p99 at most 1000 ms/);
  t.equal(drawLagFigure({ ...figure, id: 'storm' }), undefined);
  t.equal(feedVocabulary.drawFigure?.(figure), svg, 'the feed vocabulary draws it');
  const hostile = { ...figure, data: { series: [{ ...(figure.data as LagFigureData).series[0]!, label: '<script>x</script>' }] } };
  t.notMatch(drawLagFigure(hostile)!, /<script>/, 'labels are escaped');
});
