// Types of scripts/markdown.mjs for the tests that import it.
export function fencedLines(text: string): Array<{ line: string; fenced: boolean }>;
export function sections(text: string): Array<{ name: string; text: string }>;
export function slug(heading: string): string;
export function anchors(text: string): Set<string>;
export function links(text: string): Array<{ target: string; line: number }>;
export function markdownFiles(root: string, dir?: string): string[];
