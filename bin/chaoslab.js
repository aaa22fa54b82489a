#!/usr/bin/env node
// The `chaoslab` command of `npm install -g <clone>` or `npm link`: both link the clone, so the
// command needs its build (dist/) and its node_modules, which `make setup` makes. Without them,
// say so instead of failing with "No such file or directory".
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/harness/cli.js', import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(cli) || !existsSync(new URL('../node_modules/commander', import.meta.url))) {
  process.stderr.write(`chaoslab: this copy is not set up yet: run \`make setup\` in ${root}\n`);
  process.exit(2);
}
await import(cli.href);
