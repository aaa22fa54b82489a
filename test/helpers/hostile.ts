// The hostile strings every renderer is fed (issue 28, attack 4): what a consumer can leave in its
// store, print on stderr, or put in its command line and its submission's folder name. One list,
// so every output is tried with the same bytes; a run that carries them everywhere a consumer can
// put them; and the checks that say an output kept them inert.

import type { JournalEntry } from '../../harness/record/journal.js';
import { checkLedgerRun } from '../../harness/labs/ledger/check/checker.js';
import type { LedgerPlan } from '../../harness/labs/ledger/scenario/load.js';
import type { StoreSnapshot } from '../../harness/labs/ledger/check/store-reader.js';
import type { Scenario } from '../../harness/scenario/types.js';
import { find, golden, insertAfter, replace, withOutput, withVerdict } from './journals.js';

/** Each one an attack on some output kind. */
export const HOSTILE_VALUES = [
  '\u001b]52;c;Y2hhb3NsYWI=\u0007', // OSC 52: writes the reader's clipboard
  '\u001b[1A\u001b[2K\u001b[32mPASS\u001b[0m  duplicate-delivery', // cursor up, erase the line, paint a green PASS
  '\u009b2J\u009b1;1H', // the one-byte CSI (C1): clear the screen, cursor home
  'report\u202etxt.exe', // right-to-left override: shows as "reportexe.txt"
  'nul\u0000byte',
  'lone\ud800surrogate',
  '\n```\n# PASS\n<img src=x onerror=alert(1)>', // at the start of a line: closes a code block, then a heading and live HTML
  '[click](javascript:alert(1))',
  '</script><script>alert(1)</script>',
  ']]>',
  '=HYPERLINK("http://evil.example","x")',
  '+1',
  '-2',
  '@SUM(A1:A9)',
  'a|b',
  'one\ntwo\r\n# PASS',
] as const;

/** All of them in one value (joined by spaces). */
export const HOSTILE_VALUE = HOSTILE_VALUES.join(' ');

/** How every hostile escape shows once made visible: the reader sees this text, not its effect. */
export const SHOWN_ESCAPE = '\\x1b]52;c;Y2hhb3NsYWI=\\x07';

/**
 * A character no human-facing output may carry raw (terminal, Markdown, HTML, XML): C0 but tab,
 * newline and carriage return, DEL, C1, bidi and invisible formatting characters, U+FFFE/F and
 * lone surrogates.
 */
export const RAW_UNSAFE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The raw unsafe characters of `text`, as code points (empty when it is inert). */
export const rawUnsafe = (text: string): string[] =>
  [...text.matchAll(new RegExp(RAW_UNSAFE.source, 'g'))].map((m) => `U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The harness's own terminal styling: its colours (SGR) and the status line's clear. */
const OWN_SEQUENCES = /\u001b\[(?:0|3[1-6])m|\r\u001b\[2K/g;

/** Terminal output minus the harness's own sequences: what a value could have added. */
export const withoutOwnStyling = (text: string): string => text.replace(OWN_SEQUENCES, '');

/** The run as a consumer makes it: the real checker reads its store, which holds the hostile value as cursor and total. */
export function hostileRun(): JournalEntry[] {
  let journal = golden('duplicate-delivery-no-dedupe');
  const plan = { source: '', ...(find(journal, 'scenario').plan as Omit<Scenario<LedgerPlan>, 'source'>) };
  const script = plan.lab.events;
  const control: StoreSnapshot = {
    exists: true,
    checkpoint: [{ id: 1, last: script.length - 1, total: script.reduce((s, e) => s + e.delta, 0) }],
    ledger: script.map((e): [number, number] => [e.seq, e.delta]),
  };
  const consumer: StoreSnapshot = {
    exists: true,
    // SQLite stores text in an INTEGER column: the reader gives back what is there.
    checkpoint: [{ id: 1, last: HOSTILE_VALUE as unknown as number, total: HOSTILE_VALUE as unknown as number }],
    ledger: [[1, 2]],
  };
  const verdict = checkLedgerRun(journal, plan, (role) => (role === 'control' ? control : consumer));
  // Leading, a finding quoting the store as a checker does (the checker's own follow).
  const quoted = `the consumer's file holds ${HOSTILE_VALUE}`;
  journal = withVerdict(journal, () => ({
    ...verdict,
    status: 'fail',
    headline: quoted,
    findings: [{ code: 'hostile', text: quoted }, ...verdict.findings],
    diff: [...verdict.diff, ...HOSTILE_VALUES.map((v) => `stored: ${v}`)],
  }));
  journal = replace(journal, find(journal, 'run-start'), (e) => ({
    ...e,
    consumerCommand: `python3 client.py --name '${HOSTILE_VALUE}'`,
    scenario: { ...e.scenario, description: HOSTILE_VALUE },
    ...(e.reproduce ? { reproduce: { ...e.reproduce, command: `chaoslab run x --consumer '${HOSTILE_VALUE}'`, invokedAs: HOSTILE_VALUE } } : {}),
  }));
  const last = Math.max(...journal.flatMap((e) => (e.type === 'process-exit' && e.role === 'consumer' ? [e.incarnation] : [])));
  journal = withOutput(journal, last, { stdout: HOSTILE_VALUE, stderr: `${HOSTILE_VALUE}\n` });
  const open = find(journal, 'wire', (e) => e.stream === 'consumer' && e.kind === 'open');
  journal = insertAfter(
    journal,
    open,
    { type: 'wire', stream: 'consumer', conn: open.conn, kind: 'recv', line: `${HOSTILE_VALUE}\n`, error: 'not a line of the protocol' },
    { type: 'harness-error', message: `reading the store: ${HOSTILE_VALUE}` },
  );
  return journal;
}
