// make bench-sandbox: what sealing adds to each consumer process and to each run, on this
// machine (root with namespaces only; says why not otherwise). Medians of interleaved runs, so
// load from other work hits every variant alike. Printed, never asserted (docs/testing.md).
// Then the store flood (bench/store-flood.mjs): a 20 M-row store left by a sealed consumer.
//   node bench/sandbox.bench.mjs [runs=50]
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../dist/harness/base/cleanup.js';
import { formatCost, measureSealingCost } from '../dist/harness/sandbox/cost.js';
import { probeSealing } from '../dist/harness/sandbox/probe.js';
import { leaseUid } from '../dist/harness/sandbox/uids.js';
import { measureStoreFlood } from './store-flood.mjs';

const runs = Number(process.argv[2] ?? 50);
const probe = await probeSealing();
console.log(`probe: ${probe.available ? 'sealing available' : `not available: ${probe.reason}`} (${probe.tookMs} ms, once per harness process)`);
if (!probe.available) process.exit(0);

const lease = leaseUid(0);
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-bench-sandbox-')));
chmodSync(cwd, 0o755);
try {
  for (const line of formatCost(await measureSealingCost({ uid: lease.uid, cwd, runs }))) console.log(line);
} finally {
  lease.release();
  rmSync(cwd, { recursive: true, force: true });
  await runCleanups();
}
// Its own harness process (the CLI), after this one's uid lease is given back.
for (const line of await measureStoreFlood(join(import.meta.dirname, '..'))) console.log(line);
