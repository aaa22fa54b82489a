// Types of children-coverage.mjs for the TypeScript helpers that import it.
export function dropProcessinfo(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
