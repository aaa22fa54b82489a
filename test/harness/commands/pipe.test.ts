// Output to a closed pipe (`chaoslab list | head -1`) ends the process quietly: no stack trace,
// the exit status of a process stopped by SIGPIPE (141), or the command's own when it had
// finished. Runs the compiled CLI (npx tsc first), several times: the race it fixes is timing.
import { spawn } from 'node:child_process';
import t from 'tap';
import { cli, root } from '../../helpers/cli.js';

function listInto(closeAfterFirstChunk: boolean): Promise<{ code: number | null; signal: string | null; stderr: string; got: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'list'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let got = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    if (closeAfterFirstChunk)
      child.stdout.once('data', (d: Buffer) => {
        got = d.toString().split('\n')[0]!;
        child.stdout.destroy();
      });
    else child.stdout.destroy();
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr, got }));
  });
}

for (const closeAfterFirstChunk of [false, true]) {
  t.test(`stdout closed ${closeAfterFirstChunk ? 'after the first line' : 'before any output'}: quiet, five times`, { timeout: 120_000 }, async (t) => {
    for (let i = 0; i < 5; i++) {
      const r = await listInto(closeAfterFirstChunk);
      t.equal(r.signal, null, `try ${i + 1}: not killed`);
      t.ok(r.code === 0 || r.code === 141, `try ${i + 1}: exit 0 or 141, got ${r.code}`);
      t.equal(r.stderr, '', `try ${i + 1}: nothing on stderr (no EPIPE stack trace)`);
      if (closeAfterFirstChunk) t.match(r.got, /^ack-crash\s/, 'the first line arrived');
    }
  });
}
