import path from 'node:path';
import t, { type Test } from 'tap';
import { parseFaultPlan } from '../../../harness/labs/ledger/scenario/fault-plan.js';
import { defaultExpectExit, type LedgerPlan } from '../../../harness/labs/ledger/scenario/load.js';
import { listScenarios, resolveScenario, UnknownScenarioError } from '../../../harness/catalogue/catalogue.js';
import { generateDeltas, mulberry32 } from '../../../harness/scenario/generate.js';
import { loadScenario as loadAny, type Scenario, ScenarioError, type ScenarioProblem } from '../../../harness/catalogue/load.js';

/** A ledger scenario (every file these tests write speaks the default lab). */
const loadScenario = (file: string): Scenario<LedgerPlan> => loadAny(file) as Scenario<LedgerPlan>;

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CATALOGUE = path.join(ROOT, 'scenarios');
const SCENARIOS = path.join(CATALOGUE, 'ledger');

/** Loads `file` expecting a ScenarioError; returns its problems. */
function problemsOf(t: Test, file: string): ScenarioProblem[] {
  try {
    loadScenario(file);
  } catch (error) {
    if (error instanceof ScenarioError) {
      // Every problem is one line of the message, in the documented shape.
      const lines = error.message.split('\n');
      t.equal(lines.length, error.problems.length, 'one message line per problem');
      for (const [i, p] of error.problems.entries()) {
        t.equal(lines[i], `${p.file}:${p.line}:${p.column}: ${p.field ? `${p.field}: ` : ''}${p.message}`);
      }
      return error.problems;
    }
    throw error;
  }
  t.fail(`${file} loaded, but it should not have`);
  return [];
}

interface Want {
  line: number;
  column?: number;
  field: string;
  message: RegExp;
}

/** Writes one bad scenario file named `<name>.yaml` and checks the exact problems reported. */
function bad(t: Test, name: string, text: string, want: Want[]): ScenarioProblem[] {
  const dir = t.testdir({ [`${name}.yaml`]: text });
  const file = path.join(dir, `${name}.yaml`);
  const problems = problemsOf(t, file);
  t.equal(problems.length, want.length, `${want.length} problem(s): ${JSON.stringify(problems, null, 1)}`);
  for (const [i, w] of want.entries()) {
    const p = problems[i];
    if (!p) continue;
    t.equal(path.resolve(p.file), file, 'names the file');
    t.equal(p.line, w.line, `line of ${w.field || '(file)'}`);
    if (w.column !== undefined) t.equal(p.column, w.column, `column of ${w.field || '(file)'}`);
    t.equal(p.field, w.field, 'names the field');
    t.match(p.message, w.message);
  }
  return problems;
}

const OK_HEAD = 'description: x\nevents:\n  deltas: [7, 5, -3]\n';

t.test('the shipped scenarios load', async (t) => {
  const ack = loadScenario(path.join(SCENARIOS, 'ack-crash.yaml'));
  t.equal(ack.name, 'ack-crash');
  t.equal(ack.file, path.join(SCENARIOS, 'ack-crash.yaml'));
  t.match(ack.source, /exit@ack:1/);
  t.match(ack.description, /crash/);
  t.same(ack.lab.events, [
    { seq: 0, delta: 7 },
    { seq: 1, delta: 5 },
    { seq: 2, delta: -3 },
  ]);
  t.same(ack.lab.eventSource, { kind: 'explicit' });
  t.same(ack.lab.publisher, {
    window: 1,
    retentionStart: 0,
    redeliverUnacked: true,
    ackDeadlineMs: 5000,
    forgetAcked: false,
    retentionMoves: [],
    misbehaviour: [],
  });
  t.same(ack.lab.consumer.incarnations, [{ fault: 'exit@ack:1', expectExit: 'nonzero' }, { expectExit: 'zero' }]);
  t.same(ack.lab.expect.transcript, [
    { incarnation: 1, resume: -1, acks: [0] },
    { incarnation: 2, resume: 1, acks: [1, 2] },
  ]);

  const happy = loadScenario(path.join(SCENARIOS, 'happy-path.yaml'));
  t.equal(happy.name, 'happy-path');
  t.equal(happy.lab.events.length, 200);
  t.same(happy.lab.eventSource, { kind: 'generated', count: 200, seed: 1, min: -1000, max: 1000 });
  t.same(happy.lab.events.slice(0, 3), [
    { seq: 0, delta: -891 },
    { seq: 1, delta: 962 },
    { seq: 2, delta: 670 },
  ]);
  t.same(happy.lab.consumer.incarnations, [{ expectExit: 'zero' }]);
  t.same(happy.lab.expect.transcript, [{ incarnation: 1, resume: -1 }], 'acks left out stay absent');
  t.notOk('acks' in (happy.lab.expect.transcript?.[0] ?? {}));

  const listed = listScenarios(CATALOGUE);
  for (const name of ['ack-crash', 'happy-path']) {
    const entry = listed.find((s) => s.name === name);
    t.ok(entry, `${name} is listed`);
    t.equal(entry?.file, path.join(SCENARIOS, `${name}.yaml`));
    t.ok(entry?.description);
  }
});

t.test('defaults are filled', async (t) => {
  const dir = t.testdir({ 'minimal.yaml': `name: minimal\n${OK_HEAD}` });
  const s = loadScenario(path.join(dir, 'minimal.yaml'));
  t.same(
    { ...s, file: undefined, source: undefined },
    {
      file: undefined,
      source: undefined,
      name: 'minimal',
      description: 'x',
      protocol: 'ledger',
      timeoutMs: 2000,
      deadlineMs: 60000,
      timeScale: 1,
      faults: [],
      lab: {
        events: [
          { seq: 0, delta: 7 },
          { seq: 1, delta: 5 },
          { seq: 2, delta: -3 },
        ],
        eventSource: { kind: 'explicit' },
        publisher: { window: 16, retentionStart: 0, redeliverUnacked: false, ackDeadlineMs: 5000, forgetAcked: false, retentionMoves: [], misbehaviour: [] },
        consumer: { incarnations: [{ expectExit: 'zero' }] },
        expect: {},
      },
    },
  );
  t.notOk('fault' in (s.lab.consumer.incarnations[0] ?? {}), 'no fault key when there is no fault');

  const full = t.testdir({
    'full.yaml': [
      'name: full',
      'description: >-',
      '  Every field given.',
      'protocol: ledger',
      'timeout_ms: 50',
      'deadline_ms: 3600000',
      'events:',
      '  generate: { count: 100000, seed: 4294967295, min: -2, max: 2 }',
      'publisher:',
      '  window: 1024',
      '  retention_start: 99999',
      '  redeliver_unacked: true',
      '  ack_deadline_ms: 600000',
      'consumer:',
      '  incarnations:',
      '    - fault: "stop@apply:0"',
      '    - fault: "raise@apply:3"',
      '    - fault: "stop@ack:5,exit@apply:99999"',
      '    - fault: "raise@ack:7"',
      '      expect_exit: any',
      '    - {}',
      'expect:',
      '  transcript:',
      '    - { incarnation: 2, resume: -1, acks: [] }',
      '    - { incarnation: 5, resume: 99999 }',
      '',
    ].join('\n'),
  });
  const f = loadScenario(path.join(full, 'full.yaml'));
  t.equal(f.timeoutMs, 50);
  t.equal(f.deadlineMs, 3_600_000);
  t.equal(f.lab.events.length, 100_000);
  t.ok(f.lab.events.every((e, i) => e.seq === i && e.delta >= -2 && e.delta <= 2));
  t.same(f.lab.eventSource, { kind: 'generated', count: 100000, seed: 4294967295, min: -2, max: 2 });
  t.same(f.lab.publisher, {
    window: 1024,
    retentionStart: 99999,
    redeliverUnacked: true,
    ackDeadlineMs: 600000,
    forgetAcked: false,
    retentionMoves: [],
    misbehaviour: [],
  });
  t.same(
    f.lab.consumer.incarnations.map((i) => i.expectExit),
    ['any', 'nonzero', 'nonzero', 'any', 'zero'],
    'expect_exit: any without exit/raise, nonzero with one, an explicit value wins, zero for the last',
  );
  t.same(f.lab.expect.transcript, [
    { incarnation: 2, resume: -1, acks: [] },
    { incarnation: 5, resume: 99999 },
  ]);

  t.equal(defaultExpectExit('exit@ack:1', true), 'nonzero', 'an exit/raise fault wins over "last"');
  t.equal(defaultExpectExit('stop@ack:1', true), 'zero');
  t.equal(defaultExpectExit(undefined, false), 'any');
});

t.test('generator', async (t) => {
  // Reference: the canonical mulberry32 snippet, verbatim (returns floats in [0, 1)).
  function canonical(a: number): () => number {
    return () => {
      let t = (a += 0x6d2b79f5);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  for (const seed of [0, 1, 42, 0xffffffff]) {
    const ours = mulberry32(seed);
    const ref = canonical(seed);
    const a = Array.from({ length: 1000 }, () => ours());
    const b = Array.from({ length: 1000 }, () => ref() * 4294967296);
    t.same(a, b, `mulberry32(${seed}) matches the canonical implementation`);
  }

  // Pinned values: if these change, every generated scenario changed.
  const m0 = mulberry32(0);
  t.same([m0(), m0(), m0()], [1144304738, 1416247, 958946056], 'mulberry32(0) first outputs');
  t.same(generateDeltas({ count: 10, seed: 42, min: -1000, max: 1000 }), [-259, 75, -37, -719, -244, 464, -159, -101, 647, -481]);
  t.same(generateDeltas({ count: 10, seed: 1, min: -1000, max: 1000 }), [-891, 962, 670, -917, -133, -11, 461, 210, -951, -281]);
  t.same(generateDeltas({ count: 10, seed: 7, min: -3, max: 3 }), [0, -2, 2, 2, -2, 3, -2, -2, -2, 1]);

  t.same(
    generateDeltas({ count: 500, seed: 9, min: -1000, max: 1000 }),
    generateDeltas({ count: 500, seed: 9, min: -1000, max: 1000 }),
    'same seed, same script',
  );
  t.notSame(generateDeltas({ count: 50, seed: 9, min: -1000, max: 1000 }), generateDeltas({ count: 50, seed: 10, min: -1000, max: 1000 }));
  t.same(
    generateDeltas({ count: 20, seed: 5, min: -1000, max: 1000 }),
    generateDeltas({ count: 100, seed: 5, min: -1000, max: 1000 }).slice(0, 20),
    'a longer script extends a shorter one',
  );

  for (const [min, max] of [
    [-1000, 1000],
    [-3, 3],
    [0, 0],
    [5, 6],
    [-1000, -999],
  ] as const) {
    const deltas = generateDeltas({ count: 20_000, seed: 123, min, max });
    t.ok(
      deltas.every((d) => Number.isInteger(d) && d >= min && d <= max),
      `all in [${min}, ${max}]`,
    );
    t.equal(Math.min(...deltas), min, `reaches ${min}`);
    t.equal(Math.max(...deltas), max, `reaches ${max}`);
  }
  // Rough uniformity: 7 buckets of 70 000 draws, each within 3% of the mean.
  const counts = new Map<number, number>();
  for (const d of generateDeltas({ count: 70_000, seed: 77, min: -3, max: 3 })) counts.set(d, (counts.get(d) ?? 0) + 1);
  t.equal(counts.size, 7);
  for (const [d, n] of counts) t.ok(Math.abs(n - 10_000) < 300, `bucket ${d}: ${n}`);

  t.throws(() => generateDeltas({ count: 1, seed: 1, min: 2, max: 1 }), RangeError);
  t.throws(() => generateDeltas({ count: 1, seed: -1, min: 0, max: 1 }), RangeError);
});

t.test('fault plans', async (t) => {
  t.same(parseFaultPlan('exit@ack:1'), { ok: true, steps: [{ action: 'exit', point: 'ack', seq: 1 }] });
  t.same(parseFaultPlan('stop@apply:0,raise@ack:12'), {
    ok: true,
    steps: [
      { action: 'stop', point: 'apply', seq: 0 },
      { action: 'raise', point: 'ack', seq: 12 },
    ],
  });
  for (const plan of [
    '',
    'exit@ack',
    'exit@ack:1,',
    ',exit@ack:1',
    'exit@ack:1 ',
    ' exit@ack:1',
    'exit @ack:1',
    'EXIT@ack:1',
    'exit@ACK:1',
    'exit@ack:-1',
    'exit@ack:+1',
    'exit@ack:01',
    'exit@ack:1.0',
    'exit@commit:1',
    'kill@ack:1',
    'exit@ack:1;raise@ack:2',
    'exit@ack:1\n',
  ]) {
    const r = parseFaultPlan(plan);
    t.equal(r.ok, false, `${JSON.stringify(plan)} is rejected`);
  }
});

t.test('bad files: file, line and field', async (t) => {
  t.test('YAML syntax error', async (t) => {
    bad(t, 'syntax', 'name: syntax\ndescription: x\nevents:\n  deltas: [1, 2\npublisher: {}\n', [
      { line: 5, column: 1, field: '', message: /^YAML: .*Flow sequence/ },
    ]);
    bad(t, 'tabs', 'name: tabs\ndescription: x\nevents:\n\tdeltas: [1]\n', [{ line: 4, column: 1, field: '', message: /^YAML: Tabs/ }]);
    bad(t, 'two-docs', `name: two-docs\n${OK_HEAD}---\nname: b\n`, [{ line: 5, field: '', message: /multiple documents/ }]);
  });

  t.test('unknown key (typo)', async (t) => {
    bad(t, 'typo', `name: typo\n${OK_HEAD}timeout_msec: 100\npublisher:\n  windw: 3\nconsumer:\n  incarnations:\n    - { falt: "exit@ack:1" }\n`, [
      { line: 5, column: 1, field: 'timeout_msec', message: /^unknown key \(did you mean "timeout_ms"\?\); allowed here: name, description, / },
      { line: 7, column: 3, field: 'publisher.windw', message: /did you mean "window"/ },
      { line: 10, column: 9, field: 'consumer.incarnations[0].falt', message: /did you mean "fault"/ },
    ]);
    bad(
      t,
      'typo-deep',
      `name: typo-deep\ndescription: x\nevents:\n  generate: { count: 3, seed: 1, maxx: 3 }\nexpect:\n  transcript:\n    - incarnation: 1\n      resume: -1\n      ack: [0]\n`,
      [
        { line: 4, column: 34, field: 'events.generate.maxx', message: /did you mean "max"/ },
        { line: 9, column: 7, field: 'expect.transcript[0].ack', message: /did you mean "acks"/ },
      ],
    );
  });

  t.test('wrong type', async (t) => {
    bad(
      t,
      'types',
      `name: types\ndescription: x\ntimeout_ms: 2000ms\nevents:\n  deltas: [1, "two", 1.5]\npublisher:\n  redeliver_unacked: yes\nconsumer:\n  incarnations: {}\n`,
      [
        { line: 3, column: 13, field: 'timeout_ms', message: /^must be an integer \(got "2000ms"\)$/ },
        { line: 5, column: 15, field: 'events.deltas[1]', message: /^must be an integer \(got "two"\)$/ },
        { line: 5, column: 22, field: 'events.deltas[2]', message: /^must be an integer \(got 1.5\)$/ },
        { line: 7, column: 22, field: 'publisher.redeliver_unacked', message: /^must be true or false \(got "yes"\)$/ },
        { line: 9, column: 17, field: 'consumer.incarnations', message: /^must be a list \(got a mapping\)$/ },
      ],
    );
    bad(t, 'null-events', 'name: null-events\ndescription: x\nevents:\n', [
      { line: 3, column: 1, field: 'events', message: /^must be a mapping \(got nothing\)$/ },
    ]);
    bad(t, 'root-list', '- name: x\n', [{ line: 1, column: 1, field: '', message: /^must be a mapping \(got a list\)$/ }]);
    bad(t, 'bad-enum', `name: bad-enum\n${OK_HEAD}protocol: chain\nconsumer:\n  incarnations:\n    - expect_exit: maybe\n`, [
      { line: 5, column: 11, field: 'protocol', message: /^must be one of "ledger", "feed" \(got "chain"\)$/ },
      { line: 8, column: 20, field: 'consumer.incarnations[0].expect_exit', message: /^must be one of "zero", "nonzero", "any"/ },
    ]);
  });

  t.test('out of range', async (t) => {
    bad(
      t,
      'range',
      `name: range\ndescription: x\ntimeout_ms: 10\ndeadline_ms: 99\nevents:\n  deltas: [1, 1001, -1001]\npublisher:\n  window: 0\n  ack_deadline_ms: 600001\n`,
      [
        { line: 3, column: 13, field: 'timeout_ms', message: /^must be between 50 and 600000 \(got 10\)$/ },
        { line: 4, column: 14, field: 'deadline_ms', message: /between 100 and 3600000/ },
        { line: 6, column: 15, field: 'events.deltas[1]', message: /^must be between -1000 and 1000 \(got 1001\)$/ },
        { line: 6, column: 21, field: 'events.deltas[2]', message: /got -1001/ },
        { line: 8, column: 11, field: 'publisher.window', message: /^must be between 1 and 1024 \(got 0\)$/ },
        { line: 9, column: 20, field: 'publisher.ack_deadline_ms', message: /got 600001/ },
      ],
    );
    bad(t, 'range-gen', 'name: range-gen\ndescription: x\nevents:\n  generate:\n    count: 100001\n    seed: -1\n    min: -1001\n', [
      { line: 5, column: 12, field: 'events.generate.count', message: /between 1 and 100000/ },
      { line: 6, column: 11, field: 'events.generate.seed', message: /between 0 and 4294967295/ },
      { line: 7, column: 10, field: 'events.generate.min', message: /between -1000 and 1000/ },
    ]);
    const long = 'a'.repeat(65);
    bad(t, long, `name: ${long}\n${OK_HEAD}`, [{ line: 1, column: 7, field: 'name', message: /^must be at most 64 characters \(got 65\)$/ }]);
    bad(t, 'no-deltas', 'name: no-deltas\ndescription: x\nevents:\n  deltas: []\n', [
      { line: 4, column: 11, field: 'events.deltas', message: /^must have 1\.\.100000 items \(got 0\)$/ },
    ]);
    bad(t, 'bad-name', 'name: Ack_Crash\ndescription: "  "\nevents:\n  deltas: [1]\n', [
      { line: 1, column: 7, field: 'name', message: /lowercase letters, digits and dashes/ },
      { line: 2, column: 14, field: 'description', message: /^must not be blank$/ },
    ]);
  });

  t.test('bad fault plan', async (t) => {
    const problems = bad(
      t,
      'fault',
      `name: fault\n${OK_HEAD}consumer:\n  incarnations:\n    - fault: "exit@ack"\n    - fault: "exit@ack:1, raise@apply:2"\n    - fault: crash@ack:1\n    - fault: "exit@ack:01"\n    - fault: "exit@ack:1,"\n    - fault: ""\n`,
      [
        {
          line: 7,
          column: 14,
          field: 'consumer.incarnations[0].fault',
          message: /^must look like <action>@<point>:<seq> \(got "exit@ack"\): missing ":<seq>"$/,
        },
        { line: 8, column: 14, field: 'consumer.incarnations[1].fault', message: /no spaces/ },
        { line: 9, column: 14, field: 'consumer.incarnations[2].fault', message: /action must be exit\|raise\|stop \(got "crash"\)/ },
        { line: 10, column: 14, field: 'consumer.incarnations[3].fault', message: /leading zeros/ },
        { line: 11, column: 14, field: 'consumer.incarnations[4].fault', message: /empty item/ },
        { line: 12, column: 14, field: 'consumer.incarnations[5].fault', message: /empty/ },
      ],
    );
    // The brief's example line, verbatim apart from the path.
    const first = problems[0];
    t.ok(
      first &&
        `${first.file}:${first.line}:${first.column}: ${first.field}: ${first.message}`.includes(
          ':7:14: consumer.incarnations[0].fault: must look like <action>@<point>:<seq> (got "exit@ack")',
        ),
    );
  });

  t.test('fault seq beyond the script', async (t) => {
    bad(t, 'fault-seq', `name: fault-seq\n${OK_HEAD}consumer:\n  incarnations:\n    - fault: "exit@ack:2"\n    - fault: "stop@apply:0,raise@apply:3"\n`, [
      {
        line: 8,
        column: 14,
        field: 'consumer.incarnations[1].fault',
        message: /^seq 3 in "raise@apply:3" is beyond the script \(the script has seqs 0\.\.2\)$/,
      },
    ]);
  });

  t.test('retention_start too big', async (t) => {
    bad(t, 'retention', `name: retention\n${OK_HEAD}publisher:\n  retention_start: 3\n`, [
      { line: 6, column: 20, field: 'publisher.retention_start', message: /^must be below the number of events, 3 \(got 3\)$/ },
    ]);
  });

  t.test('transcript incarnations', async (t) => {
    bad(
      t,
      'transcript',
      `name: transcript\n${OK_HEAD}consumer:\n  incarnations: [{}, {}]\nexpect:\n  transcript:\n    - { incarnation: 1, resume: -1 }\n    - { incarnation: 0, resume: -2 }\n    - { incarnation: 1, resume: 3, acks: [0, 3] }\n    - { incarnation: 1, resume: 0 }\n    - { resume: 0 }\n`,
      [
        { line: 10, column: 22, field: 'expect.transcript[1].incarnation', message: /^must be >= 1 \(got 0\)$/ },
        { line: 10, column: 33, field: 'expect.transcript[1].resume', message: /^must be >= -1 \(got -2\)$/ },
        { line: 13, column: 7, field: 'expect.transcript[4].incarnation', message: /^is required$/ },
      ],
    );
    // Semantic checks run once the schema passes.
    bad(
      t,
      'transcript2',
      `name: transcript2\n${OK_HEAD}consumer:\n  incarnations: [{}, {}]\nexpect:\n  transcript:\n    - { incarnation: 3, resume: -1 }\n    - { incarnation: 1, resume: 3, acks: [0, 3] }\n    - { incarnation: 1, resume: 0 }\n`,
      [
        { line: 9, column: 22, field: 'expect.transcript[0].incarnation', message: /^must be between 1 and 2, the number of consumer incarnations \(got 3\)$/ },
        { line: 10, column: 33, field: 'expect.transcript[1].resume', message: /^must be between -1 and 2/ },
        { line: 10, column: 46, field: 'expect.transcript[1].acks[1]', message: /^ACK 3 names no event/ },
        { line: 11, column: 22, field: 'expect.transcript[2].incarnation', message: /already has an entry \(expect\.transcript\[1\]\)/ },
      ],
    );
    // The default is one incarnation.
    bad(t, 'transcript3', `name: transcript3\n${OK_HEAD}expect:\n  transcript: [{ incarnation: 2, resume: -1 }]\n`, [
      { line: 6, column: 31, field: 'expect.transcript[0].incarnation', message: /between 1 and 1/ },
    ]);
  });

  t.test('generate min > max', async (t) => {
    bad(t, 'minmax', 'name: minmax\ndescription: x\nevents:\n  generate: { count: 5, seed: 3, min: 10, max: -10 }\n', [
      { line: 4, column: 39, field: 'events.generate.min', message: /^min must be <= max \(got min 10, max -10\)$/ },
    ]);
    bad(t, 'minmax2', 'name: minmax2\ndescription: x\nevents:\n  generate: { count: 5, seed: 3, max: -1001 }\n', [
      { line: 4, column: 39, field: 'events.generate.max', message: /between -1000 and 1000/ },
    ]);
  });

  t.test('duplicate key', async (t) => {
    bad(t, 'dup', `name: dup\n${OK_HEAD}publisher:\n  window: 3\n  window: 4\n`, [
      { line: 7, column: 3, field: 'publisher.window', message: /^duplicate key/ },
    ]);
    bad(t, 'dup-top', `name: dup-top\n${OK_HEAD}name: dup-top\n`, [{ line: 5, column: 1, field: 'name', message: /^duplicate key/ }]);
  });

  t.test('both or neither of deltas/generate', async (t) => {
    bad(t, 'both', 'name: both\ndescription: x\nevents:\n  deltas: [1]\n  generate: { count: 1, seed: 1 }\n', [
      { line: 3, column: 1, field: 'events', message: /^must have exactly one of "deltas" or "generate" \(got "deltas" and "generate"\)$/ },
    ]);
    bad(t, 'neither', 'name: neither\ndescription: x\nevents: {}\n', [{ line: 3, column: 1, field: 'events', message: /\(got neither\)$/ }]);
  });

  t.test('missing required keys', async (t) => {
    bad(t, 'missing', 'events:\n  generate: { seed: 1 }\n', [
      { line: 1, column: 1, field: 'name', message: /^is required$/ },
      { line: 1, column: 1, field: 'description', message: /^is required$/ },
      { line: 2, column: 3, field: 'events.generate.count', message: /^is required$/ },
    ]);
  });

  t.test('empty file', async (t) => {
    bad(t, 'empty', '', [{ line: 1, column: 1, field: '', message: /^the file is empty/ }]);
    bad(t, 'comments', '# nothing yet\n\n', [{ line: 1, column: 1, field: '', message: /^the file is empty/ }]);
  });

  t.test('name must match the file name', async (t) => {
    bad(t, 'copied', `name: ack-crash\n${OK_HEAD}`, [{ line: 1, column: 7, field: 'name', message: /^must equal the file name "copied"/ }]);
  });

  t.test('missing file', async (t) => {
    const dir = t.testdir({});
    const problems = problemsOf(t, path.join(dir, 'nope.yaml'));
    t.match(problems, [{ line: 1, column: 1, field: '', message: /no such file/ }]);
  });

  t.test('file paths are shown relative to the working directory', async (t) => {
    const dir = t.testdir({ 'rel.yaml': 'name: rel\n' });
    const problems = problemsOf(t, path.join(dir, 'rel.yaml'));
    t.equal(problems[0]?.file, path.relative(process.cwd(), path.join(dir, 'rel.yaml')));
  });
});

t.test('resolveScenario', async (t) => {
  t.equal(resolveScenario('ack-crash', CATALOGUE), path.join(SCENARIOS, 'ack-crash.yaml'), 'by name');
  t.equal(resolveScenario(path.join(SCENARIOS, 'happy-path.yaml'), '/nonexistent'), path.join(SCENARIOS, 'happy-path.yaml'), 'by absolute path');
  t.equal(
    resolveScenario(path.relative(process.cwd(), path.join(SCENARIOS, 'happy-path.yaml')), '/nonexistent'),
    path.join(SCENARIOS, 'happy-path.yaml'),
    'by relative path',
  );

  const dir = t.testdir({ 'ack-crash': 'a file named like a scenario\n', 'mine.yaml': `name: mine\n${OK_HEAD}` });
  const cwd = process.cwd();
  process.chdir(dir);
  t.teardown(() => process.chdir(cwd));
  t.equal(resolveScenario('ack-crash', CATALOGUE), path.join(dir, 'ack-crash'), 'an existing file path wins over a name');
  t.equal(resolveScenario('mine.yaml', CATALOGUE), path.join(dir, 'mine.yaml'));
  process.chdir(cwd);

  const error = t.throws(() => resolveScenario('ack-crsh', CATALOGUE)) as unknown;
  t.ok(error instanceof UnknownScenarioError);
  t.ok(error instanceof ScenarioError);
  if (error instanceof UnknownScenarioError) {
    t.equal(error.requested, 'ack-crsh');
    t.ok(error.available.includes('ack-crash') && error.available.includes('happy-path'));
    t.match(error.message, /^unknown scenario "ack-crsh": .*\(did you mean "ack-crash"\?\)$/);
    t.notMatch(error.message, /happy-path/, 'the suggestion only, not every name');
  }
  t.throws(() => resolveScenario('nope/missing.yaml', CATALOGUE), UnknownScenarioError);
  t.throws(() => resolveScenario('zzzzzz', CATALOGUE), { message: /\(see `chaoslab list`\)$/ });
  t.throws(() => resolveScenario('x', t.testdir({})), { message: /\(the catalogue is empty\)$/ });
});

t.test('listScenarios', async (t) => {
  const dir = t.testdir({
    ledger: {
      'b.yaml': `name: b\n${OK_HEAD}`,
      'a.yaml': 'name: a\ndescription: >-\n  First\n  one.\nevents: { deltas: [1] }\n',
      'notes.txt': 'not a scenario',
    },
    'README.md': 'not a lab folder',
  });
  t.same(listScenarios(dir), [
    { name: 'a', description: 'First one.', file: path.join(dir, 'ledger', 'a.yaml'), lab: 'ledger' },
    { name: 'b', description: 'x', file: path.join(dir, 'ledger', 'b.yaml'), lab: 'ledger' },
  ]);
  t.same(listScenarios(dir, 'other-lab'), [], 'only the named lab');
  const twice = t.testdir({ ledger: { 'a.yaml': `name: a\n${OK_HEAD}` }, more: { 'a.yaml': `name: a\n${OK_HEAD}` } });
  t.throws(() => listScenarios(twice), { message: /"a" is also a scenario of .*: names are unique across labs/ }, 'a name in two lab folders');
  const broken = t.testdir({ ledger: { 'good.yaml': `name: good\n${OK_HEAD}`, 'bad1.yaml': 'name: bad1\n', 'bad2.yaml': 'nme: bad2\n' } });
  const error = t.throws(() => listScenarios(broken)) as unknown;
  t.ok(error instanceof ScenarioError, 'one ScenarioError for all bad files');
  if (error instanceof ScenarioError) {
    t.same(
      error.problems.map((p) => [path.basename(p.file), p.field]),
      [
        ['bad1.yaml', 'description'],
        ['bad1.yaml', 'events'],
        ['bad2.yaml', 'name'],
        ['bad2.yaml', 'description'],
        ['bad2.yaml', 'events'],
        ['bad2.yaml', 'nme'],
      ],
    );
  }
  t.same(listScenarios(path.join(t.testdir({}), 'absent')), []);
});

t.test('fault layers, misbehaviour, restarts and time scale are resolved', async (t) => {
  const dir = t.testdir({
    'layers.yaml': `name: layers
description: x
time_scale: 0.5
events:
  generate: { count: 50, seed: 1 }
publisher:
  forget_acked: true
  retention_moves: [{ connection: 2, to: 5 }]
  misbehave:
    - { action: replace, seq: 3, bytes: "A", repeat: 4 }
    - { action: insert, seq: 4, bytes: "EVENT 3 4\\r\\n", connection: 2 }
faults:
  - { name: cut, network: { down: true }, start: { before_event: 10 }, end: { after_ms: 1000 } }
  - { name: slow, network: { toxic: latency, attributes: { latency: 100 } }, start: { at_ms: 200 } }
  - { name: kill, process: { signal: SIGKILL }, start: { random_events: { count: 3, seed: 7, min: 5, max: 45 } } }
consumer:
  incarnations: [{ fault: "exit@ack:1" }]
  restart: { until: complete, max: 30, delay_ms: 100 }
expect:
  final_last: 40
  transcript: [{ incarnation: 25, resume: 1, closed_by: consumer }]
`,
  });
  const s = loadScenario(path.join(dir, 'layers.yaml'));
  t.equal(s.timeScale, 0.5);
  t.same(s.lab.publisher.misbehaviour, [
    { action: 'replace', seq: 3, bytes: 'AAAA' },
    { action: 'insert', seq: 4, bytes: 'EVENT 3 4\r\n', connection: 2 },
  ]);
  t.same(s.lab.publisher.retentionMoves, [{ connection: 2, to: 5 }]);
  t.equal(s.lab.publisher.forgetAcked, true);
  t.same(s.lab.consumer.restart, { until: 'complete', max: 30, delayMs: 50 }, 'delay scaled');
  t.same(s.lab.consumer.incarnations, [{ fault: 'exit@ack:1', expectExit: 'nonzero' }]);
  t.same(s.faults.slice(0, 2), [
    { name: 'cut', effect: { kind: 'proxy-down' }, start: { kind: 'point', point: 'before_event', value: 10 }, end: { kind: 'after', ms: 500 } },
    { name: 'slow', effect: { kind: 'toxic', toxic: 'latency', stream: 'downstream', attributes: { latency: 100 } }, start: { kind: 'at', ms: 100 } },
  ]);
  const kills = s.faults.slice(2);
  t.same(
    kills.map((k) => k.name),
    ['kill-1', 'kill-2', 'kill-3'],
    'random_events expands into one fault per point',
  );
  t.ok(
    kills.every((k) => k.start.kind === 'point' && k.start.point === 'before_event'),
    "drawn at the lab's random point",
  );
  const seqs = kills.map((k) => (k.start as { value: number }).value);
  t.same(
    [...seqs].sort((a, b) => a - b),
    seqs,
    'ascending',
  );
  t.ok(seqs.every((q) => q >= 5 && q <= 45) && new Set(seqs).size === 3, 'distinct, in range');
  t.same(loadScenario(path.join(dir, 'layers.yaml')).faults, s.faults, 'the same seed draws the same points');
  t.same(s.lab.expect, { transcript: [{ incarnation: 25, resume: 1, closedBy: 'consumer' }], finalLast: 40 });
});

t.test('fault layer mistakes name the line and field', async (t) => {
  const head = 'description: x\nevents:\n  deltas: [7, 5, -3]\n';
  bad(t, 'f1', `name: f1\n${head}faults:\n  - { name: a, process: { signal: SIGSTOP }, start: { on_ack: 1 } }\n`, [
    { line: 6, field: 'faults[0]', message: /SIGSTOP fault needs an `end`/ },
  ]);
  bad(t, 'f2', `name: f2\n${head}faults:\n  - { name: a, network: { down: true }, start: { before_event: 9 } }\n`, [
    { line: 6, field: 'faults[0].start.before_event', message: /seq 9 is beyond the script/ },
  ]);
  bad(t, 'f3', `name: f3\n${head}faults:\n  - { name: a, process: { signal: SIGKILL }, start: { on_ack: 1 }, end: { after_ms: 5 } }\n`, [
    { line: 6, field: 'faults[0].end', message: /instantaneous/ },
  ]);
  bad(t, 'f4', `name: f4\n${head}publisher:\n  misbehave:\n    - { action: insert, seq: 1 }\n`, [
    { line: 7, field: 'publisher.misbehave[0]', message: /insert needs `bytes`/ },
  ]);
  bad(t, 'f5', `name: f5\n${head}publisher:\n  misbehave:\n    - { action: replace, seq: 1, bytes: "\\u20ac" }\n`, [
    { line: 7, field: 'publisher.misbehave[0].bytes', message: /only characters U\+0000..U\+00FF/ },
  ]);
  bad(t, 'f6', `name: f6\n${head}faults:\n  - { name: a, network: { toxic: latency }, start: { before_event: 1, on_ack: 1 } }\n`, [
    { line: 6, field: 'faults[0].start', message: /./ },
  ]);
  bad(t, 'f7', `name: f7\n${head}expect:\n  final_last: 3\n`, [{ line: 6, field: 'expect.final_last', message: /between -1 and 2/ }]);
  bad(t, 'f8', `name: f8\n${head}faults:\n  - { name: a, process: { signal: SIGKILL }, start: { random_events: { count: 5, seed: 1, min: 0, max: 2 } } }\n`, [
    { line: 6, field: 'faults[0].start.random_events', message: /count <= max - min \+ 1/ },
  ]);
});

t.test('a bad environment for the consumer: consumer.env and consumer.unset', async (t) => {
  const port = loadScenario(path.join(SCENARIOS, 'bad-environment-port.yaml'));
  t.same(port.lab.consumer.badEnvironment, { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: [] });
  t.same(port.lab.consumer.incarnations, [{ expectExit: 'zero' }]);
  t.same(loadScenario(path.join(SCENARIOS, 'bad-environment-no-db.yaml')).lab.consumer.badEnvironment, { set: {}, unset: ['CHAOSLAB_DB'] });
  t.notOk('badEnvironment' in loadScenario(path.join(SCENARIOS, 'happy-path.yaml')).lab.consumer, 'absent unless asked for');

  bad(t, 'env-typo', `name: env-typo\n${OK_HEAD}consumer:\n  env:\n    CHAOSLAB_PROT: "x"\n`, [
    { line: 7, column: 5, field: 'consumer.env.CHAOSLAB_PROT', message: /did you mean "CHAOSLAB_PORT"/ },
  ]);
  bad(t, 'env-valid', `name: env-valid\n${OK_HEAD}consumer:\n  env:\n    CHAOSLAB_PORT: "8080"\n    CHAOSLAB_FAULT: "exit@ack:1"\n`, [
    {
      line: 7,
      column: 20,
      field: 'consumer.env.CHAOSLAB_PORT',
      message: /^"8080" is a valid CHAOSLAB_PORT: a bad environment needs a value the contract calls invalid$/,
    },
    { line: 8, column: 21, field: 'consumer.env.CHAOSLAB_FAULT', message: /is a valid CHAOSLAB_FAULT/ },
  ]);
  bad(t, 'env-nul', `name: env-nul\n${OK_HEAD}consumer:\n  env: { CHAOSLAB_DB: "a\\0b" }\n`, [
    { line: 6, field: 'consumer.env.CHAOSLAB_DB', message: /^an environment variable cannot hold a NUL byte$/ },
  ]);
  bad(t, 'unset-fault', `name: unset-fault\n${OK_HEAD}consumer:\n  unset: [CHAOSLAB_FAULT]\n`, [
    { line: 6, column: 11, field: 'consumer.unset[0]', message: /must be one of/ },
  ]);
  const why = /^leave it out: with consumer.env or consumer.unset the scenario runs one plain process, which must exit 64 before it connects$/;
  bad(
    t,
    'env-and-more',
    `name: env-and-more\n${OK_HEAD}consumer:\n  env: { CHAOSLAB_TIMEOUT_MS: "0" }\n  unset: [CHAOSLAB_TIMEOUT_MS]\n  restart: { until: complete, max: 3 }\n  incarnations:\n    - { fault: "exit@ack:1" }\nexpect:\n  transcript:\n    - { incarnation: 1, resume: -1 }\n`,
    [
      { line: 7, field: 'consumer.unset[0]', message: /^CHAOSLAB_TIMEOUT_MS is also set in consumer.env: unset it or set it, not both$/ },
      { line: 8, field: 'consumer.restart', message: why },
      { line: 9, field: 'consumer.incarnations', message: why },
      { line: 12, field: 'expect.transcript', message: why },
    ],
  );
});
