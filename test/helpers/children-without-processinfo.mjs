// tap adds its processinfo loader (--import=…/@tapjs/processinfo/…) to the NODE_OPTIONS of every
// process a test starts, so that child processes can report coverage. Ours count for nothing
// (test/coverage-map.mjs: in-process modules only), and the loader costs each node child some
// 0.2 s of CPU and a coverage file: the CLI, sealed workers, consumers and servers, well over a
// thousand processes in `make test`. This takes it out again. Loaded after tap's own loaders by
// .taprc's node-arg, so its process-on-spawn listener runs after tap's, which added it.
const spawnHooks = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
spawnHooks?.listeners.push((child) => {
  const options = child.env.NODE_OPTIONS;
  if (!options?.includes('@tapjs/processinfo')) return;
  const kept = options.split(/\s+/).filter((option) => option && !option.includes('@tapjs/processinfo'));
  if (kept.length > 0) child.env.NODE_OPTIONS = kept.join(' ');
  else delete child.env.NODE_OPTIONS;
});
