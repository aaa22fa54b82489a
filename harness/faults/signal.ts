// A signal to the running consumer's whole process tree. SIGKILL waits until the process is
// gone, so a transcript point that triggered it cannot race the next line.
import type { FaultEffect } from '../scenario/types.js';
import type { Effect } from './effect.js';

export const applySignal: Effect<Extract<FaultEffect, { kind: 'signal' }>> = async (spec, _name, { current }) => {
  const running = current();
  if (!running) return { detail: `${spec.signal} not sent: no consumer process is running` };
  const who = `consumer incarnation ${running.incarnation} (pid ${running.proc.pid})`;
  if (spec.signal === 'SIGKILL') {
    await running.proc.kill('harness');
    return { detail: `SIGKILL to ${who}` };
  }
  if (spec.signal === 'SIGSTOP') running.heldByHarness = true;
  running.proc.signal(spec.signal);
  if (spec.signal === 'SIGTERM') return { detail: `SIGTERM to ${who}` };
  return {
    detail: `SIGSTOP to ${who}`,
    lift: async () => {
      running.heldByHarness = false;
      running.proc.continue();
      return `SIGCONT to ${who}`;
    },
  };
};
