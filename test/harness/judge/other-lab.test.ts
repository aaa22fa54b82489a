// A consumer run against another lab's scenario: its first line, or the variable it asked for on
// exit 64, names its lab; the finding quotes it inert and names the scenario to run instead.
import t from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import {
  type ConsumerSignature,
  counterpart,
  type LabSigned,
  OTHER_LAB,
  otherLabVerdict,
  otherLabWatch,
  otherLabWatchOnceLoaded,
  quoteLine,
} from '../../../harness/judge/other-lab.js';
import type { Finding } from '../../../harness/findings/verdict.js';
import { labNamed } from '../../../harness/labs/registry.js';

const ledger: ConsumerSignature = { opens: (l) => /^RESUME\b/.test(l), variables: ['CHAOSLAB_PORT', 'CHAOSLAB_TIMEOUT_MS'] };
const feed: LabSigned = {
  name: 'feed',
  signature: { opens: (l) => /^\s*\{.*"op"\s*:\s*"subscribe"/.test(l), variables: ['CHAOSLAB_PORT', 'CHAOSLAB_CLIENT_ID'] },
  scenarioNames: () => ['feed-happy-path', 'feed-reorg'],
  happyPath: 'feed-happy-path',
};
const scenario = { name: 'happy-path', lab: 'ledger' };

const open = (conn: number, role: 'consumer' | 'control', incarnation = 1, t = 1): JournalEntry =>
  ({ type: 'wire', t, stream: role, conn, kind: 'open', owner: { role, incarnation } }) as JournalEntry;
const recv = (conn: number, line: string, role: 'consumer' | 'control' = 'consumer', t = 2): JournalEntry =>
  ({ type: 'wire', t, stream: role, conn, kind: 'recv', line }) as JournalEntry;
const exit = (code: number, stderrTail: string, incarnation = 1): JournalEntry =>
  ({
    type: 'process-exit',
    t: 3,
    role: 'consumer',
    incarnation,
    code,
    signal: null,
    durationMs: 1,
    stdoutTail: '',
    stderrTail,
    stdoutBytes: 0,
    stderrBytes: stderrTail.length,
  }) as JournalEntry;

const judge = (entries: JournalEntry[]) => {
  const watch = otherLabWatch(scenario, ledger, [feed]);
  return entries.map(watch).filter((f) => f !== undefined);
};

t.test("the other lab's first line: one finding, in plain words, the line quoted cut", async (t) => {
  const found = judge([open(1, 'control'), recv(1, 'RESUME -1\n', 'control'), open(1, 'consumer'), recv(1, '{"op":"subscribe","client":"c1","topics":[]}\n')]);
  t.equal(found.length, 1);
  t.same(found[0], {
    code: OTHER_LAB,
    text: 'this consumer speaks the feed lab\'s protocol (`{"op":"subscribe"...`); happy-path is a ledger scenario: run feed-happy-path, or `chaoslab list --lab feed`',
    subject: { process: { role: 'consumer', incarnation: 1 }, t: 2 },
  });
});

t.test('its own protocol, a line of neither, a later line, the control: no finding', async (t) => {
  t.same(judge([open(1, 'consumer'), recv(1, 'RESUME -1\n'), recv(1, '{"op":"subscribe"}\n')]), [], 'only the first line of a connection');
  t.same(judge([open(1, 'consumer'), recv(1, 'HELLO\n')]), [], "a broken line of neither lab is the lab's own finding");
  t.same(judge([open(1, 'control'), recv(1, '{"op":"subscribe"}\n', 'control')]), [], 'the control is the harness’s');
  t.same(judge([recv(1, '{"op":"subscribe"}\n')]), [], 'a connection no consumer owns');
});

t.test('exit 64 before connecting, asking for a variable only the other lab gives', async (t) => {
  const [found] = judge([exit(64, 'feed consumer: CHAOSLAB_CLIENT_ID is missing (exit 64)\n')]);
  t.equal(
    found?.text,
    "this consumer speaks the feed lab's protocol (it exited 64 asking for CHAOSLAB_CLIENT_ID, which only the feed lab's consumers are given); happy-path is a ledger scenario: run feed-happy-path, or `chaoslab list --lab feed`",
  );
  t.same(judge([exit(64, 'CHAOSLAB_PORT is missing')]), [], 'a variable both labs give says nothing');
  t.same(judge([exit(64, 'CHAOSLAB_TIMEOUT_MS is missing')]), [], 'its own lab’s variable: the bad-environment duty, not this');
  t.same(judge([exit(1, 'CHAOSLAB_CLIENT_ID is missing')]), [], 'another status');
  t.same(judge([exit(64, 'CHAOSLAB_CLIENT_IDS is missing')]), [], 'a whole variable name only');
  t.same(judge([open(1, 'consumer'), recv(1, 'RESUME 3\n'), exit(64, 'CHAOSLAB_CLIENT_ID')]), [], 'after it connected');
});

t.test('the first sign only', async (t) => {
  t.equal(judge([exit(64, 'CHAOSLAB_CLIENT_ID', 1), open(1, 'consumer', 2), recv(1, '{"op":"subscribe"}\n')]).length, 1);
});

t.test('the quote is inert: cut, control bytes, non-ASCII and backticks escaped', async (t) => {
  t.equal(quoteLine('RESUME -1\n'), '`RESUME -1`');
  t.equal(quoteLine('a`b\\c\x1b[31m\u00e9\u65e5\n'), '`a\\`b\\\\c\\x1b[31m\\xe9\\u{65e5}`');
  t.equal(quoteLine('x'.repeat(40)), `\`${'x'.repeat(17)}...\``);
});

t.test('the scenario to run instead', async (t) => {
  t.equal(counterpart('happy-path', 'ledger', feed), 'feed-happy-path');
  t.equal(counterpart('reorg', 'ledger', feed), 'feed-reorg');
  t.equal(counterpart('gap', 'ledger', feed), 'feed-happy-path', 'none alike: the happy path');
  const ledgerSigned: LabSigned = { name: 'ledger', signature: ledger, scenarioNames: () => ['happy-path', 'gap'], happyPath: 'happy-path' };
  t.equal(counterpart('feed-happy-path', 'feed', ledgerSigned), 'happy-path');
  t.equal(counterpart('feed-reorg', 'feed', ledgerSigned), 'happy-path');
});

t.test('its verdict: a FAIL with the finding alone, nothing compared', async (t) => {
  const finding = { code: OTHER_LAB, text: 'x' };
  const v = otherLabVerdict(finding);
  t.equal(v.status, 'fail');
  t.equal(v.headline, 'x');
  t.same(v.findings, [finding]);
  t.same(v.harnessErrors, []);
});

t.test("the real labs' signatures tell each other's reference first lines apart", async (t) => {
  const ledgerLab = labNamed('ledger')!.consumerSignature!;
  const feedLab = labNamed('feed')!.consumerSignature!;
  const subscribe = `{"op":"subscribe","client":"c","topics":["0x${'a'.repeat(40)}"],"cursor":null,"blockHash":null}\n`;
  t.ok(ledgerLab.opens('RESUME -1\n') && !feedLab.opens('RESUME -1\n'));
  t.ok(feedLab.opens(subscribe) && !ledgerLab.opens(subscribe));
  t.ok(feedLab.opens('{ "client": "c", "op" : "subscribe" }'), 'members in any order, spaces allowed');
  t.ok(ledgerLab.variables.includes('CHAOSLAB_TIMEOUT_MS') && !feedLab.variables.includes('CHAOSLAB_TIMEOUT_MS'));
  t.ok(feedLab.variables.includes('CHAOSLAB_CLIENT_ID') && !ledgerLab.variables.includes('CHAOSLAB_CLIENT_ID'));
});

t.test('the other labs are loaded only once an entry could show one; then what was written is replayed, in order', async (t) => {
  const written: JournalEntry[] = [];
  const found: Finding[] = [];
  let loads = 0;
  let loaded!: (labs: readonly LabSigned[]) => void;
  const { see, settled } = otherLabWatchOnceLoaded(
    scenario,
    ledger,
    () => {
      loads++;
      return new Promise((resolve) => (loaded = resolve));
    },
    () => written,
    (finding) => found.push(finding),
  );
  const write = (entry: JournalEntry) => {
    written.push(entry);
    see(entry);
  };
  // An honest run: the control's lines, the consumer's RESUME and ACKs, a clean exit.
  for (const entry of [open(1, 'control'), recv(1, 'RESUME -1\n', 'control'), open(1, 'consumer'), recv(1, 'RESUME -1\n'), recv(1, 'ACK 0\n'), exit(0, '')])
    write(entry);
  t.equal(loads, 0, 'an honest consumer never loads the other labs');
  await settled();
  // Another consumer connection whose first line is the feed lab's: now they load.
  for (const entry of [open(2, 'consumer', 2), recv(2, '{"op":"subscribe","client":"c1","topics":[]}\n'), recv(2, '{"op":"pong"}\n')]) write(entry);
  t.equal(loads, 1);
  t.same(found, [], 'nothing said before they are in');
  loaded([feed]);
  await settled();
  t.same(found, judge(written), 'the replay finds what a watch that saw every entry live finds');
  t.equal(found.length, 1);
  write(recv(3, '{"op":"subscribe","client":"c1","topics":[]}\n'));
  write(exit(64, 'missing CHAOSLAB_CLIENT_ID', 3));
  t.equal(loads, 1, 'loaded once');
});

t.test('the hint: a consumer exit 64 before any line loads them too; a lab that cannot load fails the verdict', async (t) => {
  const found: Finding[] = [];
  const written = [exit(64, 'chaoslab: CHAOSLAB_CLIENT_ID is not set')];
  const asking = otherLabWatchOnceLoaded(
    scenario,
    ledger,
    async () => [feed],
    () => written,
    (f) => found.push(f),
  );
  asking.see(written[0]!);
  await asking.settled();
  t.same(found, judge(written));
  t.match(found[0]?.text, /CHAOSLAB_CLIENT_ID/);
  const broken = otherLabWatchOnceLoaded(
    scenario,
    ledger,
    () => Promise.reject(new Error('feed/index.js must export exactly one lab')),
    () => written,
    () => {},
  );
  broken.see(written[0]!);
  await t.rejects(broken.settled(), /must export exactly one lab/, 'a lab that cannot load fails what awaits it (the verdict)');
});
