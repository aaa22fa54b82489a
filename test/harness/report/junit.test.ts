// junit.xml parsed by a real, strict XML parser (Python's xml.etree, Python 3 being a project
// requirement): structure, counts, failure messages, and well-formedness with hostile bytes.
// The runs are golden journals recorded from real runs, and journals derived from them
// (helpers/journals.ts): a harness error, a run cut short, hostile text.
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { renderJunit, renderJunitRun, runTimestamp } from '../../../harness/report/junit.js';
import { viewOf } from '../../../harness/report/view.js';
import { cutAfter, find, golden, harnessFailed, replace, withOutput, withVerdict } from '../../helpers/journals.js';

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

/** A run whose harness failed once Toxiproxy was up. */
function harnessError() {
  const cuts = golden('cuts-pass');
  return harnessFailed(cuts, find(cuts, 'toxiproxy'), 'toxiproxy went away <suddenly>');
}

/** A run cut short right after its consumer started. */
function interrupted() {
  const dup = golden('duplicate-delivery-no-dedupe');
  return cutAfter(
    dup,
    find(dup, 'process-start', (e) => e.role === 'consumer'),
  );
}

t.test('one testsuite, one testcase per scenario, counts and failure messages', async (t) => {
  const runs = [
    { journal: golden('resync-required-pass'), runDir: '/lab/reports/r1' },
    { journal: golden('ack-crash-ack-before-commit'), runDir: '/lab/reports/r2' },
    { journal: harnessError() },
    { journal: interrupted() },
  ];
  const xml = renderJunit(runs, { hostname: 'ci-runner-1' });
  t.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
  const root = parseXml(xml);
  t.equal(root.tag, 'testsuites');
  t.match(root.attrib, { name: 'chaoslab', tests: '4', failures: '1', errors: '1', skipped: '1' });
  const suites = kids(root, 'testsuite');
  t.equal(suites.length, 1);
  const suite = suites[0]!;
  t.match(suite.attrib, { name: 'chaoslab', tests: '4', failures: '1', errors: '1', skipped: '1', hostname: 'ci-runner-1', timestamp: '2026-11-30T23:47:59' });
  t.equal(suite.attrib.timestamp, '2026-11-30T23:47:59', 'the earliest run’s start (ack-crash’s), from the run ids');
  t.match(suite.attrib.time, /^\d+\.\d{3}$/);
  t.same(
    kids(kids(suite, 'properties')[0]!, 'property').map((p) => [p.attrib.name, p.attrib.value]),
    [
      ['harnessVersion', '0.1.0'],
      ['node', 'v20.20.2'],
      ['platform', 'linux-x64'],
    ],
  );

  const cases = kids(suite, 'testcase');
  t.same(
    cases.map((c) => c.attrib.name),
    ['resync-required', 'ack-crash', 'cuts', 'duplicate-delivery'],
  );
  t.same(
    cases.map((c) => c.attrib.classname),
    ['chaoslab.resync-required', 'chaoslab.ack-crash', 'chaoslab.cuts', 'chaoslab.duplicate-delivery'],
  );
  t.same(
    cases.map((c) => c.attrib.file),
    ['scenarios/ledger/resync-required.yaml', 'scenarios/ledger/ack-crash.yaml', 'scenarios/ledger/cuts.yaml', 'scenarios/ledger/duplicate-delivery.yaml'],
    "file relative to the run's working directory",
  );
  t.equal(cases[0]!.attrib.time, '0.821', 'time in seconds from run-end');
  const sum = cases.reduce((s, c) => s + Number(c.attrib.time), 0);
  t.equal(suite.attrib.time, sum.toFixed(3), 'suite time is the sum of its cases');

  const [pass, fail, error, cut] = cases as [XmlNode, XmlNode, XmlNode, XmlNode];
  t.same(
    pass.children.map((c) => c.tag),
    ['properties', 'system-out', 'system-err'],
    'a pass has no failure or error, even though its consumer exited non-zero on purpose',
  );
  t.match(kids(pass, 'system-out')[0]!.text, /^resync-required: PASS in 0\.821 s\n/);
  t.match(kids(pass, 'system-err')[0]!.text, /--- consumer incarnation 2 stderr \(tail\) ---\nledger consumer: ResyncRequired/);

  const failures = kids(fail, 'failure');
  t.equal(failures.length, 1);
  const verdict = find(runs[1]!.journal, 'verdict').verdict;
  t.equal(failures[0]!.attrib.message, verdict.headline, 'failure message = the verdict’s headline, as written');
  t.match(failures[0]!.attrib.message, /^incarnation 1 sent ACK 1 at 0\.589 s, which it must not send/);
  t.equal(failures[0]!.attrib.type, 'chaoslab.verdict');
  t.match(failures[0]!.text, /\n\nAlso:\n- incarnation 2 never sent ACK 1 \(incarnation 1 had already acknowledged it, so it was not redelivered\)\n/);
  t.match(failures[0]!.text, `\n\nSmallest diff:\n${verdict.diff.map((d) => `  ${d}`).join('\n')}\n`);
  t.match(failures[0]!.text, /Report: \/lab\/reports\/r2\/report\.html$/);
  t.match(kids(fail, 'system-out')[0]!.text, /report: \/lab\/reports\/r2\/report\.html/);
  t.match(
    kids(fail, 'properties')[0]!.children.map((p) => p.attrib),
    [
      { name: 'runId', value: '20261130-234759-ack-crash-6bg1' },
      { name: 'consumer', value: 'node dist/consumer/ledger/mutants/ack-before-commit.js' },
      { name: 'report' },
    ],
  );

  t.match(kids(error, 'error')[0]!.attrib, { type: 'chaoslab.harness-error', message: 'harness: toxiproxy went away <suddenly>' });
  t.equal(kids(error, 'failure').length, 0);
  t.match(kids(cut, 'skipped')[0]!.attrib, {
    message: /^the run did not finish: the journal stops at 0\.\d{3} s, after consumer incarnation 1 started/,
  });
  t.equal(kids(cut, 'failure').length + kids(cut, 'error').length, 0, 'an interrupted run is skipped: neither a failure nor an error');
});

t.test('hostile bytes in messages and process output still make well-formed XML', async (t) => {
  const stderr = 'boom \u0000\u001b[31m </system-err> ]]> <![CDATA[ & "q" \uFFFF\n';
  const reason = 'seq 1 "quoted" <tag> & more\nsecond line\ttab';
  const journal = withVerdict(withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr }), (v) => ({
    ...v,
    headline: reason,
    findings: [{ code: 'hostile', text: reason, subject: { seqs: [1] } }, ...v.findings],
  }));
  const xml = renderJunitRun(journal, '/r');
  const root = parseXml(xml);
  const tc = kids(kids(root, 'testsuite')[0]!, 'testcase')[0]!;
  t.equal(kids(tc, 'failure')[0]!.attrib.message, reason, 'quotes, markup, newlines and tabs survive in the attribute');
  t.match(kids(tc, 'failure')[0]!.text, /^seq 1 "quoted" <tag> & more\nsecond line\ttab\n\nAlso:\n- incarnation 1 sent ACK 1/);
  const err = kids(tc, 'system-err')[0]!.text;
  t.match(err, /--- consumer incarnation 1 stderr \(tail\) ---/);
  t.match(err, /boom \\x00\\x1b\[31m <\/system-err> \]\]> <!\[CDATA\[ & "q" \\uffff/);
});

t.test('the single-run form and the timestamp', async (t) => {
  const pass = golden('ack-crash-pass');
  const root = parseXml(renderJunitRun(pass));
  t.match(root.attrib, { tests: '1', failures: '0', errors: '0', timestamp: '2026-11-30T23:47:57' });
  t.equal(runTimestamp('20261130-092910-ack-crash-fc5x'), '2026-11-30T09:29:10');
  t.equal(runTimestamp('my-run'), undefined);
  const custom = replace(pass, find(pass, 'run-start'), (e) => ({ ...e, runId: 'custom' }));
  const noStamp = parseXml(renderJunit([{ journal: custom }]));
  t.match(noStamp.attrib.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'a run id without a stamp: now');
  t.match(parseXml(renderJunit([])).attrib, { tests: '0', failures: '0' }, 'no runs: an empty, valid suite');

  // The view handed in (renderRunFolder hands in the one report.html and summary.md use) is what the file says.
  const mutant = golden('ack-crash-ack-before-commit');
  const view = { ...viewOf(mutant), headline: 'the view handed in' };
  const failure = kids(kids(kids(parseXml(renderJunitRun(mutant, undefined, { view })), 'testsuite')[0]!, 'testcase')[0]!, 'failure')[0]!;
  t.equal(failure.attrib.message, 'the view handed in');
  t.notMatch(failure.text, /Report:/, 'no run folder, no report path');
});
