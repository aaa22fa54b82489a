// FORCE_COLOR and NO_COLOR decide the console's colour, whatever stdout is.
import t from 'tap';
import { colorEnabled } from '../../../harness/report/color.js';
import { createConsoleReporter } from '../../../harness/report/console.js';

t.test('colorEnabled', async (t) => {
  t.equal(colorEnabled(true, {}), true, 'a terminal: colour');
  t.equal(colorEnabled(false, {}), false, 'a pipe: none');
  t.equal(colorEnabled(false, { FORCE_COLOR: '1' }), true, 'FORCE_COLOR=1 piped: colour');
  t.equal(colorEnabled(false, { FORCE_COLOR: '' }), true, 'FORCE_COLOR set but empty: colour');
  t.equal(colorEnabled(true, { FORCE_COLOR: '0' }), false, 'FORCE_COLOR=0: none, even on a terminal');
  t.equal(colorEnabled(true, { FORCE_COLOR: 'false' }), false);
  t.equal(colorEnabled(true, { NO_COLOR: '1' }), false, 'NO_COLOR on a terminal: none');
  t.equal(colorEnabled(true, { NO_COLOR: '' }), true, 'an empty NO_COLOR does not count (no-color.org)');
  t.equal(colorEnabled(false, { FORCE_COLOR: '1', NO_COLOR: '1' }), true, 'FORCE_COLOR wins, as in Node');
});

t.test('the console reporter follows the environment when not told', async (t) => {
  const saved = { FORCE_COLOR: process.env.FORCE_COLOR, NO_COLOR: process.env.NO_COLOR };
  t.teardown(() => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  });
  const verdictLine = (): string => {
    let text = '';
    const r = createConsoleReporter({ tty: false, quiet: true, out: { write: (s: string) => (text += s) }, interval: false });
    r.scenarioStarted('gap');
    r.scenarioFinished('gap', { status: 'fail', runDir: '/tmp/r', error: 'boom' });
    r.close();
    return text;
  };
  delete process.env.NO_COLOR;
  process.env.FORCE_COLOR = '1';
  t.match(verdictLine(), '\x1b[31mFAIL\x1b[0m', 'FORCE_COLOR=1 on a pipe paints FAIL red');
  delete process.env.FORCE_COLOR;
  t.notMatch(verdictLine(), '\x1b[', 'a pipe without FORCE_COLOR: plain');
  process.env.NO_COLOR = '1';
  t.notMatch(verdictLine(), '\x1b[', 'NO_COLOR: plain');
});
