// The restart storm's server (harness/labs/feed/storm/server.ts) answers a subscribe and a ping
// as the contract's frames, whatever the order of their members: a Go consumer's map encodes its
// keys sorted, and a server that looked for `{"op":` first left it unanswered for a whole run.
import { connect } from 'node:net';
import t from 'tap';
import { StormServer } from '../../../../../harness/labs/feed/storm/server.js';
import type { TranscriptEntry } from '../../../../../publisher/transcript.js';

const ACCOUNT = `0x${'a'.repeat(40)}`;
const SNAPSHOT = '{"op":"snapshot","cursor":"1:00000000000001:0000","blockHash":"0xb1","state":{"balances":{}}}\n';
const rules = { roundMs: 1000, roundMaxMs: 2000, minAtCap: 1, preCapSteps: 1, maxAttempts: 5 };

/** Sends `lines` to process 1's listener and resolves with the first `count` lines it answers. */
async function exchange(server: StormServer, lines: string[], count: number): Promise<string[]> {
  const socket = connect(server.address(1));
  const got: string[] = [];
  let carry = '';
  return new Promise((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      const parts = (carry + chunk.toString('utf8')).split('\n');
      carry = parts.pop() ?? '';
      got.push(...parts);
      if (got.length >= count) {
        socket.destroy();
        resolve(got.slice(0, count));
      }
    });
    socket.on('connect', () => socket.write(lines.join('')));
  });
}

t.test('a subscribe and a ping with their members in any order are answered', async (t) => {
  const transcript: TranscriptEntry[] = [];
  const server = await StormServer.start({ processes: 1, rules, snapshot: SNAPSHOT, events: [], onTranscript: (e) => transcript.push(e), clock: () => 0 });
  t.teardown(() => server.close());
  const sorted = `{"blockHash":null,"client":"c","cursor":null,"op":"subscribe","topics":["${ACCOUNT}"]}\n`;
  const answers = await exchange(server, ['not json\n', sorted, '{"id":7,"op":"ping"}\n'], 2);
  t.same(answers, [SNAPSHOT.trimEnd(), '{"op":"pong","id":7}'], 'the snapshot, then the pong');
  t.ok(
    transcript.some((e) => e.kind === 'note' && /not a subscribe, ping or pong: ignored/.test(e.text)),
    'the line that is no frame is noted and ignored',
  );
});
