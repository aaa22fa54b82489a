#!/usr/bin/env node
// Every relative link of the project's Markdown resolves (issue 32: the README and docs/ are
// split by audience, and a moved section must not leave a dead link behind): the file or folder
// exists, and an anchor (`file.md#section`, `#section`) names a heading of that file as GitHub
// makes its anchors. Web links (http:, https:, mailto:) are not fetched.
//
// Usage: node scripts/check-doc-links.mjs [root]   (default: the current directory)
// Prints one line per broken link (`file:line: target: why`) and exits 1 when there is one.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchors, links, markdownFiles } from './markdown.mjs';

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** The broken links of the Markdown files under root: `{ file, line, target, why }`. */
export function brokenLinks(root) {
  const anchorCache = new Map();
  const anchorsOf = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')));
    return anchorCache.get(path);
  };
  const out = [];
  for (const file of markdownFiles(root)) {
    const path = join(root, file);
    for (const { target, line } of links(readFileSync(path, 'utf8'))) {
      const why = problem(root, path, target, anchorsOf);
      if (why) out.push({ file, line, target, why });
    }
  }
  return out;
}

function problem(root, from, target, anchorsOf) {
  if (EXTERNAL.test(target)) return null;
  const [rawPath, anchor] = target.split('#', 2);
  const path = rawPath === '' ? from : normalize(join(dirname(from), decodeURIComponent(rawPath)));
  if (relative(root, path).startsWith('..')) return 'points outside the project';
  if (!existsSync(path)) return 'no such file';
  if (anchor === undefined || anchor === '') return null;
  if (!path.endsWith('.md') || statSync(path).isDirectory()) return null;
  return anchorsOf(path).has(decodeURIComponent(anchor)) ? null : `no heading with the anchor #${anchor} in ${relative(root, path)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? process.cwd();
  const broken = brokenLinks(root);
  for (const b of broken) console.log(`${b.file}:${b.line}: ${b.target}: ${b.why}`);
  if (broken.length > 0) {
    console.log(`${broken.length} broken link${broken.length === 1 ? '' : 's'}`);
    process.exit(1);
  }
  console.log('every relative link of the Markdown files resolves');
}
