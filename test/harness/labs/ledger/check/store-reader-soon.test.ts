// loadStoreReaderSoon: the native addon is in memory before the first read after a consumer's
// exit, which the next incarnation waits for (better-sqlite3 loads it at its first open, not when
// required). In a child process of its own: this one may have loaded the addon already.
import t from 'tap';
import { spawnSync } from 'node:child_process';

t.test('the addon is loaded on the next turn of the event loop, before any read', async (t) => {
  const reader = JSON.stringify(new URL('../../../../../harness/labs/ledger/check/store-reader.ts', import.meta.url).href);
  const child = `
    import { readFileSync } from 'node:fs';
    import { loadStoreReaderSoon } from ${reader};
    const loaded = () => readFileSync('/proc/self/maps', 'utf8').includes('better_sqlite3.node');
    const before = loaded();
    loadStoreReaderSoon();
    await new Promise((resolve) => setImmediate(resolve));
    console.log(JSON.stringify({ before, after: loaded() }));`;
  const ran = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', child], { encoding: 'utf8' });
  t.equal(ran.status, 0, ran.stderr);
  t.same(JSON.parse(ran.stdout.trim().split('\n').at(-1)!), { before: false, after: true });
});
