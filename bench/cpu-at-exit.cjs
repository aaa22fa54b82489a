// Loaded by the bench with --require (NODE_OPTIONS) into a harness run: when the harness process
// (dist/harness/cli.js) exits, its own CPU time in seconds is appended to BENCH_CPU_FILE. The
// consumers it starts load this too and write nothing.
const { appendFileSync } = require('node:fs');

const file = process.env.BENCH_CPU_FILE;
if (file && process.argv[1]?.endsWith('/harness/cli.js')) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(file, `${(user + system) / 1e6}\n`);
  });
}
