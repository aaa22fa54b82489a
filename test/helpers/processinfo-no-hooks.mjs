// Loaded first in every test file's process (the Makefile's NODE_OPTIONS, whose --import runs
// before tap's own --import of processinfo): processinfo then keeps its main-thread half (the
// process's record, V8's coverage, written at exit) and registers no module hooks, as the unit
// files' node children already run (children-coverage.cjs says why coverage needs no more).
// Before Node 24.13 it registers them with module.register, on Node's loader thread, where
// every module the file imports goes through them and sends its source back: 0.25-0.35 s of CPU
// a test file. Where processinfo uses synchronous hooks instead (24.13+), nothing changes.
// `npx tap <file>` without this keeps tap's own way; the tests pass either way.
import module from 'node:module';

const register = module.register;
if (typeof register === 'function')
  module.register = function registerAllButProcessinfo(specifier, ...rest) {
    if (String(specifier).includes('/@tapjs/processinfo/')) return;
    return register.call(this, specifier, ...rest);
  };
