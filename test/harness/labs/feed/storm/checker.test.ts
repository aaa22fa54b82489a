// The restart storm's checker, attempts and picture (harness/labs/feed/storm/), on journals built
// here as the storm server writes them: a correct backoff passes; each of the four mutants'
// shapes is caught for its reason; crashes and silence are findings; the figure is drawn.
import { join } from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../../../../../harness/record/journal.js';
import { SIGTERM_FAULT } from '../../../../../harness/labs/feed/check/facts.js';
import type { FeedPlan, StormPlan } from '../../../../../harness/labs/feed/scenario/plan.js';
import { stormAttempts } from '../../../../../harness/labs/feed/storm/attempts.js';
import { checkStorm, judgeStorm, resetLimitMs, stepOf } from '../../../../../harness/labs/feed/storm/checker.js';
import { STORM_FIGURE } from '../../../../../harness/labs/feed/storm/figure-data.js';
import { drawStormFigure } from '../../../../../harness/labs/feed/storm/figure.js';
import { preCapSteps, stormPlanOf, stormProblems } from '../../../../../harness/labs/feed/storm/scenario.js';
import { feedVocabulary } from '../../../../../harness/labs/feed/report/vocabulary.js';
import { figureSection } from '../../../../../harness/report/html.js';
import { loadScenario } from '../../../../../harness/catalogue/load.js';
import { Prng } from '../../../../../publisher/feed/chain/prng.js';

const ROOT = join(import.meta.dirname, '../../../../..');
const scenario = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-restart-storm.yaml'));
const plan = scenario.lab as FeedPlan;
const STORM = plan.storm as StormPlan;
const BASE = plan.consumer.backoffBaseMs;
const CAP = plan.consumer.backoffCapMs;

type Delay = (n: number, process: number, attemptOfProcess: number) => number;

/** A storm journal: each process served, then `rounds` restarts of `attempts` tries each, the last one served; SIGTERM, exit 0. */
function journalOf(
  delay: Delay,
  opts: { processes?: number; attempts?: number; exit?: (k: number) => Partial<JournalEntry> | undefined; silent?: number } = {},
): JournalEntry[] {
  const processes = opts.processes ?? STORM.processes;
  const attempts = opts.attempts ?? 8;
  const out: JournalEntry[] = [];
  const wire = (t: number, k: number, conn: number, rest: object) => out.push({ t, type: 'wire', stream: `storm-${k}`, conn, ...rest } as JournalEntry);
  let end = 0;
  for (let k = 1; k <= processes; k++) {
    let conn = 1;
    wire(10, k, conn, { kind: 'open' });
    wire(11, k, conn, { kind: 'send', line: '{"op":"snapshot","cursor":"1:00000000000010:0000"}' });
    let tries = 0;
    for (let round = 1; round <= STORM.rounds; round++) {
      let t = 1000 + (round - 1) * 30_000;
      wire(t, k, conn, { kind: 'send', line: '{"op":"reset","reason":"shutdown"}' });
      wire(t, k, conn, { kind: 'close', by: 'publisher', reason: 'reset' });
      if (opts.silent === k) continue;
      for (let i = 0; i < attempts; i++) {
        t += delay(i, k, tries++);
        conn++;
        wire(t, k, conn, { kind: 'open' });
        if (i < attempts - 1) wire(t, k, conn, { kind: 'close', by: 'publisher', reason: 'down' });
        else wire(t + 1, k, conn, { kind: 'send', line: '{"op":"event","cursor":"1:00000000000011:0000"}' });
      }
      end = Math.max(end, t);
    }
  }
  for (let k = 1; k <= processes; k++) {
    out.push({ t: 70_000, type: 'fault', action: 'apply', name: SIGTERM_FAULT.consumer, kind: 'signal', detail: 'SIGTERM', incarnation: k });
    out.push({
      t: 70_100,
      type: 'process-exit',
      role: 'consumer',
      incarnation: k,
      code: 0,
      signal: null,
      durationMs: 1,
      stdoutTail: '',
      stderrTail: '',
      ...opts.exit?.(k),
    } as JournalEntry);
  }
  return out.sort((a, b) => a.t - b.t);
}

const uniform = (seed: number) => {
  const rng = new Prng(seed);
  return () => 0.5 + rng.next() / 2 ** 32;
};
const correct =
  (u: () => number): Delay =>
  (n) =>
    stepOf(BASE, CAP, n) * u() + 3;
const texts = (j: ReturnType<typeof judgeStorm>) => j.findings.map((f) => f.text);

t.test('the scenario and its plan', (t) => {
  t.match(STORM, { processes: 20, rounds: 2, roundMs: 12_000, roundMaxMs: 24_000, minAtCap: 4, maxAttempts: 60 });
  t.equal(preCapSteps(250, 2000), 3);
  t.equal(preCapSteps(100, 100), 0);
  t.same(stormPlanOf({}), { processes: 20, rounds: 2, roundMs: 12_000, roundMaxMs: 24_000, minAtCap: 4, maxAttempts: 60 });
  const file = {
    storm: { max_attempts: 10, min_at_cap: 8 },
    faults: [{ name: 'x' }],
    consumer: { topics: [0], backoff_base_ms: 250, backoff_cap_ms: 2000 },
  } as unknown as Parameters<typeof stormProblems>[0];
  const problems = stormProblems(file, 60_000).map((p) => `${p.segments.join('.')}: ${p.message}`);
  t.match(problems, [/^faults: a storm scenario takes no faults/, /^storm.max_attempts: .*at least 11/, /^storm: .*deadline_ms must be at least/]);
  t.same(stormProblems({ ...file, storm: undefined } as typeof file, 1), [], 'no storm, no storm problems');
  t.end();
});

t.test('a correct backoff passes, the attempts are read back with their n', (t) => {
  const journal = journalOf(correct(uniform(1)));
  const records = stormAttempts(journal, STORM.processes);
  t.equal(records.length, 20);
  t.equal(records[0]!.attempts.length, 16);
  t.match(records[0]!.attempts[0], { process: 1, round: 1, index: 0, n: 0 });
  t.match(records[0]!.attempts[8], { round: 2, index: 0, n: 0 }, 'n back to 0 after the served event');
  t.match(records[0]!.attempts[7], { round: 1, index: 7, n: 7 });
  t.equal(records[0]!.roundStarts.length, 2);
  const judged = judgeStorm(journal, plan, STORM);
  t.same(texts(judged), [], 'no finding');
  t.match(
    judged.tables[0]!.rows.map((r) => r.ok),
    [true, true, true, true],
  );
  const verdict = checkStorm(journal, plan, STORM);
  t.equal(verdict.status, 'pass');
  t.match(verdict.headline, /20 processes came back from 2 restarts/);
  t.equal(verdict.figures?.[0]?.id, STORM_FIGURE);
  t.end();
});

t.test("a process's first retry is n = 0, also when its first connect brought nothing", (t) => {
  const wire = (t: number, conn: number, rest: object) => ({ t, type: 'wire', stream: 'storm-1', conn, ...rest }) as JournalEntry;
  const journal: JournalEntry[] = [
    wire(10, 1, { kind: 'open' }),
    wire(11, 1, { kind: 'close', by: 'publisher', reason: 'the server is down: accepted and closed at once' }),
    wire(80, 2, { kind: 'open' }),
    wire(81, 2, { kind: 'close', by: 'publisher', reason: 'the server is down: accepted and closed at once' }),
    wire(300, 3, { kind: 'open' }),
  ];
  t.same(
    stormAttempts(journal, 1)[0]!.attempts.map((a) => a.n),
    [0, 1],
    'the first connect is no retry: the retries after it count 0, 1, … (contract section 6)',
  );
  t.end();
});

t.test('many correct storms, with scheduling noise, never fail', (t) => {
  let failed = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const u = uniform(seed);
    const rng = new Prng(seed + 1000);
    const noisy: Delay = (n) => stepOf(BASE, CAP, n) * u() + (rng.next() / 2 ** 32) * 20;
    if (judgeStorm(journalOf(noisy), plan, STORM).findings.length > 0) failed++;
  }
  t.equal(failed, 0);
  t.end();
});

t.test('each mutant is caught for its reason', (t) => {
  const u = uniform(2);
  t.match(
    texts(
      judgeStorm(
        journalOf((n) => stepOf(BASE, CAP, n) + 2),
        plan,
        STORM,
      ),
    ),
    [/^no jitter at the cap/, /^no jitter before the cap/],
    'no-jitter: the cap’s finding leads, where scheduling cannot hide it',
  );
  t.match(
    texts(
      judgeStorm(
        journalOf((n) => Math.min(stepOf(BASE, CAP, n) * u(), CAP) + 2),
        plan,
        STORM,
      ),
    ),
    [
      /^the delay is clamped after the jitter: at the cap every retry waits at most CAP .*only \d+ % of them exceed 1.25 × CAP.* min\(CAP, BASE × 2\^n × U\) instead of min\(BASE × 2\^n, CAP\) × U/,
    ],
    'jitter-clamped-at-cap',
  );
  // The common student form clamps the uncapped jittered step: past the cap, every wait is CAP.
  const clampedFlat = texts(
    judgeStorm(
      journalOf((n) => Math.min(BASE * 2 ** n * u(), CAP) + 2, { attempts: 14 }),
      plan,
      STORM,
    ),
  );
  t.match(clampedFlat, [/^the delay is clamped after the jitter: at the cap every retry waits exactly CAP .*\(CONTRACT\.md §6\)/], 'min(CAP, BASE·2^n·U)');
  t.notMatch(clampedFlat.join('\n'), /no jitter/, 'not reported as a missing jitter: the jitter is there before the cap');
  // No jitter anywhere, every wait stretched by a loaded machine: the KS test before the cap
  // (which judges only waits too short) passes, but a flat cap is still no jitter, not a clamp.
  const nCap = preCapSteps(BASE, CAP);
  const judged = (delay: Delay) => judgeStorm(journalOf(delay, { attempts: 14 }), plan, STORM);
  const stretched = judged((n) => (n < nCap ? 1.6 * stepOf(BASE, CAP, n) : CAP) + 2);
  t.match(texts(stretched), [/^no jitter at the cap: every retry at the cap waits CAP exactly/], 'a jitterless, stretched backoff');
  t.equal(
    stretched.findings[0]?.code,
    judged((n) => stepOf(BASE, CAP, n) + 2).findings[0]?.code,
    'the same jitterless backoff leads with the same finding whether or not load stretched its waits before the cap',
  );
  // The same, each wait stretched by a different amount (a loaded machine: 0 to 80 % longer):
  // spread before the cap, yet none below its step, so still no jitter, not a clamp.
  const noise = uniform(7);
  const noisy = texts(
    judgeStorm(
      journalOf((n) => (n < nCap ? stepOf(BASE, CAP, n) * (1 + 0.8 * (noise() - 0.5)) : CAP) + 2, { attempts: 14 }),
      plan,
      STORM,
    ),
  );
  t.match(noisy, [/^no jitter at the cap: every retry at the cap waits CAP exactly/], 'a jitterless backoff stretched unevenly');
  t.notMatch(noisy.join('\n'), /clamped/, 'not taken for a clamp');
  t.match(
    texts(
      judgeStorm(
        journalOf(() => 1),
        plan,
        STORM,
      ),
    )[0],
    /^\d+ of \d+ retries came earlier than half the base \(BASE\/2 = 125 ms\)/,
    'immediate-retry',
  );
  const neverReset: Delay = (_n, _k, i) => stepOf(BASE, CAP, i) * u() + 2;
  const found = texts(judgeStorm(journalOf(neverReset), plan, STORM));
  t.match(found.at(-1), /^n was not reset after a successful subscription: .* waited at least \d+ ms in all 20 /, 'backoff-never-reset');
  t.equal(resetLimitMs(250, 2000), 687.5, 'halfway between 1.5 × BASE and CAP / 2');
  t.equal(resetLimitMs(250, 500), 475, 'at least 100 ms above 1.5 × BASE');
  const growthless = texts(
    judgeStorm(
      journalOf(() => BASE * u() + 2),
      plan,
      STORM,
    ),
  );
  t.match(growthless[0], /^the delays before the cap do not grow as .*: median n = 0 \d+ ms \(step 250 ms\), n = 1/, 'no growth: the medians per step');
  t.match(growthless[1], /^the delays at the cap do not follow CAP × U\(0.5, 1.5\)/);
  t.end();
});

t.test('a subscribe the server never answered leads, quoted, before the backoff it kept from being shown', (t) => {
  // As a run looks when the server cannot read the subscribes: lines come in, no snapshot or event goes out.
  const unserved = journalOf(correct(uniform(5)))
    .filter((e) => !(e.type === 'wire' && e.kind === 'send' && /"op":"(snapshot|event)"/.test(e.line)))
    .flatMap((e) =>
      e.type === 'wire' && e.kind === 'open'
        ? [e, { ...e, t: e.t + 0.5, kind: 'recv', line: '{"blockHash":null,"client":"c","cursor":null,"op":"subscribe"' } as JournalEntry]
        : [e],
    );
  const records = stormAttempts(unserved, STORM.processes);
  t.equal(records[0]!.served, false);
  t.match(records[0]!.firstLine, /^\{"blockHash"/);
  const verdict = checkStorm(unserved, plan, STORM);
  t.equal(verdict.status, 'fail');
  t.equal(verdict.findings[0]?.code, 'storm-subscribe-unanswered', 'the cause leads');
  t.match(
    verdict.headline,
    /no process \(of 20\) got a snapshot or an event: the server could not read their subscribes as one \(process 1's first line: "\{\\"blockHash\\":null,.*"\), .* its members in any order \(CONTRACT\.md §2\)/,
  );
  t.equal(stormAttempts(journalOf(correct(uniform(5))), STORM.processes)[0]!.served, true, 'a served process is not named');
  t.end();
});

t.test('processes that crash, hang or never come back', (t) => {
  const journal = journalOf(correct(uniform(3)), {
    processes: 4,
    silent: 3,
    exit: (k) => (k === 1 ? { t: 500, code: 1 } : k === 2 ? { code: null, signal: 'SIGKILL', killedBy: 'harness' } : undefined),
  });
  const four = { ...STORM, processes: 4 };
  const found = texts(judgeStorm(journal, plan, four));
  t.match(found, [
    /^process 1 ended during the storm \(exit 1\)/,
    /^process 2 did not exit 0 on SIGTERM \(killed by the harness\)/,
    /^process 3 never reconnected after restart 1/,
  ]);
  t.equal(found.length, 3, 'a process that never came back had no connection left to restart the second time');
  const verdict = checkStorm(journal, plan, four);
  t.equal(verdict.status, 'fail');
  t.equal(verdict.headline, found[0], 'the headline is the leading finding, as every renderer shows it');
  t.match(verdict.state.rows[1]!.cells.at(-1), 'killed (harness)');
  const none = checkStorm([], plan, four);
  t.equal(none.status, 'pass', 'nothing seen is nothing judged (the processes table shows the empty rounds)');
  t.same(none.state.rows[0]!.cells, [0, 0, null, null]);
  t.end();
});

t.test('the picture', (t) => {
  const verdict = checkStorm(journalOf(correct(uniform(4))), plan, STORM);
  const figure = verdict.figures![0]!;
  t.match(figure.caption, /Attempts per 100 ms, all 20 processes stacked; .* 50 000 clients .*: peak [\d,]+ against 500,000 accepts per second/);
  const svg = drawStormFigure(figure)!;
  t.match(svg, /^<svg xmlns/);
  t.ok((svg.match(/<rect /g) ?? []).length > 20, 'bars, one per process and bin');
  t.match(svg, /no jitter: peak 500k\/s/);
  t.match(svg, /restart \(reset shutdown\)/);
  t.equal(drawStormFigure({ ...figure, id: 'other' }), undefined, 'not the storm figure: not drawn');
  const section = figureSection({ ...figure, title: 'a <b> title' }, feedVocabulary).text;
  t.match(section, /<section id="feed-storm" class="figure"><h2>a &lt;b&gt; title<\/h2>/);
  t.match(section, /<svg /);
  const undrawn = figureSection({ id: 'x', title: 'x', data: null }, { ...feedVocabulary, drawFigure: undefined }).text;
  t.match(undrawn, /no drawing for this figure/);
  t.end();
});
