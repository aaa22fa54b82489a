// The system programs sealed mode runs, and runTool's reports.
import t from 'tap';
import { findTool, missingTools, requireTool, runTool, TOOL_PACKAGES, type ToolName } from '../../../harness/sandbox/tools.js';

t.test('programs by absolute path, with their Debian package', async (t) => {
  t.match(findTool('sh'), /^\/(usr\/)?s?bin\/sh$/);
  t.equal(findTool('sh'), findTool('sh'), 'looked up once');
  t.equal(findTool('no-such-program' as ToolName), undefined);
  t.throws(() => requireTool('no-such-program' as ToolName), /no-such-program is not installed/);
  t.same(missingTools(['sh', 'no-such-program' as ToolName]), ['no-such-program']);
  t.equal(TOOL_PACKAGES.nft, 'nftables');
  t.equal(TOOL_PACKAGES.tini, 'tini');
});

t.test('runTool: status, output, input, signals, time-outs', async (t) => {
  const sh = requireTool('sh');
  const ok = await runTool([sh, '-c', 'echo out; echo err >&2']);
  t.same([ok.code, ok.signal, ok.stdout, ok.stderr], [0, null, 'out\n', 'err\n']);
  t.equal(ok.summary, 'exit 0: err');
  const input = await runTool([sh, '-c', 'cat'], { input: 'fed' });
  t.equal(input.stdout, 'fed');
  const failed = await runTool([sh, '-c', 'exit 3']);
  t.equal(failed.summary, 'exit 3');
  const killed = await runTool([sh, '-c', 'kill -TERM $$']);
  t.equal(killed.signal, 'SIGTERM');
  t.match(killed.summary, /^killed by SIGTERM/);
  const slow = await runTool([sh, '-c', 'exec sleep 5'], { timeoutMs: 100 });
  t.match(slow.summary, /^timed out/);
  const env = await runTool(['/usr/bin/env'], { env: { A: 'b' } });
  t.match(env.stdout, /^A=b$/m, 'the given environment');
  t.notMatch(env.stdout, /^(HOME|PATH|USER)=/m, 'and not ours (tap itself may add its NODE_OPTIONS)');
  await t.rejects(runTool([]), /empty argv/);
});
