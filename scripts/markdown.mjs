// What the doc checks (scripts/check-doc-links.mjs, scripts/translations.mjs) read of a Markdown
// file: its `##` sections, its headings' anchors as GitHub makes them, and its relative links.
// Lines inside code fences are never headings or links (a `# comment` in a shell block is not).
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'reports', '.tools', '.tap', '.node-versions']);

/** Each line with whether it is inside a code fence (the fence lines themselves count as inside). */
export function fencedLines(text) {
  let fence = null;
  return text.split('\n').map((line) => {
    const m = FENCE.exec(line);
    if (fence === null && m) {
      fence = m[1][0];
      return { line, fenced: true };
    }
    if (fence !== null) {
      if (m && m[1][0] === fence) fence = null;
      return { line, fenced: true };
    }
    return { line, fenced: false };
  });
}

/**
 * The file's sections: the text before its first `## ` heading (named "(intro)"), then one per
 * `## ` heading, from the heading to the next one. `### ` and deeper stay in their section.
 */
export function sections(text) {
  const out = [{ name: '(intro)', lines: [] }];
  for (const { line, fenced } of fencedLines(text.replace(/\r\n/g, '\n'))) {
    const heading = fenced ? null : /^## +(.*?)\s*#*\s*$/.exec(line);
    if (heading) out.push({ name: heading[1], lines: [] });
    out.at(-1).lines.push(line);
  }
  return out.map(({ name, lines }) => ({ name, text: lines.join('\n').trim() }));
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading) {
  const plain = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return plain.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Every anchor a file offers: its headings' slugs (repeats get -1, -2, …) and `<a id>`/`name`s. */
export function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const { line, fenced } of fencedLines(text)) {
    if (fenced) continue;
    const heading = /^#{1,6} +(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  }
  return out;
}

/** The links of a file outside code fences and inline code: `[text](target)` with its line number. */
export function links(text) {
  const out = [];
  fencedLines(text).forEach(({ line, fenced }, i) => {
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1], line: i + 1 });
  });
  return out;
}

/** Every Markdown file of the project under root, as paths relative to it (build output and reports left out). */
export function markdownFiles(root, dir = root) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...markdownFiles(root, join(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) out.push(relative(root, join(dir, entry.name)));
  }
  return out.sort();
}
