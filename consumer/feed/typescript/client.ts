// Entry point of the TypeScript reference feed consumer: `node dist/consumer/feed/typescript/client.js`.
// Everything (environment, store, wire, heartbeats, backoff, fault hooks) lives in
// feed-client.ts so that a mutant can reuse it and override a single step.
import { main } from './feed-client.js';

await main();
