// The server contract's tests (test/publisher/feed/server-contract*.test.ts): the servers they
// hold to it, and what they read off a client's frames.
import t, { type Test } from 'tap';
import { formatCursor } from '../../protocol/feed/cursor.js';
import type { SimChain } from '../../publisher/feed/chain/chain.js';
import { type FeedClient, applyFrames, chainEvents } from './feed-lab.js';
import type { ServerUnderTest } from './feed-server-rig.js';

/** Every server the contract's tests start: add a command to hold another server to the same rules. */
export const SERVERS: readonly ServerUnderTest[] = [
  { name: 'python', command: 'python3 publisher/feed/python/server.py' },
  { name: 'typescript', command: 'node dist/publisher/feed/server/main.js' },
];

/** Runs `fn` once per server, as subtests named `<name> [<server>]`. */
export function forEachServer(name: string, fn: (t: Test, server: ServerUnderTest) => Promise<void>): void {
  for (const server of SERVERS)
    t.test(`${name} [${server.name}]`, (tt) => {
      tt.setTimeout(240_000);
      return fn(tt, server);
    });
}

export const cursorOf = (chain: SimChain, block: number, logIndex: number) => formatCursor({ chainId: chain.chainId, blockNumber: block, logIndex });
export const lastCursorOfBlock = (chain: SimChain, n: number) => cursorOf(chain, n, Math.max(0, chain.canonicalAt(n)!.logs.length - 1));
export const eventCursors = (client: FeedClient) => client.ofOp('event').map((e) => e.cursor);
export const everyEvent = (chain: SimChain, topics: readonly string[]) => chainEvents(chain, topics, cursorOf(chain, 0, 0));
/** The client holds every event of `topics` up to the chain's head. */
export const atHead = (chain: SimChain, topics: readonly string[]) => (c: FeedClient) =>
  applyFrames(c.frames, topics).cursor === everyEvent(chain, topics).at(-1);

/**
 * Cheap where `atHead` is not: the last event frame is the chain's last event of `topics`. Only for
 * streams without a reorganisation (an abandoned branch's last event can have the same cursor),
 * and only to wait: the rows themselves are asserted afterwards. `atHead` replays every frame
 * at each 5 ms poll: over the 20 000 and 30 000 rows of the slow clients' tests
 * (test/publisher/feed/server-contract-slow-clients.test.ts), 37 s of CPU where this takes 11.
 */
export function lastEventReached(chain: SimChain, topics: readonly string[]): (c: FeedClient) => boolean {
  const followed = new Set(topics);
  let last: string | undefined;
  for (let n = chain.head.number; n >= 0 && last === undefined; n--) {
    const logs = chain.canonicalAt(n)!.logs.filter((l) => followed.has(l.from) || followed.has(l.to));
    if (logs.length > 0) last = cursorOf(chain, n, logs.at(-1)!.logIndex);
  }
  return (c) => {
    for (let i = c.frames.length - 1; i >= 0; i--) {
      const frame = c.frames[i]!;
      if ('op' in frame && frame.op === 'event') return frame.cursor === last;
    }
    return false;
  };
}
