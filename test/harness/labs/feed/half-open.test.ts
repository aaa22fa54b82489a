// The half-open rule on hand-built facts: a `timeout` toxic (timeout 0) on both streams is a
// half-open link; a consumer process that lived through a long enough stretch of it must have
// connected again (the publisher sees every connection the proxy accepts), or it has no idle
// timeout. Each case changes one thing of a passing run.
import t from 'tap';
import type { ConnFacts, ProcessFacts, RunFacts } from '../../../../harness/labs/feed/check/facts.js';
import { HALF_OPEN_SLACK_MS, halfOpenProblems, halfOpenSpans } from '../../../../harness/labs/feed/check/half-open.js';

const LIMITS = { idleMs: 2000, backoffCapMs: 500 };
const ENOUGH = LIMITS.idleMs + 1.5 * LIMITS.backoffCapMs + HALF_OPEN_SLACK_MS;

type Window = RunFacts['faultWindows'][number];
const toxic = (stream: string, from: number, to?: number, attrs = 'timeout=0', type = 'timeout'): Window => ({
  name: `${type}-${stream}`,
  kind: 'toxic',
  detail: `${type} ${stream}${attrs ? ` ${attrs}` : ''}`,
  from,
  ...(to === undefined ? {} : { to }),
});

const conn = (n: number, openedAt: number): ConnFacts => ({
  stream: 'consumer',
  role: 'consumer',
  conn: n,
  owner: { role: 'consumer', incarnation: 1 },
  openedAt,
  sent: [],
  pings: [],
  pongs: new Map(),
  recvErrors: [],
  notes: [],
});

function facts(windows: Window[], opens: number[], process: Partial<ProcessFacts> = {}): RunFacts {
  const conns = opens.map((at, i) => conn(i + 1, at));
  const p: ProcessFacts = { role: 'consumer', incarnation: 1, startedAt: 0, reads: [], conns, ...process };
  return {
    streams: { consumer: undefined, control: undefined },
    consumers: [p],
    control: { role: 'control', incarnation: 1, reads: [], conns: [] },
    conns: { consumer: conns, control: [] },
    faultWindows: windows,
  };
}

t.test('a half-open stretch is where timeout toxics (timeout 0) hold both streams', async (t) => {
  t.same(halfOpenSpans([toxic('downstream', 1000, 9000), toxic('upstream', 1200, 8000)], 20000), [{ from: 1200, to: 8000 }]);
  t.same(halfOpenSpans([toxic('downstream', 1000), toxic('upstream', 1200)], 20000), [{ from: 1200, to: 20000 }], 'never lifted: until the end');
  t.same(halfOpenSpans([toxic('downstream', 1000, 9000)], 20000), [], 'one way only: the other side still talks');
  t.same(halfOpenSpans([toxic('downstream', 1000, 2000), toxic('upstream', 3000, 4000)], 20000), [], 'not at the same time');
  t.same(
    halfOpenSpans([toxic('downstream', 1000, 9000, 'timeout=500'), toxic('upstream', 1000, 9000, 'timeout=500')], 20000),
    [],
    'a timeout > 0 closes by itself',
  );
  t.same(halfOpenSpans([toxic('downstream', 1000, 9000, ''), toxic('upstream', 1000, 9000, '')], 20000), [{ from: 1000, to: 9000 }], 'no attribute: 0');
  t.same(halfOpenSpans([toxic('downstream', 1000, 9000, 'latency=500', 'latency'), toxic('upstream', 1000, 9000)], 20000), [], 'latency is not a blackhole');
  t.same(halfOpenSpans([{ name: 'cut', kind: 'proxy-down', detail: 'proxy disabled', from: 0, to: 9000 }], 20000), [], 'a cut closes connections');
});

t.test('a consumer that connects again during the stretch passes', async (t) => {
  const windows = [toxic('downstream', 1000, 1000 + ENOUGH + 1000), toxic('upstream', 1000, 1000 + ENOUGH + 1000)];
  t.same(halfOpenProblems(facts(windows, [10, 3500]), LIMITS, 30000), []);
});

t.test('a consumer that keeps its dead connection is named, with the connection and the times', async (t) => {
  const windows = [toxic('downstream', 1000, 1000 + ENOUGH + 1000), toxic('upstream', 1050, 1000 + ENOUGH + 1000)];
  const found = halfOpenProblems(facts(windows, [10, 1000 + ENOUGH + 1500]), LIMITS, 30000);
  t.equal(found.length, 1);
  t.equal(found[0]!.code, 'half-open-kept');
  t.match(found[0]!.text, /^process 1 kept connection 1 through 5\.700 s of a half-open link \(Toxiproxy `timeout` both ways, from 1\.050 s\)/);
  t.match(found[0]!.text, /CHAOSLAB_IDLE_MS \(2000 ms\), yet it never closed the connection and connected again/);
  t.same(found[0]!.subject, { process: { role: 'consumer', incarnation: 1 }, t: 1050 });
  const unconnected = halfOpenProblems(facts(windows, []), LIMITS, 30000);
  t.match(unconnected[0]!.text, /^process 1 kept its connection through/, 'no connection open at the start: still named');
});

t.test('no verdict where none is fair', async (t) => {
  const short = [toxic('downstream', 1000, 1000 + ENOUGH - 1), toxic('upstream', 1000, 1000 + ENOUGH - 1)];
  t.same(halfOpenProblems(facts(short, [10]), LIMITS, 30000), [], 'too short for idle timeout, backoff and slack');
  const long = [toxic('downstream', 1000, 1000 + ENOUGH + 1000), toxic('upstream', 1000, 1000 + ENOUGH + 1000)];
  t.same(halfOpenProblems(facts(long, [10], { startedAt: 2000 }), LIMITS, 30000), [], 'the process started inside the stretch');
  const exit = { t: 3000, code: 86, signal: null, durationMs: 3000, stderrTail: '' };
  t.same(halfOpenProblems(facts(long, [10], { exit }), LIMITS, 30000), [], 'the process ended inside the stretch');
  t.same(halfOpenProblems(facts(long, [10], { startedAt: undefined }), LIMITS, 30000), [], 'never started');
});
