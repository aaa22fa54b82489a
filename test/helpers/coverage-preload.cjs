// A unit file's node children load this (NODE_OPTIONS --require, put there by
// children-coverage.cjs in place of tap's processinfo --import): processinfo's main-thread half,
// i.e. the process's record and V8's coverage, written at exit; its children get the same.
'use strict';
const { dirname, join } = require('node:path');
const { processinfoInThread, rewriteChildren } = require('./children-coverage.cjs');

// processinfo's package exports no CommonJS entry for this; its file is there beside index.js.
require(join(dirname(require.resolve('@tapjs/processinfo')), 'get-process-info.js')).getProcessInfo();
rewriteChildren(processinfoInThread);
