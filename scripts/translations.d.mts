// Types of scripts/translations.mjs for the tests that import it.
export interface Stamp {
  source: string;
  section: string;
  sha256: string | null;
  skipped: boolean;
  line: number;
}
export interface Problem {
  file: string;
  section: string | null;
  why: string;
}
export function sectionHash(text: string): string;
export function stampsOf(text: string): Stamp[];
export function translationProblems(root: string, file: string): Problem[];
export function checkTranslations(root: string): { files: string[]; problems: Problem[] };
export function stamp(file: string, only?: string[]): string[];
