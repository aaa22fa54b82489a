// JSON.parse forgets how a number was written: `7`, `7.0` and `7e0` all become 7. The contract's
// ping id is "a JSON integer (no fraction, no exponent)", which only the source text can show,
// and Node 20 has no JSON.parse source access. This scanner finds the literal text of one
// top-level member in a text that JSON.parse has already accepted.

const PRIMITIVE = /-?[0-9][0-9.eE+-]*|true|false|null/y;

/** The number, true, false or null literal starting at `i`, if one does. */
function primitiveAt(text: string, i: number): string | undefined {
  PRIMITIVE.lastIndex = i;
  return PRIMITIVE.exec(text)?.[0];
}

/** Index just past the string literal that starts at `start` (the opening quote). */
function skipString(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/**
 * The source text of the value of top-level member `key` (the last one, as JSON.parse keeps
 * the last duplicate), when that value is a number, string, true, false or null; undefined
 * when the member is absent or is an object or array. `text` must be a JSON object text that
 * JSON.parse accepted.
 */
export function rawTopLevelMember(text: string, key: string): string | undefined {
  let depth = 0;
  let expecting: 'key' | 'value' = 'key';
  let currentKey: string | undefined;
  let raw: string | undefined;
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '"') {
      const end = skipString(text, i);
      if (depth === 1 && expecting === 'key') currentKey = JSON.parse(text.slice(i, end)) as string;
      else if (depth === 1 && currentKey === key) raw = text.slice(i, end);
      i = end;
    } else if (c === '{' || c === '[') {
      depth++;
      i++;
    } else if (c === '}' || c === ']') {
      depth--;
      i++;
    } else if (depth === 1 && c === ':') {
      expecting = 'value';
      if (currentKey === key) raw = undefined; // a later duplicate replaces an earlier one
      i++;
    } else if (depth === 1 && c === ',') {
      expecting = 'key';
      i++;
    } else if (depth === 1 && expecting === 'value' && primitiveAt(text, i)) {
      const literal = primitiveAt(text, i)!;
      if (currentKey === key) raw = literal;
      i += literal.length;
    } else {
      i++; // whitespace, or anything inside a nested value
    }
  }
  return raw;
}
