// What a sealed run costs on this machine. Prints only: timings are never asserted (see
// docs/testing.md); `make bench-sandbox` prints the same with more runs.
import t from 'tap';
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { formatCost, measureSealingCost } from '../../../harness/sandbox/cost.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';
import { sealingSkip } from '../../helpers/sandbox.js';

const skip = await sealingSkip();
t.teardown(runCleanups);

t.test('added start-up cost per sealed process (printed, not asserted)', { skip: skip ?? false }, async (t) => {
  const lease = leaseUid(50);
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-cost-')));
  chmodSync(cwd, 0o755);
  t.teardown(() => {
    lease.release();
    rmSync(cwd, { recursive: true, force: true });
  });
  const report = await measureSealingCost({ uid: lease.uid, cwd, runs: 10 });
  for (const line of formatCost(report)) t.comment(line);
  t.equal(report.perProcess.length, 6, 'every variant ran');
});
