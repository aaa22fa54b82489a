// The compile cache each entry point turns on (harness/base/compile-cache.ts): where Node has
// module.enableCompileCache (22.1 and later), in the project's node_modules/.cache, or where
// NODE_COMPILE_CACHE says; never while V8 coverage is collected; on Node 20, nothing.
import module from 'node:module';
import { join } from 'node:path';
import t from 'tap';
import { enableCompileCache } from '../../../harness/base/compile-cache.js';
import { projectRoot } from '../../../harness/base/paths.js';

type WithCompileCache = { enableCompileCache?: (directory?: string) => unknown };

t.test('it asks Node for the project cache, or for the one NODE_COMPILE_CACHE names, and not under coverage', async (t) => {
  const target = module as WithCompileCache;
  const original = target.enableCompileCache;
  const env = { coverage: process.env.NODE_V8_COVERAGE, cache: process.env.NODE_COMPILE_CACHE };
  const asked: (string | undefined)[] = [];
  target.enableCompileCache = (directory?: string) => void asked.push(directory);
  t.teardown(() => {
    target.enableCompileCache = original;
    for (const [name, value] of [
      ['NODE_V8_COVERAGE', env.coverage],
      ['NODE_COMPILE_CACHE', env.cache],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  delete process.env.NODE_V8_COVERAGE;
  delete process.env.NODE_COMPILE_CACHE;
  enableCompileCache();
  t.same(asked, [join(projectRoot, 'node_modules', '.cache', 'chaoslab-compile')], 'the project cache');
  process.env.NODE_COMPILE_CACHE = '/somewhere/else';
  enableCompileCache();
  t.same(asked.at(-1), undefined, 'NODE_COMPILE_CACHE: no directory given, so Node takes the variable');
  process.env.NODE_V8_COVERAGE = '/coverage';
  enableCompileCache();
  t.equal(asked.length, 2, 'under coverage: not asked');
  delete process.env.NODE_V8_COVERAGE;
  target.enableCompileCache = undefined;
  t.doesNotThrow(() => enableCompileCache(), 'a Node without it (20): nothing happens');
});
