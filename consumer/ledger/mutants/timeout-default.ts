// Mutant "timeout-default": a missing, zero or unparsable CHAOSLAB_TIMEOUT_MS is quietly
// replaced by a default (3000 ms) instead of being refused.
//
// It breaks this rule of the contract (consumer/ledger/CONTRACT.md, section 1, from the seed's
// exit codes, seeds/000_c5229d556f786ea5.txt: "64 missing or invalid environment (nothing
// connected)"): "If a required variable is missing or invalid (a port that is not a number, a
// timeout of 0, …), print a clear message to stderr naming the variable and exit with 64
// before connecting anything." A default hides a harness (or deployment) that is misconfigured.
//
// chaoslab always gives a valid timeout otherwise — a near miss.
// Killed by: bad-environment-timeout — given CHAOSLAB_TIMEOUT_MS=0, this consumer connects,
// processes the stream and exits 0 instead of exiting 64 before connecting.
// Python twin: consumer/ledger/mutants/timeout-default.py.
import { main } from '../typescript/ledger-client.js';

const given = process.env.CHAOSLAB_TIMEOUT_MS ?? '';
if (!/^[1-9][0-9]*$/.test(given)) process.env.CHAOSLAB_TIMEOUT_MS = '3000'; // BUG: a bad value becomes the default
await main();
