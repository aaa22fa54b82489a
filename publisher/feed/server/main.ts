#!/usr/bin/env node
// The reference push server as a program of its own, under the server contract
// (publisher/feed/CONTRACT.md): `node dist/publisher/feed/server/main.js` with the CHAOSLAB_*
// variables set. It reads the chain only from the outbox (polled), serves one port, and keeps
// nothing that a restart could lose. This is the process chaoslab grades a student's server
// against; the harness's in-process publisher is the same code with more streams.

import { runServer } from './program.js';

await runServer();
