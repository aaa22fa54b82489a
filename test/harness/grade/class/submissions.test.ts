// Which submissions a grading run takes, and --shard i/n: every submission in exactly one shard,
// the same one on every machine.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { listSubmissions, parseShard, shardOf } from '../../../../harness/grade/class/submissions.js';

t.test('immediate sub-folders, sorted; every other entry skipped with its reason', async (t) => {
  const dir = t.testdir({ bob: {}, alice: { nested: {} }, '.git': {}, 'notes.txt': '', out: {}, 'tab\there': {}, 'back\\slash': {}, 'line\nfeed': {} });
  mkdirSync(join(dir, 'carol'));
  symlinkSync(join(dir, 'alice'), join(dir, 'alias'));
  symlinkSync(join(dir, 'gone'), join(dir, 'dangling'));
  // A name that is not UTF-8 (as a Latin-1 archive unpacks): bytes, not a string.
  mkdirSync(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9])]));
  writeFileSync(join(dir, 'bob', 'client.py'), '');
  const listed = listSubmissions(dir, { exclude: join(dir, 'out') });
  t.same(listed.submissions, ['alias', 'alice', 'bob', 'carol']);
  t.same(listed.skipped, [
    { name: '.git', reason: 'its name starts with a dot (a hidden folder, such as .git): rename it to grade it' },
    { name: 'back\\slash', reason: 'its name holds U+005C (a backslash), which not every output can carry: rename the folder' },
    { name: 'caf\ufffd', reason: 'its name is not valid UTF-8: rename the folder' },
    { name: 'dangling', reason: 'a link to nothing' },
    { name: 'line\nfeed', reason: 'its name holds U+000A (a control character), which not every output can carry: rename the folder' },
    { name: 'notes.txt', reason: 'not a folder (a submission is a folder)' },
    { name: 'out', reason: 'the output folder (--out) of this grading' },
    { name: 'tab\there', reason: 'its name holds U+0009 (a tab), which not every output can carry: rename the folder' },
  ]);
});

t.test('shards: 1-based, stable, a partition', async (t) => {
  t.same(parseShard('2/3'), { index: 2, count: 3 });
  for (const bad of ['0/3', '4/3', '1/0', 'a/b', '2']) t.throws(() => parseShard(bad), { message: /--shard/ }, bad);
  // SHA-256 of the name: fixed values, whatever the machine.
  t.equal(shardOf('alice', 3), shardOf('alice', 3));
  const names = Array.from({ length: 30 }, (_, i) => `student-${i}`);
  const dir = t.testdir(Object.fromEntries(names.map((n) => [n, {}])));
  writeFileSync(join(dir, 'notes.txt'), '');
  const shards = [1, 2, 3].map((index) => listSubmissions(dir, { shard: { index, count: 3 } }).submissions);
  t.same(shards.flat().sort(), [...names].sort(), 'every submission in exactly one shard');
  t.ok(
    shards.every((s) => s.length > 0),
    'thirty names spread over all three shards',
  );
  t.same(listSubmissions(dir, { shard: { index: 1, count: 1 } }).submissions, [...names].sort());
  const skippedIn = [1, 2, 3].map((index) => listSubmissions(dir, { shard: { index, count: 3 } }).skipped.map((s) => s.name));
  t.same(skippedIn.flat(), ['notes.txt'], 'a skipped entry is listed by one shard only (merged, it appears once)');
});
