// The worker-in-namespace design, end to end with the real Toxiproxy: a "worker" process is
// started inside the run's network namespace; it runs a publisher stand-in in process, starts
// Toxiproxy (unchanged server.ts, behind a parent-death wrapper), a control stand-in through
// today's supervisor, and the sealed consumer through today's supervisor. The consumer gets the
// publisher's data through its proxy port and nothing else; the publisher tells each accepted
// connection's peer (Toxiproxy, the control). SIGKILLing the worker leaves nothing in the namespace.
import t from 'tap';
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { allowPorts, installFirewall, readFirewallCounters } from '../../../harness/sandbox/firewall.js';
import { createRunNamespace } from '../../../harness/sandbox/namespace.js';
import { namespaceOf } from '../../../harness/sandbox/proc.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';
import { locateToxiproxyServer } from '../../../harness/toxiproxy/server.js';
import { root, runTsChild, sealingSkip, stillAlive, waitFor } from '../../helpers/sandbox.js';

t.setTimeout(180_000);
const skip = await sealingSkip();
t.teardown(runCleanups);

let toxiproxyMissing: string | undefined;
try {
  locateToxiproxyServer();
} catch (error) {
  toxiproxyMissing = (error as Error).message.split('\n')[0];
}

const work = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-worker-')));
chmodSync(work, 0o755);
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const mod = (path: string): string => JSON.stringify(join(root, path));

t.test(
  'worker in the namespace: Toxiproxy, control and sealed consumer; nothing survives the worker',
  { skip: skip ?? toxiproxyMissing ?? false },
  async (t) => {
    const lease = leaseUid(70);
    t.teardown(() => lease.release());
    const ns = await createRunNamespace({ label: 'worker' });
    t.teardown(() => ns.destroy());
    await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [] }]);

    const tryAll = join(work, 'try-all.js');
    writeFileSync(
      tryAll,
      `const net = require('net'); const out = {}; const targets = process.argv.slice(2); let left = targets.length;
for (const t of targets) { const [name, port] = t.split('='); let got = '';
  const s = net.connect({ host: '127.0.0.1', port: Number(port), timeout: 3000 });
  s.on('data', (d) => (got += d)); s.on('end', () => { out[name] = got.trim() || 'connected'; if (--left === 0) console.log(JSON.stringify(out)); });
  s.on('error', (e) => { out[name] = e.code; if (--left === 0) console.log(JSON.stringify(out)); });
  s.on('timeout', () => { out[name] = 'timeout'; s.destroy(); if (--left === 0) console.log(JSON.stringify(out)); }); }`,
      { mode: 0o644 },
    );
    const go = join(work, 'go');
    const worker = runTsChild(
      [
        `const { startToxiproxy, locateToxiproxyServer } = await import(${mod('harness/toxiproxy/server.ts')});`,
        `const { startProcess } = await import(${mod('harness/processes/supervisor.ts')});`,
        `const { confinedArgv, shellCommandLine } = await import(${mod('harness/sandbox/confine.ts')});`,
        `const { dieWithParentCommand, writeDieWithParentWrapper } = await import(${mod('harness/sandbox/orphan.ts')});`,
        `const { peerOfSocket, classifyPeer } = await import(${mod('harness/sandbox/peer.ts')});`,
        `const net = await import('node:net'); const fs = await import('node:fs');`,
        `const say = (o) => console.log(JSON.stringify(o));`,
        `let known = { proxyPids: [], trustedPids: [] }; const peers = [];`,
        `const publisher = net.createServer((s) => { peers.push(classifyPeer(peerOfSocket(s, { candidates: [...known.proxyPids, ...known.trustedPids] }), known).kind); s.end('EVENT 1\\n'); });`,
        `await new Promise((r) => publisher.listen(0, '127.0.0.1', r)); const pubPort = publisher.address().port;`,
        `const tp = await startToxiproxy({ binary: writeDieWithParentWrapper(locateToxiproxyServer(), ${JSON.stringify(join(work, 'toxiproxy-wrapper'))}) });`,
        `const created = await (await fetch(tp.url + '/proxies', { method: 'POST', body: JSON.stringify({ name: 'consumer', listen: '127.0.0.1:0', upstream: '127.0.0.1:' + pubPort }) })).json();`,
        `const proxyPort = Number(created.listen.split(':').pop()); const apiPort = Number(new URL(tp.url).port);`,
        `const control = startProcess({ name: 'control', command: dieWithParentCommand(process.execPath + ' -e "require(\\'net\\').connect(' + pubPort + ', \\'127.0.0.1\\').on(\\'data\\', () => {}); setInterval(() => {}, 1000)"'), cwd: ${JSON.stringify(work)}, env: {} });`,
        `known = { proxyPids: [tp.pid], trustedPids: [control.pid] };`,
        `say({ ready: true, proxyPort, pubPort, apiPort, toxiproxy: tp.pid, control: control.pid, worker: process.pid });`,
        `while (!fs.existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 20));`,
        `const argv = confinedArgv({ command: process.execPath + ' ' + ${JSON.stringify(tryAll)} + ' proxy=' + proxyPort + ' publisher=' + pubPort + ' api=' + apiPort, uid: ${lease.uid}, home: ${JSON.stringify(work)} });`,
        `const consumer = startProcess({ name: 'consumer', command: shellCommandLine(argv), cwd: ${JSON.stringify(work)}, env: {} });`,
        `const exit = await consumer.exited;`,
        `await new Promise((r) => setTimeout(r, 200));`,
        `say({ consumer: JSON.parse(consumer.outputTail().stdout || '{}'), exit, peers });`,
        `setInterval(() => {}, 1000);`,
      ].join('\n'),
      { prefix: ns.enterArgv([], { dieWithParent: true }), timeoutMs: 150_000 },
    );
    await waitFor('the worker to be ready', () => worker.stdout().includes('"ready"'), 60_000).catch(() => {
      throw new Error(`worker: ${worker.stdout()} ${worker.stderr()}`);
    });
    const ready = JSON.parse(worker.stdout().split('\n')[0]!) as {
      proxyPort: number;
      pubPort: number;
      apiPort: number;
      toxiproxy: number;
      control: number;
      worker: number;
    };
    t.equal(namespaceOf(ready.worker, 'net'), ns.id, 'the worker is in the run namespace');
    t.equal(namespaceOf(ready.toxiproxy, 'net'), ns.id, 'so is the Toxiproxy it started, unchanged');
    t.equal(namespaceOf(ready.control, 'net'), ns.id, 'and the control');

    await allowPorts(ns, lease.uid, [ready.proxyPort]); // the proxy port is known now
    writeFileSync(go, '');
    await waitFor('the consumer’s report', () => worker.stdout().includes('"peers"'), 60_000);
    const report = JSON.parse(worker.stdout().trim().split('\n')[1]!) as { consumer: Record<string, string>; exit: { code: number }; peers: string[] };
    t.same(
      report.consumer,
      { proxy: 'EVENT 1', publisher: 'ECONNREFUSED', api: 'ECONNREFUSED' },
      'through the proxy: the data; the publisher and Toxiproxy’s API: refused',
    );
    t.equal(report.exit.code, 0);
    t.same([...report.peers].sort(), ['proxy', 'trusted'], 'the publisher saw the control (trusted) and Toxiproxy (proxy), nothing around the proxy');
    const counters = (await readFirewallCounters(ns)).get(lease.uid);
    t.ok((counters?.rejected.packets ?? 0) >= 2, `the two attempts around the proxy were counted (${counters?.rejected.packets})`);

    worker.child.kill('SIGKILL');
    await worker.done;
    const started = [ready.worker, ready.toxiproxy, ready.control];
    await waitFor('the worker’s processes to die', () => stillAlive(started).length === 0, 10_000).catch(() => {});
    t.same(stillAlive(started), [], 'Toxiproxy and the control died with the worker (parent-death signals)');
    const { killed } = await ns.destroy();
    t.equal(killed, 0, 'the namespace had nothing left to kill but its holder');
  },
);
