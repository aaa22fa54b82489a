// What a sealed server may read: the outbox and its sidecars made root's 0644 in a folder it
// cannot write; anything else (a link, a file of another owner, a folder it could write, a path
// it cannot reach) is refused before the server starts, naming it. Needs root (chmod of root's
// files, another uid's view); the firewall and the confinement are covered by the sealed server
// run (test/harness/labs/feed/server/sealed.test.ts).
import { chmodSync, chownSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SERVER_SLOT_OFFSET, shareReadOnly } from '../../../harness/processes/server-seal.js';
import { UID_BASE } from '../../../harness/sandbox/uids.js';

const UID = UID_BASE + SERVER_SLOT_OFFSET + 37;
const skip = process.getuid?.() === 0 ? false : 'needs root: the files shared are root’s';

t.test('the outbox and its sidecars become readable, never writable', { skip }, async (t) => {
  const dir = t.testdir({ run: { 'outbox.db': 'db', 'outbox.db-wal': 'wal', 'outbox.db-shm': 'shm' } });
  chmodSync(dir, 0o755);
  const run = join(dir, 'run');
  chmodSync(run, 0o711);
  for (const name of ['outbox.db', 'outbox.db-wal', 'outbox.db-shm']) chmodSync(join(run, name), 0o600);
  t.equal(shareReadOnly(join(run, 'outbox.db'), UID), run, 'the folder to keep reachable');
  for (const name of ['outbox.db', 'outbox.db-wal', 'outbox.db-shm']) t.equal(statSync(join(run, name)).mode & 0o777, 0o644, `${name}: 0644`);
});

t.test('what cannot be shared read-only is refused, named', { skip }, async (t) => {
  const dir = t.testdir({ open: { 'outbox.db': 'db' }, closed: { 'outbox.db': 'db' }, linked: { 'real.db': 'db' }, theirs: { 'outbox.db': 'db' } });
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'open'), 0o777);
  t.throws(() => shareReadOnly(join(dir, 'open', 'outbox.db'), UID), /the folder .*open is writable by the server's uid \d+: it could replace/);
  chmodSync(join(dir, 'closed'), 0o700);
  t.throws(
    () => shareReadOnly(join(dir, 'closed', 'outbox.db'), UID),
    /the server cannot read what it needs: uid \d+ cannot reach the file .*closed\/outbox\.db: .*closed is not searchable/,
  );
  chmodSync(join(dir, 'linked'), 0o711);
  symlinkSync('real.db', join(dir, 'linked', 'outbox.db'));
  t.throws(() => shareReadOnly(join(dir, 'linked', 'outbox.db'), UID), /linked\/outbox\.db is not a regular file of root's/);
  chmodSync(join(dir, 'theirs'), 0o711);
  chownSync(join(dir, 'theirs', 'outbox.db'), UID, UID);
  t.throws(() => shareReadOnly(join(dir, 'theirs', 'outbox.db'), UID), /theirs\/outbox\.db is not a regular file of root's/);
  mkdirSync(join(dir, 'none'), { mode: 0o711 });
  t.throws(() => shareReadOnly(join(dir, 'none', 'outbox.db'), UID), /ENOENT/, 'a missing outbox');
});
