// The environment for a child process that runs a tool from node_modules (dependency-cruiser,
// the TypeScript compiler): without tap's coverage. Its code is not ours, so its coverage counts
// for nothing, but V8 would still count every block of it and write it out at exit (over a
// second of CPU a run for a tool that loads TypeScript).
import { dropProcessinfo } from './children-coverage.mjs';

export function toolEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { NODE_V8_COVERAGE: _, ...rest } = env;
  return dropProcessinfo(rest);
}
