// The fault engine's trigger logic with a recording fake proxy and process: which fault is
// applied and lifted at which transcript point, process event or time. Time is a fake clock the
// test advances, so nothing here depends on how busy the machine is.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FaultEngine, type Timers } from '../../../harness/faults/engine.js';
import type { FaultTarget } from '../../../harness/faults/effect.js';
import { type JournalEntry, JournalWriter, readJournal } from '../../../harness/record/journal.js';
import { ledgerLab } from '../../../harness/labs/ledger/index.js';
import type { FaultPlan } from '../../../harness/scenario/types.js';
import type { SupervisedProcess } from '../../../harness/processes/supervisor.js';

/** Timers that fire only when the test advances the clock. */
class FakeTimers implements Timers {
  private now = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.due.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  get pending(): number {
    return this.due.size;
  }
  /** Moves the clock and runs what fell due, in order; lets the engine's promise chain settle after each. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      const [id, timer] = [...this.due].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
      if (id === undefined || timer!.at > until) break;
      this.due.delete(id);
      this.now = timer!.at;
      timer!.fn();
      for (let i = 0; i < 10; i++) await Promise.resolve();
      await new Promise((r) => setImmediate(r));
    }
    this.now = until;
  }
}

const before = (seq: number) => ({ kind: 'point', point: 'before_event', value: seq }) as const;
const onAck = (seq: number) => ({ kind: 'point', point: 'on_ack', value: seq }) as const;

function rig(t: Test, faults: FaultPlan[], onKill?: () => void) {
  const calls: string[] = [];
  const proxy = {
    addToxic: async (spec: { name: string; type: string; stream: string; attributes: Record<string, number> }) =>
      void calls.push(`add ${spec.name} ${spec.type} ${spec.stream} ${JSON.stringify(spec.attributes)}`),
    removeToxic: async (name: string) => void calls.push(`remove ${name}`),
    setEnabled: async (on: boolean) => void calls.push(on ? 'enable' : 'disable'),
  };
  let current: { proc: SupervisedProcess; incarnation: number } | undefined;
  const proc = {
    pid: 4242,
    kill: async () => {
      calls.push('SIGKILL');
      onKill?.();
    },
    signal: (s: string) => void calls.push(s),
    continue: () => void calls.push('SIGCONT'),
  } as unknown as SupervisedProcess;
  const target: FaultTarget = { proxy: proxy as unknown as FaultTarget['proxy'], current: () => current };
  const path = join(t.testdir(), 'journal.jsonl');
  const journal = new JournalWriter(path, () => 0);
  const clock = new FakeTimers();
  const engine = new FaultEngine(faults, target, journal, ledgerLab.faultPoints, clock);
  return {
    calls,
    engine,
    clock,
    run: (n: number) => (current = { proc, incarnation: n }),
    exit: () => (current = undefined),
    faults: () =>
      readJournal(path)
        .filter((e): e is Extract<JournalEntry, { type: 'fault' }> => e.type === 'fault')
        .map((e) => `${e.action} ${e.name}: ${e.detail}`),
  };
}

const toxic = (_label: string, toxicType = 'limit_data'): FaultPlan['effect'] => ({
  kind: 'toxic',
  toxic: toxicType as 'limit_data',
  stream: 'upstream',
  attributes: { bytes: 41 },
});

t.test('a toxic from an incarnation start until that process exits (ack-lost)', async (t) => {
  const r = rig(t, [{ name: 'cut', effect: toxic('cut'), start: { kind: 'incarnation', n: 1 }, end: { kind: 'incarnation-exit' } }]);
  await r.engine.incarnationStarting(1);
  t.same(r.calls, ['add cut limit_data upstream {"bytes":41}'], 'in place before the process starts');
  r.run(1);
  await r.engine.point('before_event', 0);
  r.exit();
  await r.engine.incarnationExited(1);
  t.same(r.calls.at(-1), 'remove cut', 'lifted when incarnation 1 exits, before the restart');
  await r.engine.incarnationStarting(2);
  t.equal(r.calls.length, 2, 'fires once');
  t.same(r.faults(), ['apply cut: limit_data upstream bytes=41', 'lift cut: limit_data removed (incarnation 1 exited)']);
});

t.test('started between processes, "until that process exits" means the next one to start', async (t) => {
  const r = rig(t, [{ name: 'reset', effect: toxic('reset', 'reset_peer'), start: before(9), end: { kind: 'incarnation-exit' } }]);
  r.run(1);
  r.exit();
  await r.engine.incarnationExited(1);
  // Killed before EVENT 8: the publisher goes on sending into the dead connection, and EVENT 9 starts the fault.
  await r.engine.point('before_event', 9);
  t.same(r.calls, ['add reset reset_peer upstream {"bytes":41}']);
  await r.engine.incarnationStarting(2);
  r.run(2);
  r.exit();
  await r.engine.incarnationExited(2);
  t.same(r.calls.at(-1), 'remove reset', 'lifted when the next process, incarnation 2, exits');
  t.same(r.faults().at(-1), 'lift reset: reset_peer removed (incarnation 2 exited)');
});

t.test('a SIGKILL and a toxic "until that process exits" at one event: the toxic ends with the killed process', async (t) => {
  let exited: Promise<void> | undefined;
  const r = rig(
    t,
    [
      { name: 'kill', effect: { kind: 'signal', signal: 'SIGKILL' }, start: before(6) },
      { name: 'reset', effect: toxic('reset', 'reset_peer'), start: before(6), end: { kind: 'incarnation-exit' } },
    ],
    // The runner learns of the exit while the engine is still applying the event's faults.
    () => {
      r.exit();
      exited = r.engine.incarnationExited(1);
    },
  );
  r.run(1);
  await r.engine.point('before_event', 6);
  await exited;
  t.same(r.calls, ['SIGKILL', 'add reset reset_peer upstream {"bytes":41}', 'remove reset'], 'lifted at the exit, not carried on to every later process');
  t.same(r.faults().at(-1), 'lift reset: reset_peer removed (incarnation 1 exited)');
});

t.test('transcript points: a cut before EVENT k, lifted at ACK j; first occurrence only', async (t) => {
  const r = rig(t, [{ name: 'down', effect: { kind: 'proxy-down' }, start: before(5), end: onAck(7) }]);
  r.run(1);
  await r.engine.point('before_event', 4);
  t.same(r.calls, []);
  await r.engine.point('before_event', 5);
  t.same(r.calls, ['disable'], 'applied before EVENT 5 goes out (the publisher awaits the point)');
  await r.engine.point('on_ack', 6);
  await r.engine.point('on_ack', 7);
  t.same(r.calls, ['disable', 'enable']);
  await r.engine.point('before_event', 5);
  t.same(r.calls, ['disable', 'enable'], 'a redelivered EVENT 5 does not cut again');
  t.match(r.faults().at(-1), /\(ACK 7 arrived\)$/, "the lab's words for the point");
});

t.test('timed faults: start at a time after the first consumer start, end after a duration', async (t) => {
  const r = rig(t, [{ name: 'late', effect: toxic('late', 'latency'), start: { kind: 'at', ms: 30 }, end: { kind: 'after', ms: 40 } }]);
  await r.engine.incarnationStarting(1);
  await r.clock.advance(29);
  t.same(r.calls, [], 'not before its time');
  await r.clock.advance(1);
  t.same(r.calls, ['add late latency upstream {"bytes":41}'], 'at 30 ms');
  await r.clock.advance(39);
  t.same(r.calls.length, 1, 'still active after 39 ms');
  await r.clock.advance(1);
  t.same(r.calls.at(-1), 'remove late', 'lifted after 40 ms');
  t.match(r.faults().at(-1), /\(40 ms passed\)/);
});

t.test('process faults: SIGKILL waits for the process; SIGSTOP is lifted with SIGCONT; nothing running is journaled', async (t) => {
  const r = rig(t, [
    { name: 'kill', effect: { kind: 'signal', signal: 'SIGKILL' }, start: onAck(3) },
    { name: 'pause', effect: { kind: 'signal', signal: 'SIGSTOP' }, start: { kind: 'point', point: 'on_resume', value: 2 }, end: { kind: 'after', ms: 10 } },
    { name: 'nobody', effect: { kind: 'signal', signal: 'SIGTERM' }, start: before(9) },
  ]);
  r.run(1);
  await r.engine.point('on_ack', 3);
  t.same(r.calls, ['SIGKILL']);
  r.run(2);
  await r.engine.point('on_resume', 1); // first RESUME: nothing
  await r.engine.point('on_resume', 2);
  t.same(r.calls, ['SIGKILL', 'SIGSTOP']);
  await r.clock.advance(9);
  t.same(r.calls, ['SIGKILL', 'SIGSTOP'], 'still stopped after 9 ms');
  await r.clock.advance(1);
  t.same(r.calls, ['SIGKILL', 'SIGSTOP', 'SIGCONT']);
  r.exit();
  await r.engine.point('before_event', 9);
  t.same(r.faults(), [
    'apply kill: SIGKILL to consumer incarnation 1 (pid 4242)',
    'apply pause: SIGSTOP to consumer incarnation 2 (pid 4242)',
    'lift pause: SIGCONT to consumer incarnation 2 (pid 4242) (10 ms passed)',
    'apply nobody: SIGTERM not sent: no consumer process is running',
  ]);
});

t.test('stop() lifts whatever is still active and cancels pending timers', async (t) => {
  const r = rig(t, [
    { name: 'slow', effect: toxic('slow', 'latency'), start: { kind: 'incarnation', n: 1 } },
    { name: 'never', effect: { kind: 'proxy-down' }, start: { kind: 'at', ms: 10_000 } },
  ]);
  await r.engine.incarnationStarting(1);
  t.equal(r.clock.pending, 1, 'the timed fault waits');
  await r.engine.stop();
  t.equal(r.clock.pending, 0, 'its timer is cancelled');
  await r.clock.advance(20_000);
  t.same(r.calls, ['add slow latency upstream {"bytes":41}', 'remove slow']);
  t.match(r.faults().at(-1), /\(run ended\)$/);
});
