// make bench §5's figures from made-up runs (no timing here): which runs count, the floors, the
// notes that name every refused, incomplete or reset run.
import t from 'tap';
import {
  type FanOutClientResult,
  type FanOutRun,
  contractFigures,
  fanOutFigures,
  memoryPerConnectionKiB,
  perConnectionSamples,
  troubles,
} from '../../../harness/bench/fanout-figures.js';
import { ratioOf } from '../../../harness/bench/figures.js';

const client = (over: Partial<FanOutClientResult> = {}): FanOutClientResult => ({
  connections: 1000,
  events: 1_000_000,
  seconds: 10,
  eventsPerSec: 100_000,
  resets: {},
  closedEarly: 0,
  ...over,
});
const run = (over: Partial<FanOutClientResult> = {}, maxRssMiB = 100, note?: string): FanOutRun => ({
  client: client(over),
  publisher: { maxRssMiB, rssMiB: maxRssMiB - 1 },
  ...(note ? { note } : {}),
});
const lag = (p99: number, p50 = p99 / 2) => ({ lag: { n: 60_000, p50, p99, max: p99 * 2 }, blocksSpanS: 3.5 });

t.test('one connection count: throughput, p99 lag and memory, each beside its floor', async (t) => {
  const figures = fanOutFigures({
    connections: 1000,
    events: 1000,
    replay: [run({ eventsPerSec: 50_000 }), run({ eventsPerSec: 60_000 }), run({ eventsPerSec: 40_000 })],
    raw: [run({ eventsPerSec: 800_000 }), run({ eventsPerSec: 1_000_000 }), run({ eventsPerSec: 900_000 })],
    live: {
      runs: [run(lag(300), 120), run(lag(200), 130), run(lag(400), 125)],
      floor: [run(lag(10), 57), run(lag(8), 58), run(lag(12), 56)],
      blocks: 30,
      eventsPerBlock: 2,
      intervalMs: 100,
    },
  });
  t.equal(figures.length, 3);
  const [throughput, p99, memory] = figures;
  t.equal(throughput!.name, 'feed server, 1 000 subscribers, 1 000-event replay: throughput');
  t.equal(throughput!.unit, 'events/s');
  t.same(throughput!.value, { median: 50_000, min: 40_000, max: 60_000, n: 3, samples: [50_000, 60_000, 40_000] });
  t.equal(throughput!.floor!.name, 'plain socket server, same bytes and client');
  t.equal(ratioOf(throughput!), 50_000 / 900_000);
  t.equal(throughput!.note, undefined, 'nothing went wrong: no note');

  t.equal(p99!.name, 'feed server, 1 000 subscribers, live, 30 blocks of 2 events every 100 ms: p99 delivery lag');
  t.equal(p99!.unit, 'ms');
  t.equal(p99!.value!.median, 300);
  t.same(p99!.floor, { name: '1 subscriber, same stream', value: { median: 10, min: 8, max: 12, n: 3, samples: [10, 8, 12] } });
  t.equal(p99!.note, 'p50 150.0 ms; blocks mined over 3.50 s (2.90 s scheduled)');

  t.equal(memory!.unit, 'MiB');
  t.equal(memory!.value!.median, 125);
  t.equal(memory!.floor!.value.median, 57);
});

t.test('replay only (a 20 000-event stream): the throughput figure alone', async (t) => {
  const figures = fanOutFigures({ connections: 100, events: 20_000, replay: [run()], raw: [run({ eventsPerSec: 200_000 })] });
  t.equal(figures.length, 1);
  t.equal(figures[0]!.name, 'feed server, 100 subscribers, 20 000-event replay: throughput');
  t.equal(ratioOf(figures[0]!), 0.5);
});

t.test('incomplete runs count in no figure and are named; refused cases have no value', async (t) => {
  const figures = fanOutFigures({
    connections: 10_000,
    events: 1000,
    replay: [run({ eventsPerSec: 1, incomplete: 'timed out after 120 s' }), run({ eventsPerSec: 30_000 })],
    raw: [{ refused: 'needs ulimit -n ≥ 10256, the hard limit here is 4096 and cannot be raised' }],
    live: {
      runs: [run({ incomplete: 'every connection closed before the stream was read', resets: { 'slow-consumer': 3 }, closedEarly: 3 })],
      floor: [run(lag(9))],
      blocks: 30,
      eventsPerBlock: 1,
      intervalMs: 100,
    },
  });
  const [throughput, p99, memory] = figures;
  t.same(throughput!.value, { median: 30_000, min: 30_000, max: 30_000, n: 1, samples: [30_000] }, 'the timed-out run is left out');
  t.equal(throughput!.floor, undefined, 'no floor was measured');
  t.equal(ratioOf(throughput!), undefined);
  t.equal(
    throughput!.note,
    '1 of 2 runs incomplete (timed out after 120 s); floor: not run: needs ulimit -n ≥ 10256, the hard limit here is 4096 and cannot be raised',
  );
  t.equal(p99!.value, undefined, 'no complete live run: no value');
  t.equal(p99!.floor!.value.median, 9);
  t.match(p99!.name, /30 blocks of 1 event every/);
  t.equal(
    p99!.note,
    '1 of 1 runs incomplete (every connection closed before the stream was read); 3 resets slow-consumer; 3 connections closed by the server early',
  );
  t.equal(memory!.value, undefined);
});

t.test('troubles: nothing for clean runs; resets summed over runs; notes once', async (t) => {
  t.same(troubles([run(), run()]), []);
  t.same(
    troubles([
      run({ resets: { shutdown: 1 } }, 1, 'ulimit -n raised from 1024 to 10256'),
      run({ resets: { shutdown: 2 }, closedEarly: 1 }, 1, 'ulimit -n raised from 1024 to 10256'),
    ]),
    ['3 resets shutdown', '1 connection closed by the server early', 'ulimit -n raised from 1024 to 10256'],
  );
  t.same(troubles([{ refused: 'x' }, { refused: 'x' }]), ['not run: x'], 'the same refusal once');
});

t.test('memory per connection: (peak with N − with 1) / (N − 1), in KiB, paired by round', async (t) => {
  t.equal(memoryPerConnectionKiB(157, 57, 1001), 102.4);
  t.equal(memoryPerConnectionKiB(57, 57, 2), 0);
  t.equal(memoryPerConnectionKiB(100, 57, 1), undefined, 'one connection has no per-connection share');
  t.same(
    perConnectionSamples([run({}, 1057), run({ incomplete: 'timed out' }, 2000), run({}, 1157)], [run({}, 57), run({}, 57), run({}, 57)], 1001),
    [1024, 1126.4],
  );
  t.same(perConnectionSamples([run({}, 1057)], [], 1001), [], 'a run without its floor counts in no sample');
});

t.test('the contract server: p50 and p99 lag beside one subscriber, memory per connection, troubles noted', async (t) => {
  const samples = {
    connections: 1001,
    events: 1000,
    replay: [],
    raw: [],
    contract: {
      runs: [run(lag(90, 40), 157), run(lag(110, 60), 167), run({ ...lag(100, 50), resets: { 'slow-consumer': 2 } }, 162)],
      floor: [run(lag(30, 20), 57), run(lag(40, 30), 57), run(lag(35, 25), 57)],
      blocks: 30,
      eventsPerBlock: 2,
      intervalMs: 100,
      server: 'TypeScript reference server',
      pollMs: 50,
    },
  };
  const [p50, p99, memory] = contractFigures(samples);
  t.match(p50!.name, /TypeScript reference server \(its own process, polling every 50 ms\), 1 001 subscribers, live.*: p50 delivery lag/);
  t.equal(p50!.value!.median, 50);
  t.equal(p50!.floor!.value.median, 25);
  t.equal(p99!.value!.median, 100);
  t.equal(p99!.floor!.value.median, 35);
  t.match(p99!.note, /2 resets slow-consumer/);
  t.equal(memory!.unit, 'KiB');
  t.same([memory!.value!.min, memory!.value!.median, memory!.value!.max], [102.4, 107.52, 112.64]);
  t.match(memory!.note, /peak RSS 162\.0 MiB, with 1 subscriber 57\.0 MiB/);
  t.same(contractFigures({ ...samples, contract: undefined }), [], 'no contract runs, no figures');
});
