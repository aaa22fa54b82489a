// The TypeScript reference feed consumer (seed 002, T18 "real-time systems") in one import: the
// twin of consumer/feed/python/client.py, following consumer/feed/CONTRACT.md exactly.
// The lesson: realtime is a latency property, not losing anything is a correctness property,
// and they need different mechanisms, each in its own module:
//   - wire.ts (with json.ts): framing and frame validation (section 2);
//   - store.ts: the schema, and every frame that changes the store handled in ONE transaction
//     together with the cursor; revoke undoes the events of abandoned blocks (sections 3, 4);
//   - backoff.ts: reconnects with jittered exponential backoff (section 6);
//   - hooks.ts: the fault hooks (section 7); environment.ts: the environment (section 1);
//   - steps.ts: the named steps and what each frame does (sections 2, 4, 5);
//   - connection.ts and main-loop.ts: connect, subscribe with the durable cursor, read,
//     heartbeats both ways and an idle timeout that reads before it judges (sections 1, 5);
//   - session.ts: what one process holds while it runs.
// Every step is looked up through `session.steps`, so a mutant imports this module and
// overrides one named step (as in consumer/ledger/mutants/), never a copy of the reference.

export * from './backoff.js';
export * from './connection.js';
export * from './environment.js';
export * from './hooks.js';
export * from './main-loop.js';
export * from './session.js';
export * from './steps.js';
export * from './store.js';
export * from './wire.js';
