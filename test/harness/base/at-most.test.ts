// atMost: the promise's value or undefined at the bound, and never a timer left behind, however
// the promise settles (a left timer keeps a process with nothing to do alive until it fires).
import t from 'tap';
import { atMost } from '../../../harness/base/at-most.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

t.test('the value when the promise wins, and its timer is gone', async (t) => {
  const before = timers();
  t.equal(await atMost(Promise.resolve(7), 60_000), 7);
  t.equal(timers(), before, 'no timer left running');
});

t.test('undefined when the bound comes first', async (t) => {
  const never = new Promise<number>(() => {});
  t.equal(await atMost(never, 20), undefined);
});

t.test('a rejection passes through, and its timer is gone too', async (t) => {
  const before = timers();
  await t.rejects(atMost(Promise.reject(new Error('boom')), 60_000), /boom/);
  t.equal(timers(), before, 'no timer left running');
});
