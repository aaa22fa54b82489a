// Types of scripts/check-doc-links.mjs for the tests that import it.
export function brokenLinks(root: string): Array<{ file: string; line: number; target: string; why: string }>;
