// The import graph's rules (make lint runs them; docs/ARCHITECTURE.md draws the layers).
// A module may import from its own layer and from the layers below it, never from one above,
// and nothing may import in a circle (type-only imports count: a circle of types is still a
// knot for the reader). The publisher, the protocol and the consumers stand alone.

/** The harness's layers, top first: data flows down the list (scenario → run → record → judge). */
const LAYERS = [
  { name: 'entry', path: '^harness/cli(-main)?\\.ts$' },
  { name: 'commands', path: '^harness/commands/' },
  { name: 'grade, chaos, bench', path: '^harness/(grade|chaos|bench)/' },
  { name: 'run', path: '^harness/run/' },
  { name: 'report, catalogue', path: '^harness/(report|catalogue)/' },
  { name: 'labs', path: '^harness/labs/' },
  { name: 'lab-api', path: '^harness/lab-api/' },
  { name: 'faults', path: '^harness/faults/' },
  { name: 'processes, judge', path: '^harness/(processes|judge)/' },
  { name: 'record', path: '^harness/record/' },
  { name: 'scenario, toxiproxy, sandbox', path: '^harness/(scenario|toxiproxy|sandbox)/' },
  { name: 'findings, text, base', path: '^harness/(findings|text|base)/' },
];

/**
 * Imports that run up a layer on purpose (at most 2), each with its reason. A new entry needs a
 * reason as good: usually the right fix is to move the shared piece down.
 */
const UPWARD = [];

const upward = LAYERS.slice(1).map((layer, i) => ({
  name: `layer: ${layer.name} imports no layer above it`,
  severity: 'error',
  from: { path: layer.path, pathNot: UPWARD.map((u) => u.from) },
  to: { path: LAYERS.slice(0, i + 1).map((l) => l.path) },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle, type-only imports included', from: {}, to: { circular: true } },
    ...upward,
    {
      name: 'stand-alone',
      severity: 'error',
      comment: 'the publisher, the protocol and the consumers never import the harness',
      from: { path: '^(publisher|protocol|consumer)/' },
      to: { path: '^harness/' },
    },
    { name: 'protocol-below-publisher', severity: 'error', from: { path: '^protocol/' }, to: { path: '^(publisher|consumer)/' } },
    { name: 'consumer-not-publisher', severity: 'error', from: { path: '^consumer/' }, to: { path: '^publisher/' } },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
// For docs and tests (test/harness/architecture.test.ts): dependency-cruiser ignores extra
// exports of a function, but not of the config object.
Object.defineProperty(module.exports, 'layers', { value: { LAYERS, UPWARD }, enumerable: false });
