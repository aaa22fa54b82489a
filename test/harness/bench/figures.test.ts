// make bench's table: medians, ratios against the floor, goals met or missed, and the renderings
// (no timing here: the figures are made up).
import t from 'tap';
import {
  type Figure,
  goalMet,
  goalText,
  markOf,
  NOTES_MARKER,
  percentile,
  ratioOf,
  renderMarkdown,
  renderTable,
  showSummary,
  summarize,
  withFloorVerdict,
  withNotes,
  withRoundsNote,
} from '../../../harness/bench/figures.js';
import { Command } from 'commander';
import { benchArgs, register, runNode } from '../../../harness/commands/bench.js';

const s = (...samples: number[]) => summarize(samples);

t.test('summarize: median, min, max, count', async (t) => {
  t.same(summarize([3, 1, 2]), { median: 2, min: 1, max: 3, n: 3, samples: [3, 1, 2] }, 'the samples kept in the order measured');
  t.same(summarize([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, n: 4, samples: [4, 1, 3, 2] });
  t.same(summarize([7]), { median: 7, min: 7, max: 7, n: 1, samples: [7] });
  t.throws(() => summarize([]), /no samples/);
});

t.test('ratio and goals', async (t) => {
  const overhead: Figure = {
    section: '1',
    name: 'ack-crash',
    unit: 's',
    value: s(1.0, 1.2, 0.9),
    floor: { name: 'floor', value: s(0.25, 0.2, 0.3) },
    goals: [
      { kind: 'ratio-max', limit: 2 },
      { kind: 'max', limit: 0.5 },
    ],
  };
  t.equal(ratioOf(overhead), 4);
  t.equal(goalMet(overhead), false, 'missed');
  t.equal(markOf(overhead), 'MISSED');
  t.equal(goalText(overhead), '≤ 2× floor, ≤ 0.5 s');
  const fast = { ...overhead, value: s(0.4) };
  t.equal(goalMet(fast), true, '1.6× and 0.4 s: met');
  t.equal(markOf(fast), 'met');
  const between = { ...overhead, value: s(0.55), floor: { name: 'floor', value: s(0.3) } };
  t.equal(goalMet(between), false, '1.83× but 0.55 s: missed');
  t.equal(markOf(between), '≤ 2× floor: met; ≤ 0.5 s: MISSED', 'each goal, where they disagree');

  const startup: Figure = {
    section: '2',
    name: 'list',
    unit: 's',
    value: s(0.2),
    floor: { name: 'node -e 0', value: s(0.09) },
    goals: [{ kind: 'diff-max', limit: 0.15 }],
  };
  t.equal(goalMet(startup), true, '0.11 s over bare node');
  t.equal(goalMet({ ...startup, value: s(0.3) }), false, '0.21 s over');
  t.equal(goalMet({ ...startup, floor: undefined }), undefined, 'no floor: nothing to judge');
  t.equal(goalText(startup), '≤ floor + 0.15 s');

  const rate: Figure = {
    section: '4',
    name: 'direct',
    unit: 'events/s',
    value: s(900),
    floor: { name: 'loop', value: s(1000) },
    goals: [{ kind: 'ratio-min', limit: 0.9 }],
  };
  t.equal(goalMet(rate), true);
  t.equal(goalMet({ ...rate, value: s(800) }), false);
  t.equal(goalText(rate), '≥ 90 % of floor');
  t.equal(goalMet({ ...rate, floor: { name: 'zero', value: s(0) } }), undefined, 'a zero floor has no ratio');
  t.equal(goalMet({ ...overhead, goals: [{ kind: 'ratio-max', limit: 2 }], floor: undefined }), undefined);

  const skipped: Figure = { section: '3', name: 'catalogue', unit: 's', goals: [{ kind: 'max', limit: 60 }], note: 'skipped' };
  t.equal(ratioOf(skipped), undefined);
  t.equal(goalMet(skipped), undefined, 'skipped: neither met nor missed');
  t.equal(markOf(skipped), '');
  t.equal(goalMet({ ...rate, goals: undefined }), undefined, 'no goal');
});

t.test("withRoundsNote: a ratio goal whose rounds' own ratios lie on both sides of its limit says so", async (t) => {
  // §4 on a 2 × EPYC, 2026-12-07 18:53Z: via Toxiproxy against direct, five rounds.
  const proxied: Figure = {
    section: '4 throughput',
    name: 'via Toxiproxy vs direct',
    unit: 'events/s',
    value: s(440, 433, 456, 269, 370),
    floor: { name: 'direct', value: s(419, 457, 466, 482, 231) },
    goals: [{ kind: 'ratio-min', limit: 0.95 }],
    note: 'Toxiproxy alone allows 0.96',
  };
  const noted = withRoundsNote(proxied);
  t.equal(
    noted.note,
    'Toxiproxy alone allows 0.96; round by round its ratio spans 0.56–1.60, on both sides of ≥ 95 % of floor: one bench here does not settle it',
  );
  t.equal(markOf(noted), markOf(proxied), 'the mark stays what the medians make it');
  t.equal(
    withRoundsNote({ ...proxied, note: undefined }).note,
    'round by round its ratio spans 0.56–1.60, on both sides of ≥ 95 % of floor: one bench here does not settle it',
  );
  // Rounds that agree, whichever side: nothing added.
  const steady = { ...proxied, value: s(400, 410, 420), floor: { name: 'direct', value: s(500, 505, 510) } };
  t.same(withRoundsNote(steady), steady, 'every round under the limit: missed, and nothing to add');
  const over = { ...steady, value: s(500, 510, 520), floor: { name: 'direct', value: s(500, 505, 510) } };
  t.same(withRoundsNote(over), over, 'every round over it: met, and nothing to add');
  // §1's ratio-max goal, the same way.
  const run: Figure = {
    ...proxied,
    unit: 's',
    value: s(0.9, 1.05, 0.95),
    floor: { name: 'consumers', value: s(0.5, 0.5, 0.45) },
    goals: [{ kind: 'ratio-max', limit: 2 }],
    note: undefined,
  };
  t.equal(withRoundsNote(run).note, 'round by round its ratio spans 1.80–2.11, on both sides of ≤ 2× floor: one bench here does not settle it');
  // Nothing to pair: unequal counts (a run left out of one side), fewer than three rounds, a max goal.
  const unpaired = { ...proxied, value: s(440, 433, 456, 269) };
  t.same(withRoundsNote(unpaired), unpaired, 'a sample left out of one side: rounds no longer line up');
  const two = { ...proxied, value: s(440, 269), floor: { name: 'direct', value: s(419, 482) } };
  t.same(withRoundsNote(two), two, 'two rounds say nothing about noise');
  const timeGoal = { ...proxied, goals: [{ kind: 'max' as const, limit: 1 }] };
  t.same(withRoundsNote(timeGoal), timeGoal, 'only ratio goals are judged round by round');
});

t.test('withFloorVerdict: a max goal that the floor alone is over cannot be met on this machine', async (t) => {
  const check: Figure = {
    section: '6',
    name: 'checker',
    unit: 's',
    value: s(1.28, 1.3, 1.27),
    floor: { name: 'reading both stores', value: s(1.27, 1.25, 1.3) },
    goals: [{ kind: 'max', limit: 1 }],
    note: 'measured',
  };
  t.equal(withFloorVerdict(check).note, 'measured; ≤ 1 s cannot be met on this machine: its floor alone takes 1.27 s');
  t.equal(markOf(withFloorVerdict(check)), 'MISSED', 'still missed: the note says why');
  t.equal(withFloorVerdict({ ...check, note: undefined }).note, '≤ 1 s cannot be met on this machine: its floor alone takes 1.27 s');
  const reachable = { ...check, floor: { name: 'reading both stores', value: s(0.7) } };
  t.same(withFloorVerdict(reachable), reachable, 'a floor under the goal: nothing added, missed or not');
  t.same(withFloorVerdict({ ...check, floor: undefined }), { ...check, floor: undefined }, 'no floor: nothing to say');
  const ratioGoal = { ...check, goals: [{ kind: 'ratio-max' as const, limit: 1 }] };
  t.same(withFloorVerdict(ratioGoal), ratioGoal, 'only a max goal is bounded by the floor itself');
});

t.test('showSummary', async (t) => {
  t.equal(showSummary(s(0.5123, 0.49, 0.6), 's'), '0.512 s (0.490–0.600, n=3)');
  t.equal(showSummary(s(570, 12.34, 1500), 'events/s'), '570 events/s (12.3–1500, n=3)');
  t.equal(showSummary(s(3.25), 'MiB'), '3.25 MiB (3.25–3.25, n=1)');
  t.equal(showSummary(undefined, 's'), '—');
});

const figures: Figure[] = [
  {
    section: '2 CLI start-up',
    name: 'chaoslab list',
    unit: 's',
    value: s(0.2),
    floor: { name: 'node -e 0', value: s(0.1) },
    goals: [{ kind: 'diff-max', limit: 0.15 }],
  },
  { section: '3 catalogue', name: 'ledger | jobs 2', unit: 's', goals: [{ kind: 'max', limit: 60 }], note: 'skipped (BENCH_QUICK=1)' },
];

t.test('renderTable: a header and one aligned row per figure', async (t) => {
  const lines = renderTable(figures).trimEnd().split('\n');
  t.equal(lines.length, 3);
  t.match(lines[0], /^§ +figure +median \(min–max\) +floor +ratio +goal +goal met +note$/);
  t.match(lines[1], /chaoslab list +0\.200 s \(0\.200–0\.200, n=1\) +node -e 0: 0\.100 s .* 2\.00× +≤ floor \+ 0\.15 s +met/);
  t.match(lines[2], /skipped \(BENCH_QUICK=1\)$/);
  t.equal(lines[1]!.indexOf('0.200 s'), lines[0]!.indexOf('median'), 'columns line up');
});

t.test('renderMarkdown: machine, versions and the table', async (t) => {
  const md = renderMarkdown({
    date: '2026-12-01T06:00:00.000Z',
    machine: { cpus: 2, cpuModel: 'Test CPU', memoryGiB: 4, platform: 'linux-x64', load: [1, 2, 3] },
    versions: { node: 'v20.0.0', python3: '3.11.2' },
    quick: true,
    figures,
  });
  t.match(md, /^# Benchmarks\n/);
  t.notMatch(md, /Not a default run/);
  t.match(md, /with BENCH_QUICK=1/);
  t.match(md, /Machine: 2 × Test CPU, 4 GiB, linux-x64; load average at the start 1\.00 2\.00 3\.00\./);
  t.match(md, /Versions: node v20\.0\.0, python3 3\.11\.2\./);
  t.match(md, /\| 3 catalogue \| ledger \\\| jobs 2 \| — \|/, 'a | inside a cell is escaped');
  t.match(md, /\| 2 CLI start-up \| chaoslab list \| .* \| 2\.00× \| ≤ floor \+ 0\.15 s \| met \| {2}\|/);
});

t.test('renderMarkdown: a run that departed from the defaults says so', async (t) => {
  const md = renderMarkdown({
    date: 'd',
    machine: { cpus: 1, cpuModel: 'c', memoryGiB: 1, platform: 'p', load: [0, 0, 0] },
    versions: {},
    quick: false,
    settings: 'BENCH_REPS=3',
    figures: [],
  });
  t.match(md, /\*\*Not a default run:\*\* BENCH_REPS=3\./);
});

t.test('withNotes: a new table, the notes written by hand below the marker kept', async (t) => {
  const first = withNotes('# Benchmarks\n\n| table 1 |\n', undefined);
  t.equal(first, `# Benchmarks\n\n| table 1 |\n\n${NOTES_MARKER}\n`, 'no earlier file: the marker, nothing below it');
  const edited = `${first}\n## What the rows mean\n\nWritten by hand.\n`;
  const second = withNotes('# Benchmarks\n\n| table 2 |\n', edited);
  t.equal(second, `# Benchmarks\n\n| table 2 |\n\n${NOTES_MARKER}\n\n## What the rows mean\n\nWritten by hand.\n`);
  t.equal(withNotes('# B\n', second), `# B\n\n${NOTES_MARKER}\n\n## What the rows mean\n\nWritten by hand.\n`, 'kept again, once');
  t.equal(withNotes('# B\n', '# an old file without the marker\n'), `# B\n\n${NOTES_MARKER}\n`, 'an old file without the marker: nothing kept');
});

t.test('chaoslab bench: the script and its flags, run with this node', async (t) => {
  t.same(benchArgs('/r', {}), ['/r/bench/bench.mjs']);
  t.same(benchArgs('/r', { quick: true, full: true }), ['/r/bench/bench.mjs', '--quick', '--full']);
  t.equal(await runNode(['-e', 'process.exit(3)']), 3, 'its exit status');
  t.equal(await runNode(['-e', 'process.kill(process.pid, "SIGKILL")']), 2, 'killed: 2');
});

t.test('chaoslab bench is a command with --quick and --full', async (t) => {
  const program = new Command('chaoslab');
  register(program);
  const bench = program.commands.find((c) => c.name() === 'bench');
  t.ok(bench, 'registered');
  t.same(
    bench!.options.map((o) => o.long),
    ['--quick', '--full'],
  );
});

t.test('percentile: nearest rank over sorted samples', async (t) => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  t.equal(percentile(hundred, 99), 99);
  t.equal(percentile(hundred, 50), 50);
  t.equal(percentile(hundred, 100), 100);
  t.equal(percentile([5, 7], 50), 5, 'the smallest sample with half at or below it');
  t.equal(percentile([5, 7], 51), 7);
  t.equal(percentile(Float64Array.from([1, 2, 3]), 99), 3, 'typed arrays too');
  t.equal(percentile([], 99), undefined, 'no samples: nothing');
  t.throws(() => percentile([1], 0), /p must be in \(0, 100\]/);
  t.throws(() => percentile([1], 101), /p must be in/);
  t.equal(showSummary(s(12.5), 'ms'), '12.5 ms (12.5–12.5, n=1)', 'lags are in ms');
});
