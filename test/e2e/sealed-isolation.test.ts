// Nothing survives a sealed run, and a room has a disk quota: hostile consumers against the real
// CLI, sealed. One leaves 0666 notes in /tmp, /var/tmp, /run/lock, /dev/shm and SysV IPC objects
// for the next consumer of its slot, and looks for the previous one's; one writes past a small
// room quota. Skips with the probe's reason where this machine cannot seal.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type JournalEntry, readJournal } from '../../harness/record/journal.js';
import { ownedIpc } from '../../harness/sandbox/leftovers.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { roomMounts } from '../../harness/sandbox/room-fs.js';
import { chaoslab, onlyRun, root } from '../helpers/cli.js';

t.setTimeout(300_000);
const probe = await probeSealing();
const sealedOnly = probe.available ? false : `sealing is not available here: ${probe.reason}`;
const hostile = (name: string) => join(root, 'test', 'fixtures', 'hostile', name);
const NOTES = ['/tmp', '/var/tmp', '/run/lock', '/dev/shm'].map((dir) => `${dir}/chaoslab-note`);

const consumerExits = (journal: readonly JournalEntry[]) => journal.flatMap((e) => (e.type === 'process-exit' && e.role === 'consumer' ? [e] : []));

t.test('sealed: files and IPC objects a consumer leaves reach no later consumer, and nothing of its uid stays', { skip: sealedOnly }, async (t) => {
  const reports = t.testdir();
  // Two runs in one batch: slot 0 each time, so the same uid unless another harness took it between.
  const result = await chaoslab(['run', 'ack-crash', '--repeat', '2', '--seal', '--reports', reports, '--consumer', hostile('pass-note.sh')]);
  t.equal(result.exitCode, 1, 'both runs fail (the consumer does no work)');
  const [batch] = readdirSync(reports).filter((name) => name !== 'latest');
  const journals = readdirSync(join(reports, batch!))
    .filter((name) => existsSync(join(reports, batch!, name, 'journal.jsonl')))
    .sort()
    .map((name) => readJournal(join(reports, batch!, name, 'journal.jsonl')));
  t.equal(journals.length, 2, 'two runs');
  const uids = new Set(journals.flatMap((j) => j.flatMap((e) => (e.type === 'process-start' && e.sealed ? [e.sealed.uid] : []))));
  t.comment(`consumer uids: ${[...uids].join(', ')}`);
  const exits = journals.flatMap(consumerExits);
  t.ok(exits.length >= 2, `${exits.length} consumer processes ran`);
  const said = exits.map((e) => e.stderrTail).join('\n');
  t.match(said, /planted \/var\/tmp\/chaoslab-note/, 'a consumer could write its /var/tmp …');
  t.match(said, /planted \/run\/lock\/chaoslab-note/, '… and its /run/lock');
  t.match(said, /Message queue id: \d+/, '… and make a message queue');
  t.match(said, /Shared memory id: \d+/, '… and a shared memory segment');
  t.equal(said.match(/^looked$/gm)?.length, exits.length, 'every consumer looked');
  t.notMatch(said, /^found /m, 'and none found what an earlier one left');
  for (const journal of journals) {
    const after = journal.find((e) => e.type === 'leftovers' && e.when === 'after');
    t.match(after, { folders: ['/dev/shm', '/run/lock', '/tmp', '/var/tmp'] }, 'the scan after the run looked in the world-writable folders');
    t.same(after?.type === 'leftovers' && [...after.found, ...after.notRemoved], [], '… and found nothing of the uid there, nor in SysV IPC');
  }
  t.same(
    NOTES.filter((note) => existsSync(note)),
    [],
    'no note on the host',
  );
  for (const uid of uids) t.same(ownedIpc(uid), [], `no IPC object of uid ${uid} on the host`);
});

t.test('sealed: a consumer that writes past its room quota gets ENOSPC, and the disk limit is named', { skip: sealedOnly }, async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--seal', '--room-quota', '4M', '--reports', reports, '--consumer', hostile('fill-room.sh')]);
  const { dir, journal } = onlyRun(reports);
  t.equal(result.exitCode, 1, 'the run fails');
  const said = consumerExits(journal)
    .map((e) => e.stderrTail)
    .join('\n');
  t.match(said, /No space left on device/, 'the write failed inside with ENOSPC');
  const wrote = Number(/wrote (\d+) bytes/.exec(said)?.[1]);
  t.ok(wrote > 3 * 1024 ** 2 && wrote <= 4 * 1024 ** 2, `it got as far as the quota (${wrote} bytes)`);
  t.match(
    journal.find((e) => e.type === 'room'),
    { type: 'room', name: 'consumer', quotaBytes: 4 * 1024 ** 2, full: true },
  );
  t.match(
    journal.find((e) => e.type === 'verdict'),
    { verdict: { status: 'fail', findings: [{ code: 'disk-limit', text: /^the consumer's room reached its disk limit of 4 MiB/ }] } },
  );
  t.match(result.stdout, /the consumer's room reached its disk limit of 4 MiB/, 'the console names it');
  t.same(
    roomMounts().filter((m) => m.path.startsWith(dir)),
    [],
    'nothing of the run is left mounted',
  );
  const kept = join(dir, 'rooms', 'consumer', 'fill');
  const st = statSync(kept);
  t.equal(st.size, wrote, 'the room is kept on disk as the consumer left it');
  t.ok(st.blocks * 512 <= 4 * 1024 ** 2 + 64 * 1024, `and takes no more than the quota there (${st.blocks * 512} bytes)`);
  t.match(st, { uid: 0, mode: 0o100600 }, 'handed to root, as before');
});
