// The module hooks of ./ts-loader.mjs: synchronous, as module.registerHooks needs them, and
// returning nextResolve's or nextLoad's promise as is under module.register.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformSync } from 'esbuild';

/** `x.js` names `x.ts` in this project's sources (TypeScript's NodeNext imports): relative, absolute or file: URL. */
export function resolve(specifier, context, nextResolve) {
  if (specifier.endsWith('.js') && /^(\.{1,2}\/|\/|file:)/.test(specifier)) {
    const js = new URL(specifier, context.parentURL ?? pathToFileURL(`${process.cwd()}/`));
    const ts = new URL(js.href.replace(/\.js$/, '.ts'));
    if (js.protocol === 'file:' && !existsSync(js) && existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(url)) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = transformSync(readFileSync(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'es2022', // as tsconfig.json's: the same class-field semantics as the build
    sourcefile: path,
    sourcemap: 'inline',
    sourcesContent: true,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
