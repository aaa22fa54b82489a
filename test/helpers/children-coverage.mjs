// Loaded in every test file's process by .taprc's node-arg, after tap's own loaders: how the
// node processes this file starts report coverage (children-coverage.cjs says why).
import coverage from './children-coverage.cjs';

export const { dropProcessinfo } = coverage;

const endToEnd = /(^|\/)test\/(e2e\/[^/]+|_end-to-end-\d)\.test\.ts$/.test(process.argv[1] ?? '');
coverage.rewriteChildren(endToEnd ? coverage.dropProcessinfo : coverage.processinfoInThread);
