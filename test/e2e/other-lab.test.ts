// A consumer run against the other lab's scenario is refused in plain words, and its run stopped
// at once: the TypeScript feed reference on `happy-path` (a ledger scenario) and the ledger
// reference on `feed-happy-path`, both as they are (each exits 64 asking for a variable only its
// own lab gives) and given that variable (each then connects, and its first line names its lab).
// Report paths under an absolute --out are printed absolute.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { chaoslab, onlyRun, root, survivors } from '../helpers/cli.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', CHAOSLAB_SEAL: 'off' };
const feedReference = `node ${join(root, 'dist', 'consumer', 'feed', 'typescript', 'client.js')}`;
const ledgerReference = `node ${join(root, 'dist', 'consumer', 'ledger', 'typescript', 'client.js')}`;
const feedVariables = [
  'CHAOSLAB_CLIENT_ID=c1',
  `CHAOSLAB_TOPICS=0x${'a'.repeat(40)}`,
  'CHAOSLAB_PING_MS=1000',
  'CHAOSLAB_IDLE_MS=5000',
  'CHAOSLAB_BACKOFF_BASE_MS=50',
  'CHAOSLAB_BACKOFF_CAP_MS=500',
].join(' ');

const cases = [
  {
    what: 'the feed reference on happy-path, as it is',
    scenario: 'happy-path',
    consumer: feedReference,
    why: "this consumer speaks the feed lab's protocol (it exited 64 asking for CHAOSLAB_CLIENT_ID, which only the feed lab's consumers are given); happy-path is a ledger scenario: run feed-happy-path, or `chaoslab list --lab feed`",
  },
  {
    what: 'the feed reference on happy-path, given the feed variables: its first line',
    scenario: 'happy-path',
    consumer: `env ${feedVariables} ${feedReference}`,
    why: 'this consumer speaks the feed lab\'s protocol (`{"op":"subscribe"...`); happy-path is a ledger scenario: run feed-happy-path, or `chaoslab list --lab feed`',
  },
  {
    what: 'the ledger reference on feed-happy-path, as it is',
    scenario: 'feed-happy-path',
    consumer: ledgerReference,
    why: "this consumer speaks the ledger lab's protocol (it exited 64 asking for CHAOSLAB_TIMEOUT_MS, which only the ledger lab's consumers are given); feed-happy-path is a feed scenario: run happy-path, or `chaoslab list --lab ledger`",
  },
  {
    what: 'the ledger reference on feed-happy-path, given CHAOSLAB_TIMEOUT_MS: its first line',
    scenario: 'feed-happy-path',
    consumer: `env CHAOSLAB_TIMEOUT_MS=5000 ${ledgerReference}`,
    why: "this consumer speaks the ledger lab's protocol (`RESUME -1`); feed-happy-path is a feed scenario: run happy-path, or `chaoslab list --lab ledger`",
  },
];

for (const c of cases)
  t.test(c.what, { timeout: 300_000 }, async (t) => {
    const out = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-other-lab-')));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const r = await chaoslab(['run', c.scenario, '--consumer', c.consumer, '--out', out], { env });
    t.equal(r.exitCode, 1, r.stderr);
    t.match(r.stdout, `FAIL  ${c.scenario}  (`);
    t.match(r.stdout, `  Why: ${c.why}\n`, 'the one finding, in plain words');
    const { dir, journal } = onlyRun(out);
    const verdict = journal.find((e) => e.type === 'verdict');
    t.same(
      verdict?.type === 'verdict' && verdict.verdict.findings.map((f) => [f.code, f.text]),
      [['other-lab', c.why]],
      'the verdict holds that finding alone',
    );
    const end = journal.find((e) => e.type === 'run-end');
    t.ok(end && end.t < 10_000, `stopped at once (${end?.t} ms), not after the scenario's time`);
    // (Markdown escapes backticks and underscores.)
    t.ok(readFileSync(join(dir, 'summary.md'), 'utf8').replace(/\\(.)/g, '$1').includes(`**${c.why}**`), 'summary.md says it too');
    t.match(r.stdout, `report: ${join(dir, 'report.html')}`, 'an absolute --out: the report path printed absolute');
    t.same(survivors(journal), []);
  });

t.test("--lab refuses the other lab's scenario before anything runs", async (t) => {
  const r = await chaoslab(['run', 'happy-path', '--lab', 'feed', '--consumer', feedReference], { env });
  t.equal(r.exitCode, 2);
  t.equal(r.stderr, 'chaoslab: happy-path is a ledger scenario, not one of the feed lab (--lab feed): run feed-happy-path, or see `chaoslab list --lab feed`');
});
