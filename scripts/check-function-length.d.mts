/** Types of check-function-length.mjs for the TypeScript tests that import it. */
export function checkFunctionLength(argv: string[], cwd?: string): { code: number; stdout: string[]; stderr: string[] };
