// A tagged template that escapes every interpolated value unless it is already markup: the page
// is built from `html\`…\`` pieces, so a value can only reach the page unescaped by being made
// with `html` (or `raw`, for the SVG the diagram drew with its own escaping).

import { escapeMarkup } from '../text/format.js';

export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Markup | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeMarkup(String(value));
}

/** Markup from a template: text interpolations are escaped; `Markup`, and arrays of it, are kept. `false`, `null` and `undefined` render nothing. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Markup(out);
}

/** Markup that was escaped elsewhere (the diagram's SVG). */
export const raw = (text: string): Markup => new Markup(text);

/** Every page's Content-Security-Policy: its own inline styles and data: images, nothing else (no script, no network, no form). */
export const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";
