#!/usr/bin/env node
// No function over 80 lines without a reason (issue 30, "units a reader can hold"): every
// function-like node whose body spans more than MAX_LINES lines fails, unless the comment right
// above it has a line starting with `Long because` that gives the reason in words.
// A nested function counts on its own, and its lines also count in the function around it: a
// long function does not become short by holding its steps as closures.
//
// Usage: node scripts/check-function-length.mjs [--skip <folder>]... [--known <file>] [<folder>...]
// (default folders: harness publisher protocol consumer). `--skip consumer` reports nothing
// under consumer/ (its reference consumers are being split on their own). `--known <file>`
// names long functions not split yet, one `path name` a line: they are tolerated, and a line
// that names no long function any more fails, so the list only shrinks.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 80;
const REASON = /^\s*(?:\/\/+|\/?\*+)?\s*Long because\b/m;

function parseArgs(argv) {
  const roots = [];
  const skip = [];
  let known;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--skip') skip.push(stripSlash(argv[++i] ?? ''));
    else if (argv[i] === '--known') known = argv[++i];
    else roots.push(stripSlash(argv[i]));
  }
  return { roots: roots.length > 0 ? roots : ['harness', 'publisher', 'protocol', 'consumer'], skip, known };
}

function stripSlash(path) {
  return path.replace(/\/+$/, '');
}

function* typeScriptFiles(dir) {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'node_modules') yield* typeScriptFiles(path);
    } else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) yield path;
  }
}

/** The name a reader finds the function by: its own, its variable's, its property's or its method's. */
function nameOf(node, source) {
  if (node.name) return `${enclosingClassPrefix(node)}${node.name.getText(source)}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return parent.left.getText(source);
  }
  return undefined;
}

function enclosingClassPrefix(node) {
  const isMember = ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node);
  return isMember && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
}

/** The statement a function's leading comment sits above (a `const f = () =>` has it on the `const`). */
function commentAnchor(node) {
  let anchor = node;
  while (
    anchor.parent &&
    !ts.isSourceFile(anchor.parent) &&
    !ts.isBlock(anchor.parent) &&
    !ts.isClassLike(anchor.parent) &&
    !ts.isObjectLiteralExpression(anchor.parent) &&
    !ts.isModuleBlock(anchor.parent)
  ) {
    if (ts.isCallExpression(anchor.parent) || ts.isArrayLiteralExpression(anchor.parent)) break;
    anchor = anchor.parent;
  }
  return anchor;
}

function hasReason(node, source) {
  const text = source.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, commentAnchor(node).getFullStart()) ?? [];
  return ranges.some((range) => REASON.test(text.slice(range.pos, range.end)));
}

function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessor(node) ||
    ts.isSetAccessor(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

function bodyLines(node, source) {
  const start = source.getLineAndCharacterOfPosition(node.body.getStart(source)).line;
  const end = source.getLineAndCharacterOfPosition(node.body.getEnd()).line;
  return end - start + 1;
}

function longFunctions(path, cwd) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (isFunctionLike(node) && node.body) {
      const name = nameOf(node, source);
      const lines = bodyLines(node, source);
      // An anonymous callback (`items.map((x) => ...)`) is part of the function that holds it.
      if (name !== undefined && lines > MAX_LINES && !hasReason(node, source)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push({ path: relative(cwd, path), line, name, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The `path name` lines of a --known file (blank lines and `#` comments skipped). */
function knownList(file) {
  if (!file) return new Set();
  return new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

/**
 * The check over `argv` (the command line's arguments) with paths relative to `cwd`: its exit
 * code and the lines it prints (stdout), then what it says on stderr. Exported so that its tests
 * run it in their own process, where TypeScript is loaded once.
 */
export function checkFunctionLength(argv, cwd = process.cwd()) {
  const { roots, skip, known } = parseArgs(argv);
  const skipped = (path) => skip.some((folder) => path === folder || path.startsWith(`${folder}/`));
  const tolerated = knownList(known && resolve(cwd, known));
  const long = roots
    .flatMap((root) => [...typeScriptFiles(resolve(cwd, root))])
    .filter((path) => !skipped(relative(cwd, path)))
    .flatMap((path) => longFunctions(path, cwd));
  const failures = long.filter((f) => !tolerated.has(`${f.path} ${f.name}`)).map((f) => `${f.path}:${f.line} ${f.name} ${f.lines} lines`);
  const stillLong = new Set(long.map((f) => `${f.path} ${f.name}`));
  const stale = [...tolerated]
    .filter((entry) => !stillLong.has(entry))
    .map((entry) => `${known}: ${entry} is not over ${MAX_LINES} lines any more: take it off the list`);
  const stderr = failures.length > 0 ? [`${failures.length} function(s) over ${MAX_LINES} lines without a "Long because" line in the comment above them`] : [];
  return { code: failures.length > 0 || stale.length > 0 ? 1 : 0, stdout: [...failures, ...stale], stderr };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { code, stdout, stderr } = checkFunctionLength(process.argv.slice(2));
  for (const line of stdout) console.log(line);
  for (const line of stderr) console.error(line);
  process.exitCode = code;
}
