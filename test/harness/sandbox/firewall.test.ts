// The run namespace's firewall: a sealed consumer's uid reaches its proxy port and nothing else,
// over IPv4 and IPv6; other uids are untouched; the counters say what was tried.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../../../harness/base/cleanup.js';
import {
  allowPorts,
  allowServePortsHere,
  firewallRuleset,
  forbidPorts,
  hasFirewall,
  installFirewall,
  parseCounters,
  readFirewallCounters,
  removeFirewall,
} from '../../../harness/sandbox/firewall.js';
import { createRunNamespace, type RunNamespace } from '../../../harness/sandbox/namespace.js';
import { requireTool, runTool } from '../../../harness/sandbox/tools.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';
import { runSealed, sealingSkip, waitFor } from '../../helpers/sandbox.js';

const skip = await sealingSkip();
t.teardown(runCleanups);

const PROXY = 7001;
const PUBLISHER = 7002;
const API = 7003;

t.test('the ruleset text and the counters parser (no root needed)', async (t) => {
  const text = firewallRuleset([
    { uid: 61000, allowTcpPorts: [4000, 4000, 4001] },
    { uid: 61001, allowTcpPorts: [] },
  ]);
  t.match(text, /table inet chaoslab_seal \{/);
  t.match(text, /set allow_61000 \{ type inet_service; elements = \{ 4000, 4001 \}; \}/, 'ports deduplicated');
  t.match(text, /set allow_61001 \{ type inet_service; \}/, 'an empty set until the proxy port is known');
  t.match(
    text,
    /meta skuid 61000 tcp dport @allow_61000 counter name "allowed_61000" accept\n {4}meta skuid 61000 meta l4proto tcp counter name "rejected_61000" reject with tcp reset\n {4}meta skuid 61000 counter name "rejected_61000" reject/,
  );
  const server = firewallRuleset([{ uid: 61450, allowTcpPorts: [], serveTcpPorts: [41300] }], 'chaoslab_server_seal');
  t.match(server, /set serve_61450 \{ type inet_service; elements = \{ 41300 \}; \}/, "a server's ports to answer on");
  t.match(
    server,
    /meta skuid 61450 tcp dport @allow_61450 counter name "allowed_61450" accept\n {4}meta skuid 61450 tcp sport @serve_61450 tcp flags & \(syn \| ack\) != syn counter name "allowed_61450" accept\n {4}meta skuid 61450 meta l4proto tcp/,
    'answers from its ports, never a SYN that opens a connection, before the rejects',
  );
  t.notMatch(text, /serve_/, 'a consumer serves nothing');
  t.throws(() => firewallRuleset([{ uid: 61450, allowTcpPorts: [], serveTcpPorts: [0] }]), RangeError);
  t.throws(() => firewallRuleset([{ uid: 0, allowTcpPorts: [] }]), RangeError, 'never root');
  t.throws(() => firewallRuleset([{ uid: 61000, allowTcpPorts: [70000] }]), RangeError);
  const counters = parseCounters(
    JSON.stringify({
      nftables: [
        { metainfo: {} },
        { counter: { family: 'inet', name: 'allowed_61000', table: 'chaoslab_seal', packets: 3, bytes: 180 } },
        { counter: { family: 'inet', name: 'rejected_61000', table: 'chaoslab_seal', packets: 2, bytes: 120 } },
        { counter: { family: 'inet', name: 'rejected_61000', table: 'other', packets: 9, bytes: 9 } },
        { counter: { family: 'inet', name: 'loss', table: 'chaoslab_seal', packets: 9, bytes: 9 } },
      ],
    }),
  );
  t.same([...counters], [[61000, { allowed: { packets: 3, bytes: 180 }, rejected: { packets: 2, bytes: 120 } }]]);
});

/** Root listeners inside the namespace on 127.0.0.1 and ::1, for each port. */
async function listeners(ns: RunNamespace, ports: number[]): Promise<() => void> {
  const script = `const net = require('net'); let n = 0; for (const host of ['127.0.0.1', '::1']) for (const port of ${JSON.stringify(ports)}) net.createServer((s) => s.end('hello\\n')).listen(port, host, () => { if (++n === ${ports.length * 2}) console.log('listening') });`;
  const argv = ns.enterArgv([process.execPath, '-e', script]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await waitFor('the listeners', () => out.includes('listening'), 10_000);
  return () => child.kill('SIGKILL');
}

const work = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-firewall-')));
chmodSync(work, 0o755);
t.teardown(() => rmSync(work, { recursive: true, force: true }));
// The hostile consumer: tries every target and prints what happened to each.
const tryAll = join(work, 'try-all.js');
writeFileSync(
  tryAll,
  `const net = require('net'), dgram = require('dgram');
const targets = process.argv.slice(2);
const results = {};
let left = targets.length + 1;
const done = () => { if (--left === 0) { console.log(JSON.stringify(results)); process.exit(0); } };
for (const target of targets) {
  const i = target.lastIndexOf(':');
  const socket = net.connect({ host: target.slice(0, i), port: Number(target.slice(i + 1)), timeout: 3000 });
  socket.on('data', () => { results[target] = 'connected'; socket.destroy(); done(); });
  socket.on('error', (e) => { results[target] = e.code; done(); });
  socket.on('timeout', () => { results[target] = 'timeout'; socket.destroy(); done(); });
}
const udp = dgram.createSocket('udp4');
udp.send('x', ${PUBLISHER}, '127.0.0.1', (e) => { results.udp = e ? e.code : 'sent'; udp.close(); done(); });
`,
  { mode: 0o644 },
);
const targets = [PROXY, PUBLISHER, API].flatMap((port) => [`127.0.0.1:${port}`, `::1:${port}`]);

t.test('a sealed consumer reaches only its proxy port, over IPv4 and IPv6', { skip: skip ?? false }, async (t) => {
  const lease = leaseUid(20);
  t.teardown(() => lease.release());
  const ns = await createRunNamespace({ label: 'firewall' });
  t.teardown(() => ns.destroy());
  const stop = await listeners(ns, [PROXY, PUBLISHER, API]);
  t.teardown(stop);
  await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [PROXY] }]);
  t.ok(await hasFirewall(ns), 'the table is in the namespace');
  const hostTables = await runTool([requireTool('nft'), 'list', 'tables']);
  t.notMatch(hostTables.stdout, /chaoslab_seal/, 'and not on the host');

  const ran = await runSealed({ command: `node ${tryAll} ${targets.join(' ')}`, uid: lease.uid, home: work, netnsPath: ns.path }, work);
  t.equal(ran.code, 0, ran.stderr);
  const results = JSON.parse(ran.stdout) as Record<string, string>;
  t.same(
    results,
    {
      [`127.0.0.1:${PROXY}`]: 'connected',
      [`::1:${PROXY}`]: 'connected',
      [`127.0.0.1:${PUBLISHER}`]: 'ECONNREFUSED',
      [`::1:${PUBLISHER}`]: 'ECONNREFUSED',
      [`127.0.0.1:${API}`]: 'ECONNREFUSED',
      [`::1:${API}`]: 'ECONNREFUSED',
      udp: 'EPERM',
    },
    'proxy port: connected; publisher and API ports: refused at once; UDP: not permitted',
  );

  const counters = (await readFirewallCounters(ns)).get(lease.uid);
  t.ok(counters && counters.allowed.packets > 0, `allowed packets counted (${counters?.allowed.packets})`);
  t.ok(counters && counters.rejected.packets >= 5, `rejected packets counted (${counters?.rejected.packets}): evidence of trying around the proxy`);

  // the harness's own processes (root) are not filtered
  const asRoot = await ns.exec([process.execPath, tryAll, ...targets]);
  const rootResults = JSON.parse(asRoot.stdout) as Record<string, string>;
  t.ok(
    targets.every((target) => rootResults[target] === 'connected'),
    'root reaches every port',
  );
});

t.test('the proxy port can be allowed once known, and taken away again', { skip: skip ?? false }, async (t) => {
  const lease = leaseUid(21);
  t.teardown(() => lease.release());
  const ns = await createRunNamespace({ label: 'firewall-later' });
  t.teardown(() => ns.destroy());
  const stop = await listeners(ns, [PROXY]);
  t.teardown(stop);
  await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [] }]);
  const attempt = async () =>
    JSON.parse((await runSealed({ command: `node ${tryAll} 127.0.0.1:${PROXY}`, uid: lease.uid, home: work, netnsPath: ns.path }, work)).stdout) as Record<
      string,
      string
    >;
  t.equal((await attempt())[`127.0.0.1:${PROXY}`], 'ECONNREFUSED', 'no port allowed yet');
  await allowPorts(ns, lease.uid, [PROXY]);
  t.equal((await attempt())[`127.0.0.1:${PROXY}`], 'connected', 'allowed once known');
  await forbidPorts(ns, lease.uid, [PROXY]);
  t.equal((await attempt())[`127.0.0.1:${PROXY}`], 'ECONNREFUSED', 'taken away');
  await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [PROXY] }]);
  t.equal((await attempt())[`127.0.0.1:${PROXY}`], 'connected', 'installing again replaces the table');
  await removeFirewall(ns);
  t.notOk(await hasFirewall(ns), 'removed');
  await t.rejects(readFirewallCounters(ns), /nft -j list counters/, 'no counters without the table');
  await t.rejects(installFirewall(ns, []), /no consumer rule/);
});

// A server under test (issue 31): listens as its uid; root (Toxiproxy, the harness) connects to
// it on its served port and gets an answer; the server itself opens nothing, neither a plain
// connection nor one from its served port bound again with SO_REUSEPORT; a port it was not
// given is not answered.
const serveScript = join(work, 'serve.py');
writeFileSync(
  serveScript,
  `import json, socket, sys
serve, other, target = (int(a) for a in sys.argv[1:4])
results = {}
def attempt(name, bind=None):
    s = socket.socket()
    s.settimeout(3)
    try:
        if bind:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("127.0.0.1", bind))
        s.connect(("127.0.0.1", target))
        results[name] = "connected"
    except OSError as e:
        results[name] = type(e).__name__
    finally:
        s.close()
listeners = []
for port in (serve, other):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    l.bind(("127.0.0.1", port))
    l.listen()
    listeners.append(l)
attempt("connect")
attempt("connect from the served port", bind=serve)
l = listeners[0]
l.settimeout(15)
conn, _ = l.accept()
conn.sendall(b"hello from the server\\n")
conn.close()
print(json.dumps(results))
`,
  { mode: 0o644 },
);

t.test('a sealed server answers on its served port only and opens no connection', { skip: skip ?? false }, async (t) => {
  const SERVE = 7004;
  const OTHER = 7005;
  const lease = leaseUid(22);
  t.teardown(() => lease.release());
  const ns = await createRunNamespace({ label: 'firewall-server' });
  t.teardown(() => ns.destroy());
  const stop = await listeners(ns, [API]);
  t.teardown(stop);
  await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [], serveTcpPorts: [] }], 'chaoslab_server_seal');
  // allowServePortsHere adds to this process's namespace: run it inside the run's.
  const add = await ns.exec([
    process.execPath,
    '--input-type=module',
    '-e',
    `const { allowServePortsHere } = await import(${JSON.stringify(new URL('../../../dist/harness/sandbox/firewall.js', import.meta.url).href)}); allowServePortsHere(${lease.uid}, [${SERVE}], 'chaoslab_server_seal');`,
  ]);
  t.equal(add.code, 0, add.summary);
  t.throws(() => allowServePortsHere(lease.uid, [SERVE], 'chaoslab_server_seal'), /nft add element .* failed/, 'no such table on the host: a clear error');
  const ran = runSealed({ command: `python3 ${serveScript} ${SERVE} ${OTHER} ${API}`, uid: lease.uid, home: work, netnsPath: ns.path }, work);
  const client = (port: number) =>
    ns.exec([
      process.execPath,
      '-e',
      `const s = require('net').connect(${port}, '127.0.0.1'); s.setTimeout(1500, () => { console.log('timeout'); process.exit(0) }); s.on('connect', () => { if (${port} !== ${SERVE}) { console.log('connected'); process.exit(0) } }); s.on('data', (d) => { console.log(String(d).trim()); process.exit(0) }); s.on('error', (e) => { console.log(e.code); process.exit(0) });`,
    ]);
  // Once it listens (refused until then), the port it was not given: its SYN-ACK is refused.
  let other = 'ECONNREFUSED';
  for (let i = 0; i < 200 && other === 'ECONNREFUSED'; i++) other = (await client(OTHER)).stdout.trim();
  t.equal(other, 'timeout', 'a port it listens on but was not given is not answered');
  let answer = '';
  for (let i = 0; i < 100 && answer !== 'hello from the server'; i++) answer = (await client(SERVE)).stdout.trim();
  t.equal(answer, 'hello from the server', 'root reaches the server on its served port');
  const done = await ran;
  t.equal(done.code, 0, done.stderr);
  t.same(
    JSON.parse(done.stdout),
    { connect: 'ConnectionRefusedError', 'connect from the served port': 'ConnectionRefusedError' },
    'the server reaches nothing, not even from its served port',
  );
  const counters = (await readFirewallCounters(ns, 'chaoslab_server_seal')).get(lease.uid);
  t.ok(counters && counters.allowed.packets > 0, `its answers counted as allowed (${counters?.allowed.packets})`);
  t.ok(counters && counters.rejected.packets >= 3, `its two attempts and its answers on the other port counted as rejected (${counters?.rejected.packets})`);
});
