// Every end-to-end file (test/e2e/*.test.ts) in this one process, one after another, so they
// never compete with each other for ports, CPU or timing — while tap runs the unit files beside
// them on the other core. (A `serial` folder in .taprc ran each e2e file alone, which left one
// core idle through the longest part of `make test`.) The name sorts first, so this file starts
// first. `npx tap test/e2e/<name>.test.ts` still runs one file by itself.
import { readdirSync } from 'node:fs';
import t from 'tap';

const dir = new URL('./e2e/', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort();
t.comment(`end-to-end files, in order: ${files.join(', ')}`);
// Each file's top-level tests are queued on this process's root test as it is imported, and the
// root runs its tests one at a time, in that order.
for (const file of files) await import(new URL(file, dir).href);
// The files' own t.setTimeout calls each meant "this file"; together they need their sum, and
// a loaded CI machine can take twice the quiet time.
t.setTimeout(90 * 60_000);
