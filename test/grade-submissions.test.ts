// Which submissions a grading run takes, and --shard i/n: every submission in exactly one shard,
// the same one on every machine.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { listSubmissions, parseShard, shardOf } from '../harness/grade/submissions.js';

t.test('immediate sub-folders, sorted; not files, hidden folders or the output folder', async (t) => {
  const dir = t.testdir({ bob: {}, alice: { nested: {} }, '.git': {}, 'notes.txt': '', out: {} });
  mkdirSync(join(dir, 'carol'));
  symlinkSync(join(dir, 'alice'), join(dir, 'alias'));
  writeFileSync(join(dir, 'bob', 'client.py'), '');
  t.same(listSubmissions(dir, { exclude: join(dir, 'out') }), ['alias', 'alice', 'bob', 'carol']);
});

t.test('shards: 1-based, stable, a partition', async (t) => {
  t.same(parseShard('2/3'), { index: 2, count: 3 });
  for (const bad of ['0/3', '4/3', '1/0', 'a/b', '2']) t.throws(() => parseShard(bad), { message: /--shard/ }, bad);
  // SHA-256 of the name: fixed values, whatever the machine.
  t.equal(shardOf('alice', 3), shardOf('alice', 3));
  const names = Array.from({ length: 30 }, (_, i) => `student-${i}`);
  const dir = t.testdir(Object.fromEntries(names.map((n) => [n, {}])));
  const shards = [1, 2, 3].map((index) => listSubmissions(dir, { shard: { index, count: 3 } }));
  t.same(shards.flat().sort(), [...names].sort(), 'every submission in exactly one shard');
  t.ok(
    shards.every((s) => s.length > 0),
    'thirty names spread over all three shards',
  );
  t.same(listSubmissions(dir, { shard: { index: 1, count: 1 } }), [...names].sort());
});
