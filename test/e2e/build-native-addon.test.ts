// A JavaScript submission with a native addon (better-sqlite3 12, test/fixtures/native-addon)
// builds sealed with `npm ci` and no network: its packages come from an npm cache staff filled
// (CHAOSLAB_NPM_CACHE), prebuild-install's download fails, and node-gyp compiles the addon
// against the installed Node's headers (npm_config_nodedir). Then the program uses the addon.
//
// Opt-in (CHAOSLAB_NATIVE_ADDON_TEST=1): compiling sqlite3.c takes minutes on a loaded machine,
// past `make test`'s budget. The cache is made from this machine's ~/.npm (or
// CHAOSLAB_NPM_SOURCE_CACHE): only the fixture's 38 tarballs are copied into a folder the slot's
// uid can read, outside /tmp (a sealed build has a private, empty /tmp), in /run.
import t from 'tap';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { root, runTsChild, sandboxModule, sealingSkip } from '../helpers/sandbox.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'native-addon');
const SOURCE = join(process.env.CHAOSLAB_NPM_SOURCE_CACHE ?? join(homedir(), '.npm'), '_cacache');

/** cacache's paths: an index bucket by the sha256 of its key, content by its integrity. */
const bucket = (key: string) => {
  const hex = createHash('sha256').update(key).digest('hex');
  return join('index-v5', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
};
const content = (integrity: string) => {
  const [algorithm, base64] = integrity.split('-', 2) as [string, string];
  const hex = Buffer.from(base64, 'base64').toString('hex');
  return join('content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
};

/** Copies the lock's tarballs from SOURCE into `<cache>/_cacache`; the names of those missing. */
function fillCache(cache: string): string[] {
  const lock = JSON.parse(readFileSync(join(FIXTURE, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; integrity?: string }> };
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !entry.resolved || !entry.integrity) continue;
    const files = [bucket(`make-fetch-happen:request-cache:${entry.resolved}`), content(entry.integrity)];
    if (!files.every((file) => existsSync(join(SOURCE, file)))) {
      missing.push(path);
      continue;
    }
    for (const file of files) {
      mkdirSync(dirname(join(cache, '_cacache', file)), { recursive: true });
      copyFileSync(join(SOURCE, file), join(cache, '_cacache', file));
    }
  }
  return missing;
}

const sealed = await sealingSkip();
const skip =
  process.env.CHAOSLAB_NATIVE_ADDON_TEST !== '1'
    ? 'opt-in: CHAOSLAB_NATIVE_ADDON_TEST=1 (compiles sqlite3.c: minutes)'
    : !existsSync(SOURCE)
      ? `no npm cache at ${SOURCE} to fill the staff cache from (CHAOSLAB_NPM_SOURCE_CACHE)`
      : sealed;

t.test('better-sqlite3 builds sealed and offline, from a staff npm cache and the local Node headers', { skip: skip ?? false }, async (t) => {
  // Outside this project's tree (npm would take the project's node_modules/.bin and tap's hooks
  // from the folders above) and outside /tmp (private in a sealed build).
  const dir = realpathSync(mkdtempSync('/run/chaoslab-native-addon-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'npm-cache');
  t.same(fillCache(cache), [], "the fixture's tarballs are in the staff cache");
  const copy = join(dir, 'submission');
  cpSync(FIXTURE, copy, { recursive: true });
  for (const path of [dir, cache]) chmodSync(path, 0o755);
  const { execFileSync } = await import('node:child_process');
  execFileSync('chmod', ['-R', 'a+rX', cache]);
  // The build runs in a child Node without tap's hooks: tap adds NODE_OPTIONS (its processinfo
  // import) to every child this process spawns, and node-gyp, sealed, failed writing its record.
  const code = [
    `process.env.CHAOSLAB_NPM_CACHE = ${JSON.stringify(cache)};`,
    `const { runBuild } = await import(${JSON.stringify(join(root, 'harness', 'grade', 'build', 'build.ts'))});`,
    `const { leaseUid } = await import(${sandboxModule('uids')});`,
    'const lease = leaseUid(0);',
    `const built = await runBuild({ command: 'npm ci --foreground-scripts && node consumer.mjs', dir: ${JSON.stringify(copy)}, deadlineMs: 1_800_000, uid: lease.uid, logFile: ${JSON.stringify(join(dir, 'build.log'))} });`,
    'lease.release();',
    'console.log(JSON.stringify(built));',
  ].join('\n');
  const ran = await runTsChild(code, { timeoutMs: 1_900_000 }).done;
  const built = JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? 'null') as unknown;
  const log = readFileSync(join(dir, 'build.log'), 'utf8');
  t.same(built, { ok: true }, log.slice(-2000));
  t.match(log, /\(offline\)/, 'offline, from the staff cache');
  t.match(log, /sqlite 3\.\d+/, 'the program used the compiled addon');
});
