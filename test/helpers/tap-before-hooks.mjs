// Loaded by .taprc's node-arg, in each test file's process only, before ./ts-loader.mjs
// registers its hooks: tap and the few hundred modules it imports load on the main thread, not
// each across the loader thread that module.register hooks run on before Node 24.13 (importing
// tap: 0.25 s of CPU bare, 0.45 s across it). The test file's own `import t from 'tap'` then
// finds it loaded. Not in ts-loader.mjs: node children load that too, and tap must not start
// a test in them.
import 'tap';
