// A consumer's output capped at a head and a tail, with the count of what was dropped between.
import t from 'tap';
import { HeadTailBuffer } from '../../../harness/sandbox/output.js';

t.test('small output is kept whole', async (t) => {
  const b = new HeadTailBuffer(8, 8);
  b.push(Buffer.from('hello '));
  b.push(Buffer.from('world'));
  t.equal(b.text(), 'hello world');
  t.equal(b.total, 11);
  t.equal(b.dropped, 0);
});

t.test('a flood keeps its beginning and its end', async (t) => {
  const b = new HeadTailBuffer(10, 10);
  b.push(Buffer.from('BEGIN-0123'));
  for (let i = 0; i < 1000; i++) b.push(Buffer.from(`line ${i}\n`));
  b.push(Buffer.from('...THE-END'));
  t.equal(b.text(), `BEGIN-0123\n[… ${b.total - 20} bytes not kept …]\n...THE-END`);
  t.equal(b.dropped, b.total - 20);
  const big = new HeadTailBuffer(4, 4);
  big.push(Buffer.from('abcdefghijklmnop'));
  t.equal(big.text(), 'abcd\n[… 8 bytes not kept …]\nmnop', 'one chunk larger than both');
  let many = new HeadTailBuffer(0, 5);
  for (let i = 0; i < 600; i++) many.push(Buffer.from('x'));
  many.push(Buffer.from('12345'));
  t.equal(many.text(), '\n[… 600 bytes not kept …]\n12345', 'many tiny writes are merged and trimmed');
  many = new HeadTailBuffer(3, 0);
  many.push(Buffer.from('abcdef'));
  t.equal(many.text(), 'abc\n[… 3 bytes not kept …]\n', 'head only');
  t.throws(() => new HeadTailBuffer(-1, 1), RangeError);
});

t.test('a character cut at either edge is dropped, not shown broken', async (t) => {
  const b = new HeadTailBuffer(4, 4);
  b.push(Buffer.from('abcé')); // 'é' is two bytes: the head ends inside it
  b.push(Buffer.from('xxxxxxxxxx'));
  b.push(Buffer.from('€z')); // '€' is three bytes: the tail starts inside it
  const text = b.text();
  t.notMatch(text, /\uFFFD/, 'no replacement character');
  t.match(text, /^abc\n\[… \d+ bytes not kept …\]\n.*z$/s);
  const three = new HeadTailBuffer(2, 2);
  three.push(Buffer.from('€€€'));
  t.notMatch(three.text(), /\uFFFD/);
});
