// What `chaoslab run`'s entry point reads from the raw arguments before the command line is
// parsed: whether the first run may be sealed, so that its place opens early (run/early-place.ts).
import t from 'tap';
import { sealingAsked } from '../../../harness/run/early-place.js';

t.test('run, with or without --seal and a Toxiproxy URL given either way', async (t) => {
  t.same(sealingAsked(['run', 'ack-crash']), {});
  t.same(sealingAsked(['run', 'ack-crash', '--seal', '--jobs', '2']), { mode: 'on' });
  t.same(sealingAsked(['run', '--toxiproxy-url', 'http://127.0.0.1:8474', 'ack-crash']), { toxiproxyUrl: 'http://127.0.0.1:8474' });
  t.same(sealingAsked(['run', '--toxiproxy-url=http://h:1', 'ack-crash']), { toxiproxyUrl: 'http://h:1' });
});

t.test('no early place: another command, --no-seal, help', async (t) => {
  for (const args of [[], ['list'], ['grade', 'x'], ['run', 'ack-crash', '--no-seal'], ['run', '--help'], ['run', '-h']])
    t.equal(sealingAsked(args), undefined, args.join(' ') || '(no arguments)');
});
