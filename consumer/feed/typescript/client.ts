// Entry point of the TypeScript reference feed consumer: `node dist/consumer/feed/typescript/client.js`.
// The consumer's parts live in the modules feed-client.ts lists, so that a mutant can reuse
// them and override a single step.
import { main } from './feed-client.js';

await main();
