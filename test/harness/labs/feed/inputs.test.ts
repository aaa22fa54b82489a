// The feed lab's inputs: bad frames (the publisher's forms, the grammar the reports draw red, the
// checker's finding on what the consumer did with one), big amounts, and a bad environment
// (the core's exit-64 duty and the feed's variables), on hand-built facts and shipped scenarios.
import { join } from 'node:path';
import { FEED_SCENARIO_HEAD as HEAD } from '../../../helpers/feed-lab.js';
import t, { type Test } from 'tap';
import { encodePing, encodeSubscribe } from '../../../../protocol/feed/encode.js';
import { FrameError, parseServerFrame } from '../../../../protocol/feed/frames.js';
import { MAX_LINE_BYTES } from '../../../../protocol/feed/lines.js';
import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import { malformedLine, numberAmountLine, type RealEvent, unknownOpLine } from '../../../../publisher/feed/server/misbehaviour.js';
import { encodeRealEvent } from '../../../../publisher/feed/outbox/events.js';
import { environmentDutyDiff, environmentDutyProblems, withBadEnvironment } from '../../../../harness/judge/environment-duty.js';
import { badFrameProblems, badFrames, lenientlyRead, paddedCursor } from '../../../../harness/labs/feed/check/bad-frames.js';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { badBackoff, badValue, environmentVerdict } from '../../../../harness/labs/feed/check/environment.js';
import { type ConnFacts, parseSent, type ProcessFacts, type RunFacts } from '../../../../harness/labs/feed/check/facts.js';
import { frameBreak } from '../../../../harness/labs/feed/check/grammar.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import type { StoreView } from '../../../../harness/labs/feed/check/state.js';
import type { FeedStoreSnapshot } from '../../../../harness/labs/feed/check/store-reader.js';
import { feedVocabulary } from '../../../../harness/labs/feed/report/vocabulary.js';
import { loadScenario, type Scenario, ScenarioError } from '../../../../harness/catalogue/load.js';

const ROOT = join(import.meta.dirname, '../../../..');
const SCENARIOS = join(ROOT, 'scenarios', 'feed');
const load = (name: string) => loadScenario(join(SCENARIOS, `${name}.yaml`)) as Scenario<FeedPlan>;

const BAD = load('feed-bad-frame-number-amount');
const sim = simulate(BAD.lab.chain, BAD.lab.topicIndexes);
const anchor = BAD.lab.server.misbehaviour[0]!.at;
const real = sim.produced.find((e) => e.cursor === anchor)!;
const later = sim.produced.filter((e) => e.cursor > anchor).slice(0, 3);
const plusOne = (e: RealEvent) => (BigInt(e.payload.amount as string) + 1n).toString();

t.test('the anchored event of the bad-frame scenarios is a Transfer, as their amount forms need', async (t) => {
  for (const name of ['feed-bad-frame-number-amount', 'feed-bad-frame-noncanonical-amount', 'feed-unknown-op', 'feed-bad-frame-not-json']) {
    const s = load(name);
    const at = s.lab.server.misbehaviour[0]!.at;
    t.equal(simulate(s.lab.chain, s.lab.topicIndexes).produced.find((e) => e.cursor === at)?.type, 'Transfer', name);
  }
});

t.test('noncanonical-amount: the real cursor, the amount off by one with a leading zero, refused by the codec', async (t) => {
  const line = malformedLine(real, 'noncanonical-amount');
  t.ok(line.includes(`"amount":"0${plusOne(real)}"`), line);
  t.ok(line.includes(`"cursor":"${real.cursor}"`));
  t.throws(() => parseServerFrame(line.slice(0, -1), { chainId: 1 }), FrameError);
  t.match(frameBreak(line, 'send'), /not a canonical decimal amount/);
});

t.test('frameBreak: what the reports draw red, and what they do not', async (t) => {
  t.equal(frameBreak(encodeRealEvent(real), 'send'), undefined, 'a real event');
  t.equal(frameBreak(encodePing(7), 'send'), undefined, 'a ping');
  t.equal(frameBreak(unknownOpLine(real), 'send'), undefined, 'an unknown op is no grammar break: it is ignored');
  t.match(frameBreak(malformedLine(real, 'trailing-comma'), 'send'), /^not valid JSON/);
  t.match(frameBreak(malformedLine(real, 'missing-block-hash'), 'send'), /missing field payload\.blockHash/);
  t.match(frameBreak(malformedLine(real, 'unpadded-cursor'), 'send'), /malformed cursor/);
  t.match(frameBreak(numberAmountLine(real), 'send'), /must be a decimal string, not/);
  t.match(frameBreak(malformedLine(real, 'oversized'), 'send'), /longer than the 1048576-byte limit/);
  // The journal keeps 4096 characters of a line: a cut line is judged by its whole length.
  t.match(frameBreak('{"op":"event","payload":{"memo":"xxxx', 'send', MAX_LINE_BYTES), /about 1048\d+ bytes, longer than the 1048576-byte limit/);
  t.equal(frameBreak('{"op":"snapshot","state":{"balances":{"0x', 'send', 5000), undefined, 'a long valid line cut short is not broken');
  t.match(frameBreak('{"op":"subscribe","client":"c1"}\n', 'recv'), /missing field topics/, 'the consumer direction has its own grammar');
  t.equal(frameBreak(encodeSubscribe({ client: 'c1', topics: [sim.topics[0]!], cursor: null, blockHash: null }), 'recv'), undefined);
  t.equal(feedVocabulary.broken, frameBreak, 'the vocabulary asks the same grammar');
});

t.test('lenient reading: where a careless consumer would file a bad frame', async (t) => {
  t.equal(paddedCursor('1:13:2'), '1:00000000000013:0002');
  t.equal(paddedCursor('01:00000000000013:0002'), '1:00000000000013:0002');
  t.equal(paddedCursor('not:a:cursor'), 'not:a:cursor');
  t.equal(paddedCursor('1:2'), '1:2');
  t.same(lenientlyRead(numberAmountLine(real)), { cursor: real.cursor, amount: plusOne(real) });
  t.same(lenientlyRead(malformedLine(real, 'noncanonical-amount')), { cursor: real.cursor, amount: plusOne(real) });
  t.same(lenientlyRead('{"op":"event"'), {});
});

// ------------------------------------------------------------------ the bad-frame finding

const view = (events: readonly RealEvent[], change: { at?: string; amount?: unknown } = {}): StoreView => ({
  exists: true,
  shape: [],
  cursor: events.at(-1)?.cursor ?? null,
  blockHash: null,
  snapshotCursor: null,
  snapshotBlockHash: null,
  events: events.map((e) => {
    const payload = e.cursor === change.at ? { ...e.payload, amount: change.amount } : e.payload;
    return { cursor: e.cursor, type: e.type, payloadText: JSON.stringify(payload), payload };
  }),
  balances: new Map(),
});

interface ConnSpec {
  bad: string;
  after?: readonly RealEvent[];
  closedBy?: 'consumer' | 'publisher' | 'reset';
  closedAt?: number;
  pings?: { before?: boolean; answered: boolean }[];
}

function conn(n: number, spec: ConnSpec): ConnFacts {
  const sent = [parseSent(10, spec.bad, 1), ...(spec.after ?? []).map((e, i) => parseSent(11 + i, encodeRealEvent(e), 1))];
  const pings = (spec.pings ?? []).map((p, i) => ({ id: String(i), t: p.before ? 5 : 20 + i }));
  return {
    stream: 'consumer',
    role: 'consumer',
    conn: n,
    owner: { role: 'consumer', incarnation: 1 },
    openedAt: 1,
    ...(spec.closedBy ? { closedBy: spec.closedBy, closedAt: spec.closedAt ?? 30, closeReason: 'closed' } : {}),
    sent,
    pings,
    pongs: new Map(pings.filter((_, i) => spec.pings![i]!.answered).map((p) => [p.id, p.t + 1])),
    recvErrors: [],
    notes: [],
  };
}

function judge(spec: ConnSpec, after: StoreView, extra: Partial<ProcessFacts> = {}, n = 1) {
  const c = conn(n, spec);
  const process: ProcessFacts = { role: 'consumer', incarnation: 1, reads: [], conns: [c], sigtermAt: 100, ...extra };
  const control: ProcessFacts = { role: 'control', incarnation: 1, reads: [], conns: [] };
  const facts: RunFacts = {
    streams: { consumer: undefined, control: undefined },
    consumers: [process],
    control,
    conns: { consumer: [c], control: [] },
    faultWindows: [],
  };
  const amounts = new Map(sim.produced.map((e) => [e.cursor, e.payload.amount as string]));
  return badFrameProblems({ facts, chainAmount: (cursor) => amounts.get(cursor), viewAfter: () => after });
}

const BEFORE = sim.produced.filter((e) => e.cursor < anchor);

t.test('an invalid frame handled as the contract says: no finding', async (t) => {
  t.same(judge({ bad: numberAmountLine(real), closedBy: 'consumer' }, view(BEFORE)), []);
  t.same(judge({ bad: numberAmountLine(real), closedBy: 'reset', pings: [{ before: true, answered: true }, { answered: false }] }, view(BEFORE)), []);
  t.equal(badFrames([]).length, 0);
});

t.test('an invalid frame applied: the verdict names the frame, why it is invalid, and what the store holds', async (t) => {
  const found = judge({ bad: numberAmountLine(real), after: later }, view([...BEFORE, real], { at: real.cursor, amount: plusOne(real) }));
  t.same(
    found.map((f) => f.code),
    ['bad-frame-applied'],
  );
  t.match(found[0]!.text, /^process 1, connection 1 applied the invalid frame `\{"op":"event".*` \(payload\.amount: an amount must be a decimal string, not/);
  t.match(found[0]!.text, new RegExp(`its store holds the event at ${real.cursor} with amount .*, where the chain has`));
  t.match(found[0]!.text, /an invalid frame is applied in no part/);
  t.same(found[0]!.subject?.cursors, [real.cursor]);
  // Kept as a JSON number, or with its leading zero: still the bad frame's amount.
  const asNumber = judge({ bad: numberAmountLine(real) }, view([...BEFORE, real], { at: real.cursor, amount: Number(plusOne(real)) }));
  t.same(
    asNumber.map((f) => f.code),
    Number(plusOne(real)) === Number(real.payload.amount) ? ['bad-frame-not-closed'] : ['bad-frame-applied'],
  );
  const zero = judge({ bad: malformedLine(real, 'noncanonical-amount') }, view([...BEFORE, real], { at: real.cursor, amount: `0${plusOne(real)}` }));
  t.same(
    zero.map((f) => f.code),
    ['bad-frame-applied'],
  );
  // The real event at that cursor (from a later connection) is no sign of the bad frame.
  t.same(judge({ bad: numberAmountLine(real), closedBy: 'consumer' }, view([...BEFORE, real])), []);
  t.same(judge({ bad: numberAmountLine(real), closedBy: 'consumer' }, view(BEFORE, { at: real.cursor, amount: 'x' })), []);
});

t.test('a bad frame of a rule from a connection on is judged on the connection the transcript carried it on', async (t) => {
  // The checker reads the frames each connection was sent, never the rule: a `from_connection` rule that fired on connection 3.
  const found = judge({ bad: numberAmountLine(real), after: later }, view([...BEFORE, real], { at: real.cursor, amount: plusOne(real) }), {}, 3);
  t.match(found[0]!.text, /^process 1, connection 3 applied the invalid frame/);
  t.same(judge({ bad: numberAmountLine(real), closedBy: 'consumer' }, view(BEFORE), {}, 3), [], 'closed on connection 3: no finding');
});

t.test('an invalid frame read past: later events applied, or later pings answered', async (t) => {
  const applied = judge({ bad: malformedLine(real, 'trailing-comma'), after: later, closedBy: 'consumer' }, view([...BEFORE, ...later]));
  t.same(
    applied.map((f) => f.code),
    ['bad-frame-read-on'],
  );
  t.match(
    applied[0]!.text,
    new RegExp(`read on past the invalid frame .*: its store then held 3 events from ${later[0]!.cursor}, sent after it on that connection`),
  );
  const one = judge({ bad: malformedLine(real, 'trailing-comma'), after: later.slice(0, 1), closedBy: 'consumer' }, view([...BEFORE, later[0]!]));
  t.match(one[0]!.text, new RegExp(`its store then held the event ${later[0]!.cursor}`));
  const pinged = judge({ bad: malformedLine(real, 'trailing-comma'), closedBy: 'consumer', pings: [{ answered: true }] }, view(BEFORE));
  t.match(pinged[0]!.text, /read on past .*: it answered ping 0, sent after it on that connection/);
  const two = judge({ bad: malformedLine(real, 'trailing-comma'), closedBy: 'consumer', pings: [{ answered: true }, { answered: true }] }, view(BEFORE));
  t.match(two[0]!.text, /it answered 2 pings/);
});

t.test('an invalid frame left open: closed by the publisher, or still open at the end', async (t) => {
  const byPublisher = judge({ bad: malformedLine(real, 'oversized'), closedBy: 'publisher' }, view(BEFORE));
  t.same(
    byPublisher.map((f) => f.code),
    ['bad-frame-not-closed'],
  );
  t.match(byPublisher[0]!.text, /did not close the connection after the invalid frame .*: the publisher closed it \(closed\)/);
  const open = judge({ bad: malformedLine(real, 'unpadded-cursor') }, view(BEFORE));
  t.match(open[0]!.text, /it was still open at the end of the run/);
  const atSigterm = judge({ bad: malformedLine(real, 'unpadded-cursor'), closedBy: 'consumer', closedAt: 150 }, view(BEFORE));
  t.match(atSigterm[0]!.text, /still open at the end of the run/, 'closing on SIGTERM is not closing on the frame');
});

t.test('an unknown op: ignored and kept is right; applied or refused is a finding', async (t) => {
  const line = unknownOpLine(real);
  t.same(judge({ bad: line, after: [real, ...later] }, view([...BEFORE, real, ...later])), [], 'ignored, the connection kept');
  const applied = judge({ bad: line, after: [real] }, view([...BEFORE, real], { at: real.cursor, amount: plusOne(real) }));
  t.same(
    applied.map((f) => f.code),
    ['unknown-op-applied'],
  );
  t.match(
    applied[0]!.text,
    /^process 1, connection 1 applied the frame `.*` of unknown op "event-v2": its store holds the event at .* — a frame of an unknown op is ignored/,
  );
  const refused = judge({ bad: line, closedBy: 'consumer', closedAt: 12 }, view(BEFORE));
  t.same(
    refused.map((f) => f.code),
    ['unknown-op-refused'],
  );
  t.match(refused[0]!.text, /closed the connection 0\.002 s after the frame .* of unknown op "event-v2", as if it were invalid/);
  t.same(judge({ bad: line, closedBy: 'consumer', closedAt: 12 }, view(BEFORE), { fault: 'exit@apply:1' }), [], 'a crash hook closes it too');
});

// ------------------------------------------------------------------ big amounts

t.test('feed-big-amounts moves amounts above 2^53 and above 2^64 for the followed accounts; the happy path stays below 2^48', async (t) => {
  const big = load('feed-big-amounts');
  const amounts = (s: Scenario<FeedPlan>) =>
    simulate(s.lab.chain, s.lab.topicIndexes)
      .events.filter((e) => e.type === 'Transfer')
      .map((e) => BigInt(e.payload.amount as string));
  const moved = amounts(big);
  t.ok(
    moved.some((a) => a > 2n ** 53n && a < 2n ** 64n && BigInt(Number(a)) !== a),
    'one a double rounds and a 64-bit integer holds',
  );
  t.ok(
    moved.some((a) => a > 2n ** 64n),
    'one above 2^64',
  );
  const happy = amounts(load('feed-happy-path'));
  t.ok(happy.length > 10 && happy.every((a) => a < 2n ** 48n), `${happy.length} amounts, all below 2^48`);
  const chain = new SimChain({ seed: 3, accounts: 4, amountBits: 8 });
  for (let i = 0; i < 20; i++) chain.mine();
  t.ok(
    chain
      .allBlocks()
      .flatMap((b) => b.logs)
      .every((l) => l.amount < 256n),
    'amount_bits bounds Approvals too',
  );
});

// ------------------------------------------------------------------ a bad environment

t.test("the feed's variables: which values are bad", async (t) => {
  t.equal(badValue('CHAOSLAB_PORT', '65535'), undefined);
  for (const v of ['0', '65536', 'not-a-port', '', '080']) t.equal(badValue('CHAOSLAB_PORT', v), 'not a TCP port 1..65535', v);
  const a = `0x${'ab'.repeat(20)}`;
  t.equal(badValue('CHAOSLAB_TOPICS', `${a},0x${'cd'.repeat(20)}`), undefined);
  t.match(badValue('CHAOSLAB_TOPICS', a.toUpperCase().replace('0X', '0x')), /lowercase/);
  t.match(badValue('CHAOSLAB_TOPICS', ''), /lowercase/);
  t.equal(badValue('CHAOSLAB_TOPICS', `${a},${a}`), 'an account listed twice');
  for (const name of ['CHAOSLAB_PING_MS', 'CHAOSLAB_IDLE_MS', 'CHAOSLAB_BACKOFF_BASE_MS', 'CHAOSLAB_BACKOFF_CAP_MS']) {
    t.equal(badValue(name, '2147483647'), undefined, name);
    for (const v of ['0', '2147483648', '1.5', '-1', '', ' 5']) t.match(badValue(name, v), /milliseconds 1\.\./, `${name} ${JSON.stringify(v)}`);
  }
  t.equal(badValue('CHAOSLAB_APPLY_DELAY_MS', '0'), undefined);
  t.match(badValue('CHAOSLAB_APPLY_DELAY_MS', ''), /milliseconds 0\.\./);
  t.equal(badValue('CHAOSLAB_FAULT', 'exit@apply:3'), undefined);
  t.equal(badValue('CHAOSLAB_FAULT', ''), 'set but empty');
  t.equal(badValue('CHAOSLAB_FAULT', 'exit@apply:0'), 'not a fault plan');
  t.equal(badValue('CHAOSLAB_HOST', ''), 'empty');
  t.equal(badValue('CHAOSLAB_CLIENT_ID', 'c1'), undefined);
  t.equal(badBackoff('500', '200'), 'CHAOSLAB_BACKOFF_CAP_MS 200 is below CHAOSLAB_BACKOFF_BASE_MS 500');
  t.equal(badBackoff('200', '200'), undefined);
  t.equal(badBackoff('x', '200'), undefined, 'a bad value is its own problem');
});

t.test('the core duty: exit 64, nothing connected, nothing written', async (t) => {
  const bad = { set: { CHAOSLAB_PORT: 'x' }, unset: ['CHAOSLAB_DB'] };
  t.same(withBadEnvironment({ CHAOSLAB_PORT: '1', CHAOSLAB_DB: 'd', CHAOSLAB_HOST: 'h' }, bad), { CHAOSLAB_PORT: 'x', CHAOSLAB_HOST: 'h' });
  t.same(withBadEnvironment({ A: '1' }, undefined), { A: '1' });
  const run = (extra: Partial<Parameters<typeof environmentDutyProblems>[0]>) => environmentDutyProblems({ bad, connections: 0, deadlineMs: 10_000, ...extra });
  t.same(run({ exit: { t: 5, code: 64, signal: null } }), []);
  t.same(environmentDutyDiff([], undefined), []);
  const never = run({});
  t.match(never[0]!.text, /^the consumer was never started or never ended when CHAOSLAB_PORT was "x" and CHAOSLAB_DB was unset/);
  t.same(environmentDutyDiff(never, undefined), ['exit: never ended, expected 64']);
  const late = run({ exit: { t: 5, code: null, signal: 'SIGKILL', killedBy: 'deadline' } });
  t.same(
    late.map((f) => f.code),
    ['env-still-running'],
  );
  t.match(late[0]!.text, /still running after 10 s/);
  t.same(environmentDutyDiff(late, { t: 5, code: null, signal: 'SIGKILL', killedBy: 'deadline' }), ['exit: killed at the deadline, expected 64']);
  const wrong = run({ exit: { t: 5, code: 1, signal: null }, connections: 2, connectedDetail: ', subscribed', written: 'a file' });
  t.same(
    wrong.map((f) => f.code),
    ['env-wrong-exit', 'env-connected', 'env-wrote-store'],
  );
  t.match(wrong[1]!.text, /connected anyway .* \(2 connections, subscribed\)/);
  t.same(environmentDutyDiff(wrong, { t: 5, code: 1, signal: null }), [
    'exit: exit 1, expected 64',
    'connections: at least one, expected none',
    'store: written, expected untouched',
  ]);
  const killed = run({ exit: { t: 5, code: null, signal: 'SIGSEGV' }, connections: 1 });
  t.match(killed[0]!.text, /was killed by SIGSEGV instead of 64/);
  t.match(killed[1]!.text, /\(one connection\)/);
  t.same(environmentDutyDiff(killed, { t: 5, code: null, signal: 'SIGSEGV' })[0], 'exit: killed by SIGSEGV, expected 64');
});

t.test('the feed verdict of a bad environment', async (t) => {
  const bad = { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: [] };
  const none: FeedStoreSnapshot = { exists: false, state: [], events: [], balances: [] };
  const exited = (code: number, conns: ConnFacts[] = []): RunFacts => ({
    streams: { consumer: undefined, control: undefined },
    consumers: [{ role: 'consumer', incarnation: 1, reads: [], conns, exit: { t: 5, code, signal: null, durationMs: 5, stderrTail: '' } }],
    control: { role: 'control', incarnation: 1, reads: [], conns: [] },
    conns: { consumer: conns, control: [] },
    faultWindows: [],
  });
  const pass = environmentVerdict(exited(64), bad, none, 10_000);
  t.equal(pass.status, 'pass');
  t.equal(pass.headline, 'the consumer exited 64 when CHAOSLAB_PORT was "not-a-port", without connecting or creating its store');
  t.same(pass.state.rows[1]!.cells, ['64', '0', 'no file']);
  const c = conn(1, { bad: encodePing(1) });
  c.subscribe = { t: 2, line: '', frame: { op: 'subscribe', client: 'c1', topics: [], cursor: null, blockHash: null } };
  const created: FeedStoreSnapshot = {
    exists: true,
    state: [{ id: 1, cursor: null, block_hash: null, snapshot_cursor: null, snapshot_block_hash: null }],
    events: [],
    balances: [],
  };
  const fail = environmentVerdict(exited(0, [c]), bad, created, 10_000);
  t.equal(fail.status, 'fail');
  t.same(
    fail.findings.map((f) => f.code),
    ['env-wrong-exit', 'env-connected', 'env-wrote-store'],
  );
  t.match(fail.findings[1]!.text, /subscribed with cursor null/);
  t.match(fail.findings[2]!.text, /the file exists: 0 events, 0 balances, cursor NULL/);
  t.equal(fail.headline, fail.findings[0]!.text);
  const unreadable = environmentVerdict(exited(64), bad, { ...none, exists: true, error: 'not a database' }, 10_000);
  t.match(unreadable.findings[0]!.text, /the file exists \(not a database\)/);
  t.same(environmentVerdict({ ...exited(64), consumers: [] }, bad, none, 10_000).state.rows[1]!.cells[0], 'never ended');
});

t.test('the bad-environment scenarios resolve to one plain process with the bad values', async (t) => {
  t.same(load('feed-bad-environment-port').lab.consumer.badEnvironment, { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: [] });
  t.same(load('feed-bad-environment-no-client').lab.consumer.badEnvironment, { set: {}, unset: ['CHAOSLAB_CLIENT_ID'] });
  t.same(load('feed-bad-environment-backoff').lab.consumer.badEnvironment?.set, { CHAOSLAB_BACKOFF_BASE_MS: '500', CHAOSLAB_BACKOFF_CAP_MS: '200' });
  t.equal(load('feed-bad-environment-topics').lab.consumer.badEnvironment?.unset.length, 0);
  t.equal(load('feed-happy-path').lab.consumer.badEnvironment, undefined);
});

// ------------------------------------------------------------------ scenario mistakes

function problemsOf(t: Test, lines: string[]): { field: string; message: string }[] {
  const dir = t.testdir({ 'x.yaml': ['name: x', ...lines, ''].join('\n') });
  try {
    loadScenario(join(dir, 'x.yaml'));
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems.map((p) => ({ field: p.field, message: p.message }));
    throw error;
  }
  return [];
}

t.test('a bad environment must be bad, and grade one plain process', async (t) => {
  t.same(problemsOf(t, [...HEAD, '  env:', '    CHAOSLAB_PORT: "0"']), []);
  t.same(problemsOf(t, [...HEAD, '  env:', '    CHAOSLAB_BACKOFF_CAP_MS: "50"']), [], 'CAP below the default BASE');
  const valid = problemsOf(t, [...HEAD, '  env:', '    CHAOSLAB_PORT: "80"', '    CHAOSLAB_BACKOFF_CAP_MS: "5000"']);
  t.same(
    valid.map((p) => p.message),
    [
      '"80" is a valid CHAOSLAB_PORT: a bad environment needs a value the contract calls invalid',
      '"5000" is a valid CHAOSLAB_BACKOFF_CAP_MS: a bad environment needs a value the contract calls invalid',
    ],
  );
  t.match(problemsOf(t, [...HEAD, '  env:', '    CHAOSLAB_HOST: "a\\0b"'])[0]?.message, /NUL byte/);
  t.match(problemsOf(t, [...HEAD, '  env:', '    CHAOSLAB_DB: ""', '  unset: [CHAOSLAB_DB]'])[0]?.message, /also set in consumer.env/);
  const further = problemsOf(t, [
    ...HEAD,
    '  unset: [CHAOSLAB_TOPICS]',
    '  processes: [{ fault: "exit@apply:1" }]',
    '  restart: { max: 2 }',
    'server:',
    '  misbehave: [{ action: unknown-op, event: 1 }]',
    'expect:',
    '  processes: 2',
  ]);
  t.same(
    further.map((p) => p.field),
    ['consumer.processes', 'consumer.restart', 'server.misbehave', 'expect.processes'],
  );
  t.match(further[0]!.message, /^leave it out: with consumer.env or consumer.unset the scenario runs one plain process/);
});

t.test('an amount form needs a Transfer at its anchor', async (t) => {
  const head = loadScenarioText(t, HEAD);
  const produced = simulate(head.lab.chain, head.lab.topicIndexes).produced;
  const approval = produced.findIndex((e) => e.type !== 'Transfer') + 1;
  const transfer = produced.findIndex((e) => e.type === 'Transfer') + 1;
  t.ok(approval > 0 && transfer > 0, 'the chain has both');
  for (const rule of ['action: number-amount', 'action: malformed, form: noncanonical-amount']) {
    const found = problemsOf(t, [...HEAD, 'server:', `  misbehave: [{ ${rule}, event: ${approval} }]`]);
    t.same(
      found.map((p) => p.field),
      ['server.misbehave[0].event'],
      rule,
    );
    t.match(found[0]!.message, /needs a Transfer, but the anchor .* is a Approval/);
    t.same(problemsOf(t, [...HEAD, 'server:', `  misbehave: [{ ${rule}, event: ${transfer} }]`]), [], `${rule} at a Transfer`);
  }
});

function loadScenarioText(t: Test, lines: string[]): Scenario<FeedPlan> {
  const dir = t.testdir({ 'y.yaml': ['name: y', ...lines, ''].join('\n') });
  return loadScenario(join(dir, 'y.yaml')) as Scenario<FeedPlan>;
}
