// tap adds its processinfo loader (--import=…/@tapjs/processinfo/…) to the NODE_OPTIONS of every
// process a test starts, so that child processes report coverage. An end-to-end file's coverage
// counts for nothing (test/coverage-map.mjs), and the loader costs each node child some 0.2 s of
// CPU and a coverage file: the CLI, sealed workers, consumers and servers, some 700 processes of
// the two end-to-end chains. So in an end-to-end process it is taken out again. (A unit file's
// children keep it: the reference consumers, the mutants and the sealed worker are covered by the
// processes unit files start.) Loaded after tap's own loaders by .taprc's node-arg, so this
// process-on-spawn listener runs after tap's, which added it.

/** `env` with tap's processinfo loader taken out of its NODE_OPTIONS (and NODE_OPTIONS dropped when nothing is left), in place. */
export function dropProcessinfo(env) {
  const options = env.NODE_OPTIONS;
  if (!options?.includes('@tapjs/processinfo')) return env;
  const kept = options.split(/\s+/).filter((option) => option && !option.includes('@tapjs/processinfo'));
  if (kept.length > 0) env.NODE_OPTIONS = kept.join(' ');
  else delete env.NODE_OPTIONS;
  return env;
}

const endToEnd = /(^|\/)test\/(e2e\/[^/]+|_end-to-end-\d)\.test\.ts$/.test(process.argv[1] ?? '');
const spawnHooks = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
if (endToEnd) spawnHooks?.listeners.push((child) => dropProcessinfo(child.env));
