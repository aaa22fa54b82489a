// chaoslab chaos end to end, short and deterministic (the long searches are `make chaos` and
// `make chaos-proof`): a fixed seed whose first schedule sends an EVENT twice finds the no-dedupe
// mutant, confirms it, shrinks it within its run cap, runs the result twice more (steadiness) and
// writes repro.yaml; the repro replays with the consumer it names and fails it, and passes both
// references; the same seed draws the same schedule again, and the seed and path the repro names
// draw the shrunk schedule; nothing is left running.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { parse } from 'yaml';
import { readJournal } from '../../harness/record/journal.js';
import { ledgerChaos } from '../../harness/labs/ledger/chaos/chaos.js';
import { type LedgerSchedule, placedSteps } from '../../harness/labs/ledger/chaos/placement.js';
import { chaoslab, survivors } from '../helpers/cli.js';
import { fileTestdir, processesNamingSettled } from '../helpers/fixture.js';

t.setTimeout(600_000);
const dir = fileTestdir(t, import.meta.url, {});
const MUTANT = 'node dist/consumer/ledger/mutants/no-dedupe.js';
/**
 * The first seed whose first schedule sends an EVENT twice on connection 1 among a few steps,
 * as placed, that end no process (found from the model itself, so a change of its weights moves the seed,
 * not the test): no-dedupe applies that EVENT twice, a verdict no timing can change.
 */
const SEED = String(
  Array.from({ length: 50_000 }, (_, i) => i + 1).find((seed) => {
    const [s] = fc.sample(ledgerChaos.schedules(), { seed, numRuns: 1 }) as LedgerSchedule[];
    if (s?.kind !== 'stream' || s.count > 40 || s.steps.length < 3 || s.steps.length > 4) return false;
    const benign = new Set(['latency', 'slicer', 'bandwidth', 'duplicate']);
    const placed = placedSteps(s, { sealed: true });
    return placed.some((x) => x.layer === 'duplicate' && x.connection === 1) && placed.every((x) => benign.has(x.layer));
  }) ??
    (() => {
      throw new Error('no seed in 1..50000 draws such a schedule first: the ledger chaos model changed; loosen the search above');
    })(),
);
const DUPLICATED = (() => {
  const [s] = fc.sample(ledgerChaos.schedules(), { seed: Number(SEED), numRuns: 1 }) as LedgerSchedule[];
  return ledgerChaos.steps(s!, { sealed: true }).find((w) => /sent twice on connection 1/.test(w))!;
})();

/** The one chaos folder under `out`. */
const chaosDir = (out: string): string => {
  const dirs = readdirSync(out).filter((d) => d !== 'latest');
  if (dirs.length !== 1) throw new Error(`expected one chaos folder in ${out}, found ${dirs.join(', ')}`);
  return join(out, dirs[0]!);
};

/** A scenario file without the lines that name it: what the schedule itself made. */
const body = (file: string): Record<string, unknown> => {
  const { name, description, chaos, ...rest } = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return rest;
};

const leftBehind = async (folder: string): Promise<string[]> => [
  ...(await processesNamingSettled(folder)),
  ...readdirSync(folder, { recursive: true })
    .map(String)
    .filter((p) => p.endsWith('journal.jsonl'))
    .flatMap((p) => survivors(readJournal(join(folder, p)))),
];

t.test('a mutant found, confirmed, shrunk and written as a repro that replays', async (t) => {
  const out = join(dir, 'found');
  const r = await chaoslab(['chaos', '--seed', SEED, '--runs', '3', '--shrink-runs', '12', '--consumer', MUTANT, '--out', out]);
  t.equal(r.exitCode, 1, `a confirmed failure exits 1\n${r.stdout}\n${r.stderr}`);
  t.match(r.stdout.split('\n')[0], `chaoslab chaos: seed ${SEED} (--seed ${SEED} draws the same schedules) · ledger lab`, 'the seed comes first');
  t.match(r.stdout, `[1/3] FAIL`);
  t.match(r.stdout, DUPLICATED);
  t.match(r.stdout, /confirmed \(failed twice\); shrinking, at most 12 runs/);
  const folder = chaosDir(out);
  const chaos = JSON.parse(readFileSync(join(folder, 'chaos.json'), 'utf8'));
  t.equal(chaos.seed, Number(SEED));
  t.equal(chaos.stoppedBy, 'failure', 'stops at the first confirmed failure');
  t.equal(chaos.failures.length, 1);
  const [failure] = chaos.failures;
  t.same(
    failure.found.map((f: { status: string }) => f.status),
    ['fail', 'fail'],
    'found and confirmed',
  );
  t.same(
    failure.smallest.map((f: { status: string }) => f.status),
    ['fail', 'fail', 'fail', 'fail'],
    'the smallest schedule failed twice too, and both its steadiness runs',
  );
  t.equal(failure.failedRuns, 4);
  t.equal(failure.steadyRuns, 2);
  t.ok(failure.shrinkRuns <= 12, `at most 12 shrink runs (${failure.shrinkRuns})`);
  t.ok(
    failure.steps.length >= 1 && failure.steps.length < failure.originalSteps.length,
    `shrunk: ${failure.originalSteps.length} → ${failure.steps.length} steps`,
  );
  t.ok(
    failure.steps.some((s: string) => /sent twice on connection 1/.test(s)),
    'the duplicate is the step that stays',
  );
  t.match(failure.smallest[0].headline, /total .* while the ledger's deltas sum to|applied twice/);

  const repro = join(folder, 'repro.yaml');
  const text = readFileSync(repro, 'utf8');
  t.match(
    text,
    new RegExp(
      `^# chaoslab chaos repro \\(ledger lab\\): a schedule shrunk from ${failure.originalSteps.length} fault steps to ${failure.steps.length} fault steps? in ${failure.shrinkRuns} shrink runs, which failed 4 of 4 runs\\.`,
    ),
  );
  t.match(text, `# Seed ${SEED}, path ${failure.path} (fast-check)`);
  t.same(parse(text).chaos, { consumer: MUTANT, seed: Number(SEED), path: failure.path }, 'the repro names its consumer, seed and path');
  t.same(body(repro), body(join(folder, failure.smallest[0].scenario)), 'the repro is the smallest schedule that ran');

  const summary = readFileSync(join(folder, 'summary.md'), 'utf8');
  t.match(summary, /## Confirmed failures \(1\)/);
  t.match(summary, /repro: .*repro\.yaml/);
  t.match(readFileSync(join(folder, 'index.html'), 'utf8'), /<h2>Confirmed failures \(1\)<\/h2>/);
  t.ok(readFileSync(join(folder, 'results.json'), 'utf8').includes('"sections"'), 'results.json keeps what the overview says first');

  // Replayed by chaoslab run: with the consumer it names, and against both references.
  const replay = (consumer?: string) => chaoslab(['run', repro, '-q', '--out', join(dir, 'replays'), ...(consumer ? ['--consumer', consumer] : [])]);
  const again = await replay();
  t.equal(again.exitCode, 1, `the repro fails the mutant it names\n${again.stdout}`);
  t.match(again.stdout, /FAIL\s+repro/);
  for (const ref of ['node dist/consumer/ledger/typescript/client.js', 'python3 consumer/ledger/python/client.py']) {
    const pass = await replay(ref);
    t.equal(pass.exitCode, 0, `the repro passes ${ref}\n${pass.stdout}`);
  }

  // The seed and path the repro names draw the shrunk schedule again.
  const byPath = join(dir, 'path');
  const p = await chaoslab(['chaos', '--seed', SEED, '--path', failure.path, '--consumer', MUTANT, '--out', byPath]);
  t.equal(p.exitCode, 1, `${p.stdout}\n${p.stderr}`);
  t.same(body(join(chaosDir(byPath), 'schedules', 'schedule.yaml')), body(repro), 'seed and path draw the same schedule');
  t.same(await leftBehind(dir), [], 'no process left');
});

t.test('the same seed draws the same schedules; a reference passes them', async (t) => {
  const runs = [];
  for (const name of ['a', 'b']) {
    const out = join(dir, `same-${name}`);
    runs.push({ r: await chaoslab(['chaos', '--seed', SEED, '--runs', '2', '--out', out]), folder: chaosDir(out) });
  }
  for (const { r } of runs) t.equal(r.exitCode, 0, `the TypeScript reference passes\n${r.stdout}\n${r.stderr}`);
  for (const n of [1, 2])
    t.same(body(join(runs[0]!.folder, 'schedules', `run-${n}.yaml`)), body(join(runs[1]!.folder, 'schedules', `run-${n}.yaml`)), `run ${n}: the same schedule`);
  t.same(
    body(join(runs[0]!.folder, 'schedules', 'run-1.yaml')),
    body(join(chaosDir(join(dir, 'found')), 'schedules', 'run-1.yaml')),
    'and the same as the mutant got',
  );
  t.match(runs[0]!.r.stdout, /no failure found \(2 schedules tried\)/);
  t.same(await leftBehind(dir), []);
});
