#!/usr/bin/env node
// The Japanese pages (`*.ja.md`) stay in step with their English sources (issue 32). A
// translation names, at the start of each part it translates, the source file and `##` section
// and the SHA-256 of that section's text when it was translated:
//
//   <!-- source: CONTRACT.md "## 3. The wire" sha256:<64 hex> -->
//
// and each source section it leaves out on purpose:
//
//   <!-- source: README.md "## For staff" not translated -->
//
// ("(intro)" is the text before the first `##` heading; the path is relative to the translation.)
// `check` recomputes every stamp and fails naming the file and the section when a source section
// changed since it was translated, is gone, or is new and neither translated nor left out.
// `stamp` writes the current SHA-256 into a translation's stamps once its text is re-translated.
//
// Usage: node scripts/translations.mjs check [root]
//        node scripts/translations.mjs stamp <file.ja.md> [section…]   (no section: every stamp of the file)
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownFiles, sections } from './markdown.mjs';

const STAMP = /<!-- source: (\S+) "(?:## )?([^"]+)" (?:sha256:([0-9a-f]{64}|\?)|(not translated)) -->/g;

/** SHA-256 of one section's text (line ends as LF, surrounding blank lines dropped). */
export function sectionHash(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The stamps of a translation: `{ source, section, sha256 | null, skipped, line }`. */
export function stampsOf(text) {
  const out = [];
  for (const m of text.matchAll(STAMP)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ source: m[1], section: m[2], sha256: m[3] && m[3] !== '?' ? m[3] : null, skipped: m[4] !== undefined, line });
  }
  return out;
}

/** What is out of step in one translation (path relative to root): `{ file, section, why }`. */
export function translationProblems(root, file) {
  const text = readFileSync(join(root, file), 'utf8');
  const stamps = stampsOf(text);
  if (stamps.length === 0) return [{ file, section: null, why: 'names no source section (<!-- source: … sha256:… --> stamps)' }];
  const out = [];
  const bySource = new Map();
  for (const s of stamps) bySource.set(s.source, [...(bySource.get(s.source) ?? []), s]);
  for (const [source, own] of bySource) {
    const sourcePath = join(root, dirname(file), source);
    if (!existsSync(sourcePath)) {
      out.push({ file, section: null, why: `its source ${source} does not exist` });
      continue;
    }
    const current = new Map(sections(readFileSync(sourcePath, 'utf8')).map((s) => [s.name, sectionHash(s.text)]));
    for (const s of own) {
      const where = `${file}:${s.line}`;
      if (!current.has(s.section)) out.push({ file: where, section: s.section, why: `${source} has no section "${s.section}" any more` });
      else if (!s.skipped && s.sha256 === null) out.push({ file: where, section: s.section, why: 'not stamped yet (make translations-stamp)' });
      else if (!s.skipped && s.sha256 !== current.get(s.section))
        out.push({ file: where, section: s.section, why: `${source} changed this section since it was translated: re-translate it, then stamp it` });
    }
    const named = new Set(own.map((s) => s.section));
    for (const name of current.keys())
      if (!named.has(name))
        out.push({ file, section: name, why: `${source} has this section, and the translation neither translates it nor says "not translated"` });
  }
  return out;
}

/** Every `*.ja.md` under root with what is out of step in it. */
export function checkTranslations(root) {
  const files = markdownFiles(root).filter((f) => f.endsWith('.ja.md'));
  return { files, problems: files.flatMap((f) => translationProblems(root, f)) };
}

/** Writes the current SHA-256 into the stamps of `file` (those of `only`, or all); returns the sections stamped. */
export function stamp(file, only = []) {
  const text = readFileSync(file, 'utf8');
  const stamped = [];
  const unknown = new Set(only);
  const next = text.replace(STAMP, (whole, source, section, _sha, skipped) => {
    if (skipped || (only.length > 0 && !only.includes(section))) return whole;
    unknown.delete(section);
    const sourcePath = join(dirname(file), source);
    const found = sections(readFileSync(sourcePath, 'utf8')).find((s) => s.name === section);
    if (!found) throw new Error(`${file}: ${source} has no section "${section}"`);
    stamped.push(section);
    return `<!-- source: ${source} "${section === '(intro)' ? section : `## ${section}`}" sha256:${sectionHash(found.text)} -->`;
  });
  if (unknown.size > 0) throw new Error(`${file}: no stamp for ${[...unknown].map((s) => `"${s}"`).join(', ')}`);
  writeFileSync(file, next);
  return stamped;
}

function main(argv) {
  const [command, ...rest] = argv;
  if (command === 'check') {
    const root = rest[0] ?? process.cwd();
    const { files, problems } = checkTranslations(root);
    for (const p of problems) console.log(`${p.file}: ${p.section === null ? '' : `section "${p.section}": `}${p.why}`);
    if (problems.length > 0) return 1;
    console.log(`${files.length} translations in step with their sources (${files.map((f) => basename(f)).join(', ')})`);
    return 0;
  }
  if (command === 'stamp' && rest.length > 0) {
    const [file, ...only] = rest;
    const stamped = stamp(file, only);
    console.log(`${relative(process.cwd(), file)}: stamped ${stamped.length} section${stamped.length === 1 ? '' : 's'}`);
    return 0;
  }
  console.error('usage: node scripts/translations.mjs check [root] | stamp <file.ja.md> [section…]');
  return 2;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    console.error(`translations: ${e.message}`);
    process.exitCode = 2;
  }
}
