// The one /proc stat reader the sandbox and the supervisor share.
import t from 'tap';
import { spawn } from 'node:child_process';
import { childrenOf, isRunningState, parseStat, readStat, scanProcesses } from '../../../harness/sandbox/proc.js';

const linux = process.platform === 'linux' ? {} : { skip: 'no /proc' };

t.test('parseStat: fields after the last ")", comm with spaces and parentheses kept whole', async (t) => {
  const line = '4242 (a (b) c) S 17 4242 4242 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987654 100 200\n';
  t.same(parseStat(4242, Buffer.from(line)), { pid: 4242, comm: 'a (b) c', state: 'S', ppid: 17, pgid: 4242, sid: 4242, start: '987654' });
  // the reader passes a reused buffer and the bytes read: what lies past them is not the line's
  const buffer = Buffer.from(`${line}stale stale stale`);
  t.equal(parseStat(4242, buffer, line.length)?.start, '987654');
  t.equal(parseStat(1, Buffer.from('1 (init) S 0')), undefined, 'a cut line is no stat');
});

t.test('readStat and scanProcesses see this process as it is', linux, async (t) => {
  const self = readStat(process.pid);
  t.equal(self?.ppid, process.ppid);
  t.ok(self && isRunningState(self.state), `running (state ${self?.state})`);
  t.ok(
    scanProcesses().some((s) => s.pid === process.pid && s.start === self?.start),
    'the scan lists it with the same start time',
  );
  t.notOk(
    scanProcesses(new Set([process.pid])).some((s) => s.pid === process.pid),
    'a skipped pid is not read',
  );
});

t.test('childrenOf finds a live child, not an exited one', linux, async (t) => {
  const child = spawn('sleep', ['30']);
  t.teardown(() => child.kill('SIGKILL'));
  t.ok(childrenOf(process.pid).includes(child.pid!), 'the sleeping child');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  t.notOk(childrenOf(process.pid).includes(child.pid!), 'gone once reaped');
});
