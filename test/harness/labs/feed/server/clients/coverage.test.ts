// Whether each client of the harness met the server as its kind means to, on hand-made journals:
// a bad client that sent its bad frame; a half-open client silent past CHAOSLAB_PING_MS while
// open; a pinger heard past CHAOSLAB_IDLE_MS; a slow or never-reading client whose queue
// overflowed (reset, ended by the server, or a backlog past what the queue and the path hold).
// Each also without its effect, and a client that never connected.
import t from 'tap';
import type { Expected } from '../../../../../../harness/labs/feed/check/state.js';
import type { FeedPlan, ServerUnderTestPlan } from '../../../../../../harness/labs/feed/scenario/plan.js';
import { clientCoverage } from '../../../../../../harness/labs/feed/server/clients/coverage.js';
import type { ClientKind } from '../../../../../../harness/labs/feed/server/clients/schema.js';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import type { TranscriptEvent } from '../../../../../../publisher/transcript.js';
import { cursor, event, eventLine } from '../../../../../helpers/feed-events.js';

const plan = { server: { pingMs: 500, idleMs: 3000, queueLimit: 100 } } as FeedPlan;
const chain = Array.from({ length: 2000 }, (_, i) => event(11 + Math.floor(i / 10), i % 10));
const expected = { events: chain } as unknown as Expected;
const snapshot = `${JSON.stringify({ op: 'snapshot', cursor: cursor(10, 0), blockHash: `0x${'d'.repeat(64)}`, balances: {} })}\n`;

function row(kind: ClientKind, events: (TranscriptEvent & { t: number })[]) {
  const journal = events.map((e) => ({ type: 'wire', stream: 'client:c', conn: 1, ...e }) as JournalEntry);
  const under = { clients: [{ name: 'c', kind, quiet: false, instance: 1 }] } as unknown as ServerUnderTestPlan;
  return clientCoverage(journal, plan, under, expected)[0]!;
}
const open = { kind: 'open' as const, t: 100 };
const subscribe = { kind: 'recv' as const, line: '{"op":"subscribe"}\n', t: 110 };
const closedBy = (by: 'publisher' | 'consumer', t: number) => ({ kind: 'close' as const, by, reason: by === 'consumer' ? 'the run is over' : 'closed', t });

t.test('a client that never connected took no effect', async (t) => {
  const r = row('garbage', []);
  t.same([r.kind, r.took, r.fault], ['garbage', false, 'client c']);
  t.equal(r.how, 'the garbage client `c` never connected');
});

t.test('bad clients: connected and sent the bad frame', async (t) => {
  const r = row('garbage', [open, { kind: 'recv', line: 'junk\n', t: 120 }, closedBy('publisher', 130)]);
  t.equal(r.took, true);
  t.equal(r.how, 'the garbage client `c` connected and sent a line that is not JSON as its first frame at 0.120 s; it was closed by the server at 0.130 s');
  const mute = row('oversized', [open, closedBy('consumer', 900)]);
  t.equal(mute.took, false);
  t.equal(mute.how, 'the oversized client `c` connected but never sent its bad frame');
});

t.test('half-open: silent past CHAOSLAB_PING_MS while its connection lived', async (t) => {
  const r = row('half-open', [open, subscribe, { kind: 'send', line: snapshot, t: 120 }, closedBy('publisher', 3110)]);
  t.equal(r.took, true);
  t.match(r.how, /^the half-open client `c` fell silent at 0\.110 s and its connection lived 3\.000 s more \(CHAOSLAB_PING_MS 500 ms\)/);
  const short = row('half-open', [open, subscribe, closedBy('consumer', 400)]);
  t.equal(short.took, false);
  t.match(short.how, /silent only 0\.290 s before its connection ended .* no ping was due$/);
});

t.test('pinger: pinged and was heard past CHAOSLAB_IDLE_MS', async (t) => {
  const ping = (t: number) => ({ kind: 'recv' as const, line: `{"op":"ping","id":${t}}\n`, t });
  const r = row('pinger', [open, subscribe, ping(400), ping(800), closedBy('consumer', 4000)]);
  t.equal(r.took, true);
  t.match(r.how, /^the pinger `c` sent 2 pings over 3\.890 s, longer than CHAOSLAB_IDLE_MS \(3000 ms\)/);
  const brief = row('pinger', [open, subscribe, ping(400), closedBy('consumer', 2000)]);
  t.equal(brief.took, false);
  t.match(brief.how, /not longer than CHAOSLAB_IDLE_MS \(3000 ms\): whether a heard client stays open was not tested$/);
});

t.test('readers: the queue overflowed — reset, ended by the server, or a backlog past the bound; else untested', async (t) => {
  const reading = (read: number, end: (TranscriptEvent & { t: number })[]) => [
    open,
    subscribe,
    { kind: 'send' as const, line: snapshot, t: 120 },
    ...chain.slice(0, read).map((e, i) => ({ kind: 'send' as const, line: eventLine(e), t: 130 + i })),
    { kind: 'note' as const, text: `scene over: ${read + 1} lines read`, t: 5000 },
    ...end,
  ];
  const reset = row('slow-reader', reading(80, [{ kind: 'send', line: '{"op":"reset","reason":"slow-consumer"}\n', t: 6000 }, closedBy('consumer', 6001)]));
  t.equal(reset.took, true);
  t.match(reset.how, /^the slow-reader client `c` overflowed its queue: the server reset it \(slow-consumer\) after 80 events, 1 920 events behind/);
  const far = row('slow-reader', reading(100, [closedBy('consumer', 6000)]));
  t.equal(far.took, true, '1 900 behind: past 2 x 100 + 500, the checker names the missing reset');
  t.match(far.how, /it was 1 900 events behind when the script was over, past the 700 the queue \(limit 100\) and the socket buffers can hold$/);
  const near = row('slow-reader', reading(1500, [closedBy('consumer', 6000)]));
  t.equal(near.took, false);
  t.match(
    near.how,
    /^the slow-reader client `c` never overflowed its queue: it was not reset, 500 events behind when the script was over, within the 700 events/,
  );
  const idle = row('never-reads', reading(0, [closedBy('publisher', 5500)]));
  t.equal(idle.took, true);
  t.match(idle.how, /^the never-reads client `c` read nothing and the server ended it: it was closed by the server at 5\.500 s/);
});
