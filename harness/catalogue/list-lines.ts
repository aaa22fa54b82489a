// What `chaoslab list` prints: one entry per scenario, its name, its lab (when the list spans
// several) and its whole summary, wrapped under itself at the terminal's width, never cut (a
// summary's first sentence is not its point when it holds an "e.g.").

/** Narrower than this, the summary starts on a line of its own under the name. */
const MIN_TEXT_COLUMNS = 30;
/** The width when the output is not a terminal (a pipe, a file). */
export const DEFAULT_COLUMNS = 100;

/** `text` in lines of at most `width` characters, broken at spaces; a longer word stands alone on its line, whole. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines.length > 0 ? lines : [''];
}

/** The lines of `chaoslab list` for `scenarios`, at most `columns` wide (but for a word longer than a line). */
export function catalogueLines(scenarios: readonly { name: string; lab: string; description: string }[], columns = DEFAULT_COLUMNS): string[] {
  const labs = new Set(scenarios.map((s) => s.lab));
  const tag = (lab: string) => (labs.size > 1 ? `[${lab}] ` : '');
  const nameWidth = Math.max(0, ...scenarios.map((s) => s.name.length));
  const indent = nameWidth + 2;
  const out: string[] = [];
  for (const s of scenarios) {
    const text = `${tag(s.lab)}${s.description}`;
    if (columns - indent < MIN_TEXT_COLUMNS) {
      out.push(s.name, ...wrapWords(text, Math.max(MIN_TEXT_COLUMNS, columns - 4)).map((l) => `    ${l}`));
      continue;
    }
    const [first, ...rest] = wrapWords(text, columns - indent);
    out.push(`${s.name.padEnd(nameWidth)}  ${first}`, ...rest.map((l) => `${' '.repeat(indent)}${l}`));
  }
  return out;
}
