// The hostile strings every renderer is fed (issue 28, attack 4): what a consumer can leave in its
// store, print on stderr, or put in its command line and its submission's folder name. One list,
// so every output is tried with the same bytes; and the checks that say an output kept them inert.

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
