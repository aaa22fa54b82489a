// The journal's appends: the stream's own lines wait for the end of the event loop's turn and
// go out together; every other entry, the writer's close and the process's exit write them at
// once, so a crash still leaves everything up to that moment in the file, in order.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setImmediate as nextTurn } from 'node:timers/promises';
import t from 'tap';
import { JournalWriter, readJournal } from '../../../harness/record/journal.js';
import { runTsChild } from '../../helpers/sandbox.js';

const send = (seq: number) => ({ type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${seq} 1\n` }) as const;
const types = (path: string) => readJournal(path).map((e) => (e.type === 'wire' && e.kind === 'send' ? e.line.trim() : e.type));

t.test("the stream's lines are appended together at the end of the turn, in order", async (t) => {
  const path = join(t.testdir(), 'journal.jsonl');
  const journal = new JournalWriter(path, () => 0);
  journal.write(send(1));
  journal.write(send(2));
  t.equal(readFileSync(path, 'utf8'), '', 'nothing yet within the turn');
  t.equal(journal.entries.length, 2, 'the in-memory record has them at once');
  await nextTurn();
  t.same(types(path), ['EVENT 1 1', 'EVENT 2 1']);
  journal.close();
});

t.test('any other entry writes the waiting lines first, then itself', async (t) => {
  const path = join(t.testdir(), 'journal.jsonl');
  const journal = new JournalWriter(path, () => 0);
  journal.write(send(1));
  journal.write({ type: 'process-stopped', role: 'consumer', incarnation: 1 });
  t.same(types(path), ['EVENT 1 1', 'process-stopped'], 'on disk before the turn ends');
  journal.write(send(2));
  journal.close();
  t.same(types(path), ['EVENT 1 1', 'process-stopped', 'EVENT 2 1'], 'close writes what waits');
});

t.test('a turn that sends a lot writes as it goes, not all at its end', async (t) => {
  const path = join(t.testdir(), 'journal.jsonl');
  const journal = new JournalWriter(path, () => 0);
  for (let seq = 1; seq <= 5000; seq++) journal.write(send(seq));
  const onDisk = readJournal(path).length;
  t.ok(onDisk > 0 && onDisk < 5000, `${onDisk} of 5000 lines on disk within the turn`);
  journal.close();
  t.equal(readJournal(path).length, 5000);
});

t.test('a process that exits within the turn (a crash, process.exit) still leaves its lines', async (t) => {
  const path = join(t.testdir(), 'journal.jsonl');
  const module = fileURLToPath(new URL('../../../harness/record/journal.js', import.meta.url));
  const child = runTsChild(
    `const { JournalWriter } = await import(${JSON.stringify(module)});
     const journal = new JournalWriter(${JSON.stringify(path)}, () => 0);
     journal.write({ type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: 'EVENT 1 1\\n' });
     journal.write({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'ACK 1' });
     process.exit(3);`,
  );
  const ran = await child.done;
  t.equal(ran.code, 3, ran.stderr);
  t.same(
    readJournal(path).map((e) => e.type === 'wire' && 'line' in e && e.line.trim()),
    ['EVENT 1 1', 'ACK 1'],
  );
});
