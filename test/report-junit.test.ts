// junit.xml parsed by a real, strict XML parser (Python's xml.etree, Python 3 being a project
// requirement): structure, counts, failure messages, and well-formedness with hostile bytes.
import { execFileSync } from 'node:child_process';
import t from 'tap';
import type { JournalEntry } from '../harness/journal.js';
import { explainRun } from '../harness/report/html.js';
import { renderJunit, renderJunitRun, runTimestamp } from '../harness/report/junit.js';

interface XmlNode {
  tag: string;
  attrib: Record<string, string>;
  text: string;
  children: XmlNode[];
}

function parseXml(xml: string): XmlNode {
  const script = `
import sys, json, xml.etree.ElementTree as ET
def conv(e):
    return {"tag": e.tag, "attrib": dict(e.attrib), "text": e.text or "", "children": [conv(c) for c in e]}
print(json.dumps(conv(ET.fromstring(sys.stdin.buffer.read()))))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { input: xml }).toString()) as XmlNode;
}
const kids = (n: XmlNode, tag: string) => n.children.filter((c) => c.tag === tag);

type Entry = Record<string, unknown>;

/** A small journal: `status` decides its verdict; `stderr` goes into the consumer's exit entry. */
function journal(
  name: string,
  status: 'pass' | 'fail' | 'error' | 'interrupted',
  opts: { stderr?: string; reasons?: string[]; runId?: string } = {},
): JournalEntry[] {
  const plan = {
    events: [
      { seq: 0, delta: 1 },
      { seq: 1, delta: 2 },
    ],
    consumer: { incarnations: [{ expectExit: 'zero' }] },
    expect: { transcript: [{ incarnation: 1, resume: -1, acks: [0, 1] }] },
  };
  const e: Entry[] = [
    {
      t: 0.1,
      type: 'run-start',
      schema: 1,
      runId: opts.runId ?? `20260304-050607-${name}-abcd`,
      scenario: { name, file: `/lab/scenarios/${name}.yaml`, description: `what ${name} proves` },
      harnessVersion: '0.1.0',
      node: 'v20.1.0',
      platform: 'linux-x64',
      cwd: '/lab',
      consumerCommand: 'node c.js',
      controlCommand: 'node c.js',
    },
    { t: 0.2, type: 'scenario', source: `name: ${name}\n`, plan },
    { t: 1, type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 1, db: 'c.db' },
    { t: 2, type: 'process-start', role: 'consumer', incarnation: 1, pid: 7, command: 'node c.js', env: {} },
  ];
  if (status === 'interrupted') return e as unknown as JournalEntry[];
  e.push({
    t: 300,
    type: 'process-exit',
    role: 'consumer',
    incarnation: 1,
    code: status === 'pass' ? 0 : 1,
    signal: null,
    durationMs: 298,
    stdoutTail: 'hello\n',
    stderrTail: opts.stderr ?? '',
    stdoutBytes: 6,
    stderrBytes: (opts.stderr ?? '').length,
  });
  const store = (last: number, total: number) => ({
    exists: true,
    checkpoint: [{ id: 1, last, total }],
    ledger: [
      [0, 1],
      [1, 2],
    ].slice(0, last + 1),
  });
  e.push({ t: 301, type: 'store-read', role: 'consumer', when: 'final', db: 'c.db', store: status === 'pass' ? store(1, 3) : store(0, 1) });
  if (status === 'error') e.push({ t: 302, type: 'harness-error', message: 'toxiproxy went away <suddenly>' });
  else {
    const reasons =
      opts.reasons ??
      (status === 'pass' ? [] : ['incarnation 1 exited with status 1, expected status 0', 'consumer: cursor is last 0, expected 1 (seq 1 never applied)']);
    e.push({ t: 302, type: 'verdict', pass: status === 'pass', reasons, details: { pass: status === 'pass', reasons, harnessErrors: [] } });
  }
  e.push({ t: 1234.6, type: 'run-end', status });
  return e as unknown as JournalEntry[];
}

t.test('one testsuite, one testcase per scenario, counts and failure messages', async (t) => {
  const runs = [
    { journal: journal('happy-path', 'pass'), runDir: '/lab/reports/r1' },
    { journal: journal('ack-crash', 'fail'), runDir: '/lab/reports/r2' },
    { journal: journal('net-split', 'error') },
    { journal: journal('slow-link', 'interrupted') },
  ];
  const xml = renderJunit(runs, { hostname: 'ci-runner-1' });
  t.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
  const root = parseXml(xml);
  t.equal(root.tag, 'testsuites');
  t.match(root.attrib, { name: 'chaoslab', tests: '4', failures: '1', errors: '2', skipped: '0' });
  const suites = kids(root, 'testsuite');
  t.equal(suites.length, 1);
  const suite = suites[0]!;
  t.match(suite.attrib, { name: 'chaoslab', tests: '4', failures: '1', errors: '2', skipped: '0', hostname: 'ci-runner-1', timestamp: '2026-03-04T05:06:07' });
  t.match(suite.attrib.time, /^\d+\.\d{3}$/);
  t.same(
    kids(kids(suite, 'properties')[0]!, 'property').map((p) => p.attrib.name),
    ['harnessVersion', 'node', 'platform'],
  );

  const cases = kids(suite, 'testcase');
  t.same(
    cases.map((c) => c.attrib.name),
    ['happy-path', 'ack-crash', 'net-split', 'slow-link'],
  );
  t.same(
    cases.map((c) => c.attrib.classname),
    ['chaoslab.happy-path', 'chaoslab.ack-crash', 'chaoslab.net-split', 'chaoslab.slow-link'],
  );
  t.same(
    cases.map((c) => c.attrib.file),
    ['scenarios/happy-path.yaml', 'scenarios/ack-crash.yaml', 'scenarios/net-split.yaml', 'scenarios/slow-link.yaml'],
    "file relative to the run's working directory",
  );
  t.equal(cases[0]!.attrib.time, '1.235', 'time in seconds from run-end');
  const sum = cases.reduce((s, c) => s + Number(c.attrib.time), 0);
  t.equal(suite.attrib.time, sum.toFixed(3), 'suite time is the sum of its cases');

  const [pass, fail, error, interrupted] = cases as [XmlNode, XmlNode, XmlNode, XmlNode];
  t.same(
    pass.children.map((c) => c.tag),
    ['properties', 'system-out'],
    'a pass has no failure or error',
  );
  const failures = kids(fail, 'failure');
  t.equal(failures.length, 1);
  t.equal(failures[0]!.attrib.message, explainRun(runs[1]!.journal).headline, 'failure message = the explanation');
  t.equal(failures[0]!.attrib.message, 'incarnation 1 exited with status 1, expected status 0');
  t.equal(failures[0]!.attrib.type, 'chaoslab.verdict');
  t.match(failures[0]!.text, /Also:\n- consumer: cursor is last 0, expected 1/);
  t.match(failures[0]!.text, /Smallest diff:\n {2}ledger: seq 1 missing; last 0, expected 1; total 1, expected 3/);
  t.match(failures[0]!.text, /Report: \/lab\/reports\/r2\/report\.html/);
  t.match(kids(fail, 'system-out')[0]!.text, /report: \/lab\/reports\/r2\/report\.html/);
  t.match(
    kids(fail, 'properties')[0]!.children.map((p) => p.attrib),
    [{ name: 'runId' }, { name: 'consumer', value: 'node c.js' }, { name: 'report' }],
  );

  t.match(kids(error, 'error')[0]!.attrib, { type: 'chaoslab.harness-error', message: 'harness error: toxiproxy went away <suddenly>' });
  t.equal(kids(error, 'failure').length, 0);
  t.match(kids(interrupted, 'error')[0]!.attrib, { type: 'chaoslab.interrupted', message: /^the run did not finish/ });
});

t.test('hostile bytes in messages and process output still make well-formed XML', async (t) => {
  const stderr = 'boom \u0000\u001b[31m </system-err> ]]> <![CDATA[ & "q" \uFFFF\n';
  const reasons = ['seq 1 "quoted" <tag> & more\nsecond line'];
  const xml = renderJunitRun(journal('weird', 'fail', { stderr, reasons }), '/r');
  const root = parseXml(xml);
  const tc = kids(kids(root, 'testsuite')[0]!, 'testcase')[0]!;
  t.equal(kids(tc, 'failure')[0]!.attrib.message, reasons[0], 'quotes, markup and newlines survive in the attribute');
  const err = kids(tc, 'system-err')[0]!.text;
  t.match(err, /--- consumer incarnation 1 stderr \(tail\) ---/);
  t.match(err, /boom \\x00\\x1b\[31m <\/system-err> \]\]> <!\[CDATA\[ & "q" \\xffff/);
});

t.test('the single-run form and the timestamp', async (t) => {
  const root = parseXml(renderJunitRun(journal('happy-path', 'pass')));
  t.match(root.attrib, { tests: '1', failures: '0', errors: '0' });
  t.equal(runTimestamp('20261130-092910-ack-crash-fc5x'), '2026-11-30T09:29:10');
  t.equal(runTimestamp('my-run'), undefined);
  const noStamp = parseXml(renderJunit([{ journal: journal('x', 'pass', { runId: 'custom' }) }]));
  t.match(noStamp.attrib.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'a run id without a stamp: now');
  t.match(parseXml(renderJunit([])).attrib, { tests: '0', failures: '0' }, 'no runs: an empty, valid suite');
});
