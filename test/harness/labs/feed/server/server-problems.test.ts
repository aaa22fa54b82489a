// The server under test as a process: a server that exits on its own after one of the harness's
// bad clients sent its bad frame is named as the crash that frame caused, with the contract's
// section; an exit with no bad frame before it stays an early exit, and status 64 says its own.
import t from 'tap';
import { type ServerFacts, serverProblems } from '../../../../../harness/labs/feed/server/server-problems.js';

const exited = (code: number, t: number): ServerFacts => ({
  command: 'python3 server.py',
  startedAt: 100,
  stops: [],
  exit: { t, code, signal: null, durationMs: t - 100, stderrTail: 'Traceback …\nValueError: bad frame\n' },
});
const garbage = { who: 'the garbage client `junk`', what: 'a line that is not JSON', t: 700 };

t.test('an exit after a bad frame: the bad client crashed the server (server contract §5)', async (t) => {
  const [f] = serverProblems(exited(1, 750), false, [garbage]);
  t.equal(f?.code, 'bad-client-crashed-server');
  t.match(
    f?.text,
    /^a bad client crashed the server: the server under test \(`python3 server.py`\) exited with status 1 0\.650 s after it started, before the run was over, 0\.050 s after the garbage client `junk` sent a line that is not JSON as its first frame \(its stderr: "ValueError: bad frame"\) — close that one connection, .*\(server contract §5\)$/,
  );
  t.match(f?.subject, { process: { role: 'server' }, t: 750 });
});

t.test('no bad frame before the exit, or status 64: an early exit as before', async (t) => {
  t.match(serverProblems(exited(1, 650), false, [garbage]), [{ code: 'server-exited-early', text: /nothing asked it to end/ }]);
  t.match(serverProblems(exited(1, 750), false, []), [{ code: 'server-exited-early' }]);
  t.match(serverProblems(exited(64, 750), false, [garbage]), [{ code: 'server-exited-early', text: /status 64 says its environment/ }]);
});
