// Real packet loss (harness/sandbox/loss.ts, harness/faults/loss.ts): the nftables chain on the
// consumer's proxy port in a run namespace, its counters, the loopback that carries real
// packets; and the loss check (harness/judge/loss-check.ts) that judges the counters.
import t from 'tap';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { coreFindings, coreTables, withCoreFindings } from '../../../harness/judge/core-findings.js';
import { applyLoss } from '../../../harness/faults/loss.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { bernoulliKl, LOSS_ALPHA, lossFindings, lossInterval, lossTables, measureLoss } from '../../../harness/judge/loss-check.js';
import { installLoss, LOOPBACK_LINK_ARGS, lossRules, lossRuleset, parseLossCounters, readLossCounters, removeLoss } from '../../../harness/sandbox/loss.js';
import { createRunNamespace } from '../../../harness/sandbox/namespace.js';
import type { Verdict } from '../../../harness/findings/verdict.js';
import { sealingSkip } from '../../helpers/sandbox.js';

const skip = await sealingSkip();
t.teardown(runCleanups);

type LossEntry = Extract<JournalEntry, { type: 'loss' }>;
const entry = (percent: number, dropped: number, passed: number): LossEntry => ({
  t: 1,
  type: 'loss',
  name: 'lossy',
  percent,
  port: 4000,
  rules: lossRules(4000, percent),
  dropped: { packets: dropped, bytes: dropped * 100 },
  passed: { packets: passed, bytes: passed * 100 },
});

t.test('the rules and the counters parser (no root needed)', async (t) => {
  t.same(lossRules(4000, 10), [
    'tcp dport 4000 numgen random mod 100 < 10 counter name "dropped" drop',
    'tcp sport 4000 numgen random mod 100 < 10 counter name "dropped" drop',
    'tcp dport 4000 counter name "passed"',
    'tcp sport 4000 counter name "passed"',
  ]);
  const text = lossRuleset(4000, 10);
  t.match(text, /table inet chaoslab_loss \{\n {2}counter dropped \{ \}\n {2}counter passed \{ \}/);
  t.match(text, /type filter hook output priority -10; policy accept;/);
  t.throws(() => lossRules(0, 10), /port must be 1\.\.65535, not 0/);
  t.throws(() => lossRules(4000, 100), /percent must be an integer 1\.\.99, not 100/);
  t.throws(() => lossRules(4000, 2.5), /percent must be an integer/);
  const json = JSON.stringify({
    nftables: [
      { metainfo: {} },
      { counter: { family: 'inet', name: 'dropped', table: 'chaoslab_loss', packets: 7, bytes: 700 } },
      { counter: { family: 'inet', name: 'passed', table: 'chaoslab_loss', packets: 63, bytes: 6300 } },
      { counter: { family: 'inet', name: 'passed', table: 'other', packets: 1, bytes: 1 } },
    ],
  });
  t.same(parseLossCounters(json), { dropped: { packets: 7, bytes: 700 }, passed: { packets: 63, bytes: 6300 } });
  t.throws(() => parseLossCounters(JSON.stringify({ nftables: [] })), /has no dropped counter/, 'a missing counter is an error, never a zero');
  t.same(LOOPBACK_LINK_ARGS, ['mtu', '1500', 'gso_max_segs', '1']);
});

t.test('the binomial bound: Chernoff in Kullback–Leibler form at α = 1e-6', async (t) => {
  t.equal(LOSS_ALPHA, 1e-6);
  t.equal(bernoulliKl(0.1, 0.1), 0, 'no divergence at p');
  t.ok(Math.abs(bernoulliKl(0, 0.1) - Math.log(1 / 0.9)) < 1e-12, 'D(0 ‖ p) = ln 1/(1−p)');
  const [low, high] = lossInterval(3000, 0.1);
  t.ok(low > 0.07 && low < 0.1 && high > 0.1 && high < 0.135, `3000 packets at 10 %: ${low}..${high}`);
  const [wideLow, wideHigh] = lossInterval(50, 0.1);
  t.ok(wideLow === 0 && wideHigh > 0.3, `50 packets: the bound cannot rule out 0 % (${wideLow}..${wideHigh})`);
  t.same(lossInterval(0, 0.1), [0, 1]);
  t.ok(lossInterval(10_000, 0.5)[0] > 0.45, 'symmetric around one half');
  t.match(measureLoss(entry(10, 300, 2700)), { packets: 3000, dropped: 300, share: 0.1, ok: true });
  t.match(measureLoss(entry(10, 0, 3000)), { ok: false }, 'no loss at all is caught');
  t.match(measureLoss(entry(10, 600, 2400)), { ok: false }, 'twice the loss is caught');
  t.match(measureLoss(entry(10, 0, 0)), { packets: 0, share: 0, ok: false }, 'no packet: never a pass');
});

t.test('the core finding and table, whatever the lab', async (t) => {
  t.same(lossFindings([entry(10, 290, 2710)]), [], 'within bounds: no finding');
  const off = lossFindings([entry(10, 3, 2997)]);
  t.equal(off.length, 1);
  t.equal(off[0]!.code, 'loss-not-as-asked');
  t.match(
    off[0]!.text,
    /10 % asked, 0\.1 % measured \(3 of 3000 packets dropped, nftables counters\); the binomial bound at α = 0\.000001 allows \d+\.\d % to \d+\.\d %/,
  );
  t.match(lossFindings([entry(10, 0, 0)])[0]!.text, /met no packet: nothing crossed port 4000/);
  t.same(lossTables([]), []);
  const [table] = lossTables([{ t: 0, type: 'run-end', status: 'pass' }, entry(10, 300, 2700)]);
  t.equal(table!.id, 'loss');
  t.same(table!.columns, ['asked', 'packets', 'dropped', 'passed', 'measured', 'allowed (α = 0.000001)']);
  t.match(table!.rows[0], { label: 'lossy', cells: ['10 %', 3000, 300, 2700, '10.0 %', /^\d+\.\d % – \d+\.\d %$/], ok: true });
  t.match(table!.note, /tcp dport 4000 numgen random mod 100 < 10 counter name "dropped" drop/);
  const lab: Verdict = {
    status: 'pass',
    headline: 'all good',
    findings: [],
    harnessErrors: [],
    diff: [],
    state: { id: 'state', title: 'Final state', columns: [], rows: [] },
    tables: [],
  };
  const journal = [entry(10, 0, 3000)];
  const judged = withCoreFindings(lab, coreFindings(journal), coreTables(journal));
  t.equal(judged.status, 'fail', 'a loss that was not what was asked fails the run');
  t.match(judged.headline, /was not what the scenario asked/);
  t.equal(judged.tables.at(-1)!.id, 'loss');
  const fine = [entry(10, 300, 2700)];
  const passed = withCoreFindings(lab, coreFindings(fine), coreTables(fine));
  t.equal(passed.status, 'pass');
  t.equal(passed.headline, 'all good');
  t.equal(passed.tables.length, 1, 'the table is there on a pass too');
  t.equal(withCoreFindings(lab, []), lab, 'nothing to add: the same verdict');
});

t.test('in a run namespace: the chain drops about the asked share, both ways, and TCP delivers every byte', { skip }, async (t) => {
  const ns = await createRunNamespace({ label: 'loss-test', loopback: LOOPBACK_LINK_ARGS });
  t.teardown(() => ns.destroy());
  const link = await ns.exec(['ip', '-d', 'link', 'show', 'lo']);
  t.match(link.stdout, /mtu 1500/, 'the loopback MTU is 1500');
  t.match(link.stdout, /gso_max_segs 1\b/, 'one segment per packet');
  const exec = ns.exec.bind(ns);
  // A server and a client inside the namespace: node, as in a run's worker.
  const PORT = 7101;
  const script = `
    const net = require('node:net');
    const server = net.createServer((c) => { let n = 0; c.on('data', (d) => n += d.length); c.on('end', () => { c.end('x'.repeat(300000)); server.close(); }); });
    server.listen(${PORT}, '127.0.0.1', () => {
      const c = net.connect(${PORT}, '127.0.0.1', () => c.end('y'.repeat(1500000)));
      let m = 0; c.on('data', (d) => m += d.length); c.on('end', () => console.log('got ' + m));
    });`;
  const proxy = { listen: { host: '127.0.0.1', port: PORT } } as Parameters<typeof applyLoss>[2]['proxy'];
  const applied = await applyLoss({ kind: 'loss', percent: 10 }, 'lossy', { proxy, current: () => undefined, netns: exec });
  t.match(applied.detail, /10 % of the packets to and from port 7101 \(the consumer's proxy\) dropped, both ways/);
  const ran = await ns.exec([process.execPath, '-e', script], { timeoutMs: 120_000 });
  t.equal(ran.stdout.trim(), 'got 300000', `every byte arrived (${ran.summary})`);
  const counters = await readLossCounters(exec);
  t.ok(counters.dropped.packets > 0, `some packets dropped (${counters.dropped.packets})`);
  t.ok(counters.passed.bytes / counters.passed.packets < 1600, 'real packets, not 64 KB super-packets');
  const lifted = await applied.lift!();
  t.type(lifted, 'object');
  const { detail, evidence } = lifted as { detail: string; evidence: Omit<LossEntry, 't'> };
  t.match(detail, /^loss removed: \d+ of \d+ packets dropped \(\d+\.\d %\)$/);
  t.match(evidence, { type: 'loss', name: 'lossy', percent: 10, port: PORT, rules: lossRules(PORT, 10) });
  t.ok(evidence.dropped.packets >= counters.dropped.packets, 'read back at the lift');
  t.same(
    lossFindings([{ t: 0, ...evidence }]),
    [],
    `the measured share is within bounds (${evidence.dropped.packets} of ${evidence.dropped.packets + evidence.passed.packets})`,
  );
  await t.rejects(readLossCounters(exec), /packet loss\) failed/, 'the table is gone after the lift');
  await installLoss(exec, PORT, 5);
  await removeLoss(exec);
  await removeLoss(exec);
  t.pass('removing twice is harmless');
});

t.test('no run namespace: the effect refuses (an unsealed run is skipped before it gets here)', async (t) => {
  const proxy = { listen: { host: '127.0.0.1', port: 4000 } } as Parameters<typeof applyLoss>[2]['proxy'];
  await t.rejects(applyLoss({ kind: 'loss', percent: 10 }, 'lossy', { proxy, current: () => undefined }), /needs a sealed run's own network namespace/);
});
