// Whose is a connection the publisher accepted (unsealed runs, harness/run/attribute.ts): the
// process tree lookup on real processes, and each kind of far end the attributor tells apart.
import { join } from 'node:path';
import t from 'tap';
import { JournalWriter } from '../../../harness/record/journal.js';
import { ProcessRunner } from '../../../harness/processes/processes.js';
import { attributor } from '../../../harness/run/attribute.js';
import { childrenOf } from '../../../harness/sandbox/proc.js';
import type { PeerProcess } from '../../../harness/sandbox/peer.js';

const ends = { localAddress: '127.0.0.1', localPort: 4000, remoteAddress: '127.0.0.1', remotePort: 50000 };
const peer = (pid: number, comm = 'node', cmdline = [comm]): PeerProcess => ({ pid, pids: [pid], uid: 0, inode: 1, comm, cmdline });

t.test('ownerOf: a process this run started, or a child of it; nothing else', async (t) => {
  const dir = t.testdir();
  const runner = new ProcessRunner(new JournalWriter(join(dir, 'journal.jsonl'), () => 0), dir, 20_000, () => {});
  t.teardown(() => runner.stop());
  const consumer = runner.start('consumer', 2, 'sleep 20 & wait', {});
  let child: number | undefined;
  for (let i = 0; i < 200 && child === undefined; i++) {
    child = childrenOf(consumer.proc.pid)[0];
    if (child === undefined) await new Promise((r) => setTimeout(r, 10));
  }
  t.ok(child, 'the consumer forked a child');
  t.same(runner.ownerOf([consumer.proc.pid]), { role: 'consumer', incarnation: 2 }, 'the process itself');
  t.same(runner.ownerOf([child!]), { role: 'consumer', incarnation: 2 }, 'its child');
  t.equal(runner.ownerOf([process.pid]), undefined, 'the harness is not a process of the run');
  t.equal(runner.ownerOf([1]), undefined, 'nor is init');
  await runner.stop();
  t.equal(runner.ownerOf([child!]), undefined, 'once it ended, nothing is its');
});

t.test('attributor: proxy, direct, stray and unknown far ends', async (t) => {
  const reasons: string[] = [];
  const roles: Record<string, 'consumer' | 'control'> = { consumer: 'consumer', control: 'control' };
  const own = new Map([
    [300, { role: 'consumer' as const, incarnation: 1 }],
    [400, { role: 'control' as const, incarnation: 1 }],
  ]);
  const attribute = (found: PeerProcess | undefined) =>
    attributor(
      200,
      { ownerOf: (pids) => pids.map((p) => own.get(p)).find(Boolean) },
      (stream) => roles[stream],
      (reason) => reasons.push(reason),
      () => found,
    );
  const guess = { role: 'consumer' as const, incarnation: 1 };

  t.same(attribute(peer(200, 'toxiproxy-serve'))(ends, 'consumer', guess), { peer: { pid: 200, comm: 'toxiproxy-serve', via: 'proxy' }, owner: guess });
  t.same(
    attribute(peer(300, 'python3'))(ends, 'consumer', guess),
    { peer: { pid: 300, comm: 'python3', via: 'direct' }, owner: guess },
    'around the proxy: the consumer’s',
  );
  t.same(attribute(peer(400))(ends, 'control', { role: 'control', incarnation: 1 }), {
    peer: { pid: 400, comm: 'node', via: 'direct' },
    owner: { role: 'control', incarnation: 1 },
  });
  t.same(reasons, [], 'none of these stops the run');

  t.same(attribute(peer(500, 'toxiproxy-serve', ['/x/toxiproxy-server', '-port', '9']))(ends, 'consumer', guess), {
    peer: { pid: 500, comm: 'toxiproxy-serve', via: 'stray' },
    owner: undefined,
  });
  t.same(attribute(peer(600, 'curl', ['curl', 'http://127.0.0.1:4000/proxies']))(ends, 'consumer', undefined).owner, undefined);
  t.same(attribute(peer(300, 'python3'))(ends, 'control', { role: 'control', incarnation: 1 }).peer, { pid: 300, comm: 'python3', via: 'stray' });
  t.same(attribute(peer(200, 'toxiproxy-serve'))(ends, 'control', { role: 'control', incarnation: 1 }).owner, undefined);
  t.same(attribute(undefined)(ends, 'consumer', guess), { peer: { via: 'unknown' }, owner: undefined });
  t.same(reasons, [
    "a connection from pid 500 (/x/toxiproxy-server -port 9), a toxiproxy-server of another run, reached the publisher's consumer port 4000: the run cannot be judged",
    "a connection from pid 600 (curl http://127.0.0.1:4000/proxies), not a process of this run, reached the publisher's consumer port 4000: the run cannot be judged",
    "a connection from pid 300 (python3), this run's consumer incarnation 1, reached the publisher's control port 4000: the run cannot be judged",
    "this run's Toxiproxy (pid 200) connected to the publisher's control port 4000, where only the control's own process connects: its proxy was changed, so the run cannot be judged",
    "a connection from 127.0.0.1:50000 reached the publisher's consumer port 4000, and no process held its other end any more: the harness cannot tell whose it was, so the run cannot be judged",
  ]);

  // An external server (TOXIPROXY_URL) whose process the harness could not see: no pid to tie it to.
  const unseen: string[] = [];
  const external = attributor(
    undefined,
    { ownerOf: () => undefined },
    () => 'consumer',
    (reason) => unseen.push(reason),
    () => peer(700, 'toxiproxy-serve', ['/opt/toxiproxy-server']),
  );
  t.same(external(ends, 'consumer', guess), { peer: { pid: 700, comm: 'toxiproxy-serve', via: 'stray' }, owner: undefined });
  t.same(unseen, [
    "a connection from pid 700 (/opt/toxiproxy-server), a toxiproxy-server, but this run's own server is one whose process the harness could not see (TOXIPROXY_URL: docs/sandbox.md), reached the publisher's consumer port 4000: the run cannot be judged",
  ]);
});
