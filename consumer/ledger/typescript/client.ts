// Entry point of the TypeScript reference consumer: `node dist/consumer/ledger/typescript/client.js`.
// Everything (environment, store, wire, fault hook) lives in ledger-client.ts so that the
// mutants in consumer/ledger/mutants/ can reuse it and override a single step.
import { main } from './ledger-client.js';

await main();
