import t from 'tap';
import { sharedFaultCoverage } from '../../../harness/judge/fault-coverage.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import type { FaultPlan } from '../../../harness/scenario/types.js';

// A consumer run as the journal shows it: consumer process 1 from 0.1 s, its connection 1 from 0.2 s.
const base: JournalEntry[] = [
  { t: 0, type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 1, db: 'x' },
  { t: 0, type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 2, db: 'y' },
  { t: 100, type: 'process-start', role: 'consumer', incarnation: 1, pid: 10, command: 'c', env: {} },
  { t: 200, type: 'wire', stream: 'consumer', conn: 1, kind: 'open' },
  { t: 200, type: 'wire', stream: 'control', conn: 1, kind: 'open' },
];
const send = (t: number, stream = 'consumer', conn = 1): JournalEntry => ({ t, type: 'wire', stream, conn, kind: 'send', line: 'EVENT 1' });
const fault = (
  t: number,
  name: string,
  action: 'apply' | 'lift',
  kind: 'toxic' | 'proxy-down' | 'signal' | 'loss',
  detail = '',
  incarnation?: number,
): JournalEntry => ({
  t,
  type: 'fault',
  action,
  name,
  kind,
  detail,
  ...(incarnation ? { incarnation } : {}),
});
const cut: FaultPlan = { name: 'cut-1', effect: { kind: 'proxy-down' }, start: { kind: 'at', ms: 1000 }, end: { kind: 'after', ms: 500 } };
const latency: FaultPlan = {
  name: 'slow',
  effect: { kind: 'toxic', toxic: 'latency', stream: 'downstream', attributes: { latency: 100 } },
  start: { kind: 'at', ms: 1000 },
  end: { kind: 'after', ms: 500 },
};
const kill: FaultPlan = { name: 'kill-7', effect: { kind: 'signal', signal: 'SIGKILL' }, start: { kind: 'point', point: 'before_event', value: 7 } };

t.test('a cut that met a live connection took effect; one while nothing ran did not', async (t) => {
  const met = sharedFaultCoverage(
    [cut],
    [
      ...base,
      fault(1000, 'cut-1', 'apply', 'proxy-down'),
      { t: 1001, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'consumer', reason: 'x' },
      fault(1500, 'cut-1', 'lift', 'proxy-down'),
    ],
  );
  t.match(met, [{ fault: 'cut-1', kind: 'cut', took: true, how: /met live connection 1 and ended it at 1\.00 s/ }]);
  const nobody: JournalEntry[] = [...base.slice(0, 2), fault(1000, 'cut-1', 'apply', 'proxy-down'), fault(1500, 'cut-1', 'lift', 'proxy-down')];
  t.match(sharedFaultCoverage([cut], nobody), [{ took: false, how: /met no connection of the consumer, and no consumer process ran then/ }]);
});

t.test('a cut while the consumer was between connections took effect when it connected again after it', async (t) => {
  const away: JournalEntry[] = [
    ...base,
    { t: 900, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'consumer', reason: 'x' },
    fault(1000, 'cut-1', 'apply', 'proxy-down'),
    fault(1500, 'cut-1', 'lift', 'proxy-down'),
    { t: 1600, type: 'wire', stream: 'consumer', conn: 2, kind: 'open' },
  ];
  t.match(sharedFaultCoverage([cut], away), [{ took: true, how: /kept consumer process 1 off the publisher: it connected again at 1\.60 s/ }]);
  t.match(sharedFaultCoverage([cut], away.slice(0, -1)), [{ took: false, how: /did not connect after it/ }]);
});

t.test("a toxic took effect when lines to the consumer passed through it; the control's lines do not count", async (t) => {
  const window = [fault(1000, 'slow', 'apply', 'toxic'), fault(1500, 'slow', 'lift', 'toxic')];
  t.match(sharedFaultCoverage([latency], [...base, window[0]!, send(1200), window[1]!]), [
    { kind: 'latency', took: true, how: /1 line passed to the consumer/ },
  ]);
  t.match(sharedFaultCoverage([latency], [...base, window[0]!, send(1200, 'control'), send(1600), window[1]!]), [{ took: false, how: /0 lines passed/ }]);
});

t.test('a signal took effect when it reached a process; a trigger never reached is said', async (t) => {
  const points = { before_event: { value: 'seq' as const, describe: (v: number) => `before EVENT ${v}` } };
  t.match(sharedFaultCoverage([kill], [...base, fault(800, 'kill-7', 'apply', 'signal', 'SIGKILL to consumer incarnation 1 (pid 10)', 1)]), [
    { kind: 'kill', took: true },
  ]);
  t.match(sharedFaultCoverage([kill], [...base, fault(800, 'kill-7', 'apply', 'signal', 'SIGKILL not sent: no consumer process is running')]), [
    { took: false },
  ]);
  t.match(sharedFaultCoverage([kill], base, points as never), [{ took: false, how: 'the kill fault never started: its trigger (before EVENT 7) never came' }]);
});

t.test('packet loss took effect when it dropped packets', async (t) => {
  const loss: FaultPlan = { name: 'lossy', effect: { kind: 'loss', percent: 20 }, start: { kind: 'at', ms: 0 } };
  const counters = (packets: number): JournalEntry => ({
    t: 2000,
    type: 'loss',
    name: 'lossy',
    percent: 20,
    port: 1,
    rules: [],
    dropped: { packets, bytes: packets * 60 },
    passed: { packets: 10, bytes: 600 },
  });
  const run = (packets: number) => [...base, fault(300, 'lossy', 'apply', 'loss'), fault(2000, 'lossy', 'lift', 'loss'), counters(packets)];
  t.match(sharedFaultCoverage([loss], run(3)), [{ kind: 'loss', took: true, how: /dropped 3 packets/ }]);
  t.match(sharedFaultCoverage([loss], run(0)), [{ took: false }]);
});
