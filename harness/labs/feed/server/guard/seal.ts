// A sealed run's server process (docs/sandbox.md, "The server under test"): before it starts,
// its listen port is the one port it may answer on, the outbox is shared with it read-only, and
// its room is made; it is then started confined as the server's own uid (ProcessRunner confines
// the `server` role). Unsealed, nothing is done and the server runs as the harness's user.

import type { RunContext } from '../../../../lab-api/lab.js';
import type { FeedPlan } from '../../scenario/plan.js';

/** Seals the server about to be started with `env` (the server contract's variables); its room, or undefined when the run is not sealed. */
export function sealServerProcess(ctx: RunContext<FeedPlan>, env: Record<string, string>): string | undefined {
  const seal = ctx.serverSeal;
  if (!seal) return undefined;
  const port = Number(env.CHAOSLAB_PORT);
  const outbox = env.CHAOSLAB_OUTBOX_DB;
  if (!Number.isInteger(port) || outbox === undefined) throw new Error('a sealed server needs CHAOSLAB_PORT and CHAOSLAB_OUTBOX_DB in its environment');
  seal.serve(port);
  seal.shareReadOnly(outbox);
  return seal.room();
}
