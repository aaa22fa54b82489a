// The module hooks of ./ts-loader.mjs: synchronous, as module.registerHooks needs them, and
// returning nextResolve's or nextLoad's promise as is under module.register.
//
// What esbuild makes of a file is kept on disk by its content (node_modules/.cache/chaoslab-ts/):
// every test file's process, and every node process a unit test starts from TypeScript, loads much
// the same modules, and transforming them again cost each some 0.4 s of CPU (an esbuild worker
// thread, its Go process and the transforms) of a 1.4 s floor. A hit starts none of them.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

/** `x.js` names `x.ts` in this project's sources (TypeScript's NodeNext imports): relative, absolute or file: URL. */
export function resolve(specifier, context, nextResolve) {
  if (specifier.endsWith('.js') && /^(\.{1,2}\/|\/|file:)/.test(specifier)) {
    const js = new URL(specifier, context.parentURL ?? pathToFileURL(`${process.cwd()}/`));
    const ts = new URL(js.href.replace(/\.js$/, '.ts'));
    if (js.protocol === 'file:' && !existsSync(js) && existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'es2022', // as tsconfig.json's: the same class-field semantics as the build
  sourcemap: 'inline',
  sourcesContent: true, // coverage maps back to the .ts lines
};
const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/chaoslab-ts/', import.meta.url));
const esbuildVersion = JSON.parse(readFileSync(new URL('../../node_modules/esbuild/package.json', import.meta.url), 'utf8')).version;

export function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(url)) return nextLoad(url, context);
  return { format: 'module', source: transformed(fileURLToPath(url)), shortCircuit: true };
}

/** The file's JavaScript, from the cache when esbuild made it from the same source, path and options. */
function transformed(path) {
  const source = readFileSync(path, 'utf8');
  const key = createHash('sha256')
    .update(JSON.stringify([esbuildVersion, OPTIONS, path, source]))
    .digest('hex');
  const cached = `${cacheDir}${key}.js`;
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // Not made yet, or not readable here (a child running as another uid): made again.
  }
  const { code } = esbuild().transformSync(source, { ...OPTIONS, sourcefile: path });
  try {
    // Written whole under a name of its own, then renamed: a process beside this one reads all of it or none.
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${cached}.${process.pid}.tmp`, code);
    renameSync(`${cached}.${process.pid}.tmp`, cached);
  } catch {
    // A cache that cannot be written (a read-only tree) only costs the transform next time.
  }
  return code;
}

/** esbuild, loaded on the first miss only (the hooks are synchronous, as module.registerHooks needs: its CommonJS entry). */
let esbuildModule;
const esbuild = () => (esbuildModule ??= createRequire(import.meta.url)('esbuild'));
