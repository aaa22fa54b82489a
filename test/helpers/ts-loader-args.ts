// For a child node process that imports .ts modules as the tests do: the loader of .taprc's
// node-arg (./ts-loader.mjs), by absolute path, so that the child's own cwd does not matter.
import { fileURLToPath } from 'node:url';

const loader = new URL('./ts-loader.mjs', import.meta.url);

/** Node arguments that load TypeScript: `[...tsLoaderArgs(), 'script.ts']`. */
export const tsLoaderArgs = (): string[] => [`--import=${loader.href}`];

/** The loader's files, which a child running as another uid must be able to read. */
export const tsLoaderFiles = (): string[] => [fileURLToPath(loader), fileURLToPath(new URL('./ts-loader-hooks.mjs', import.meta.url))];
