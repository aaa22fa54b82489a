// End-to-end chain 2 of 2 (test/helpers/e2e-chains.ts says which files, and why two): its
// files in this one process, one after another, so they never compete with each other for
// ports, CPU or timing. The name sorts first, so the two chains start first.
// `npx tap test/e2e/<name>.test.ts` still runs one file by itself.
import t from 'tap';
import { chainFiles, e2eDir } from './helpers/e2e-chains.js';

const files = chainFiles(1);
t.comment(`end-to-end chain 2, in order: ${files.join(', ')}`);
// Each file's top-level tests are queued on this process's root test as it is imported, and the
// root runs its tests one at a time, in that order.
for (const file of files) await import(new URL(file, e2eDir).href);
// The files' own t.setTimeout calls each meant "this file"; together they need their sum, and
// a loaded CI machine can take twice the quiet time.
t.setTimeout(90 * 60_000);
