import fc from 'fast-check';
import t from 'tap';
import {
  LineSplitter,
  MalformedLine,
  encodeAck,
  encodeEvent,
  encodeResume,
  encodeResync,
  grammarBreak,
  parseConsumerLine,
  parsePublisherLine,
} from '../../../protocol/ledger/wire.js';

const b = (s: string) => Buffer.from(s, 'latin1');

t.test('valid EVENT lines, including edge values', async (t) => {
  const cases: [string, number, number][] = [
    ['EVENT 0 7\n', 0, 7],
    ['EVENT 0 0\n', 0, 0],
    ['EVENT 1 -1\n', 1, -1],
    ['EVENT 10 1000\n', 10, 1000],
    ['EVENT 10 -1000\n', 10, -1000],
    ['EVENT 9007199254740991 5\n', Number.MAX_SAFE_INTEGER, 5],
  ];
  for (const [line, seq, delta] of cases) t.same(parsePublisherLine(b(line)), { kind: 'event', seq, delta }, JSON.stringify(line));
  // Exactly 64 bytes including the LF is still a line.
  const seq64 = '1'.repeat(64 - 'EVENT  -1000\n'.length);
  const long = `EVENT ${seq64} -1000\n`;
  t.equal(long.length, 64);
  t.throws(() => parsePublisherLine(b(long)), /too large/, 'a 51-digit seq is well-formed but cannot be stored');
  const fits = `EVENT 1 ${'0'.repeat(0)}1000\n`;
  t.same(parsePublisherLine(b(fits)), { kind: 'event', seq: 1, delta: 1000 });
});

t.test('every malformed form the seed and the contract name is rejected', async (t) => {
  const bad: [string, string, RegExp][] = [
    ['CRLF', 'EVENT 1 5\r\n', /CR/],
    ['leading zero seq', 'EVENT 01 5\n', /not "EVENT/],
    ['leading zero delta', 'EVENT 1 05\n', /not "EVENT/],
    ['plus sign', 'EVENT 1 +5\n', /not "EVENT/],
    ['minus zero', 'EVENT 1 -0\n', /not "EVENT/],
    ['negative seq', 'EVENT -1 5\n', /not "EVENT/],
    ['delta 1001', 'EVENT 1 1001\n', /outside/],
    ['delta -1001', 'EVENT 1 -1001\n', /outside/],
    ['double space', 'EVENT  1 5\n', /not "EVENT/],
    ['trailing space', 'EVENT 1 5 \n', /not "EVENT/],
    ['tab', 'EVENT\t1 5\n', /not printable/],
    ['lowercase', 'event 1 5\n', /not "EVENT/],
    ['extra field', 'EVENT 1 5 6\n', /not "EVENT/],
    ['missing field', 'EVENT 1\n', /not "EVENT/],
    ['empty line', '\n', /not "EVENT/],
    ['non-ASCII byte', 'EVENT 1 5\u00e9\n', /not printable/],
    ['NUL byte', 'EVENT 1 5\u0000\n', /not printable/],
    ['no LF (fragment)', 'EVENT 1 5', /no LF/],
    ['oversized (65 bytes)', `EVENT ${'1'.repeat(56)} 5\n`, /longer than 64/],
    ['hex digits', 'EVENT 0x1 5\n', /not "EVENT/],
    ['exponent', 'EVENT 1e3 5\n', /not "EVENT/],
    ['unknown verb', 'HELLO 1\n', /not "EVENT/],
  ];
  for (const [name, line, reason] of bad) {
    t.throws(() => parsePublisherLine(b(line)), { name: 'MalformedLine', reason }, name);
  }
  t.equal(b(`EVENT ${'1'.repeat(56)} 5\n`).length, 65);
});

t.test('RESYNC, RESUME and ACK', async (t) => {
  t.same(parsePublisherLine(b('RESYNC 10\n')), { kind: 'resync', firstAvailable: 10 });
  t.same(parseConsumerLine(b('RESUME -1\n')), { kind: 'resume', last: -1 });
  t.same(parseConsumerLine(b('RESUME 0\n')), { kind: 'resume', last: 0 });
  t.same(parseConsumerLine(b('ACK 12\n')), { kind: 'ack', seq: 12 });
  for (const line of ['RESUME -2\n', 'RESUME -0\n', 'RESUME 01\n', 'ACK -1\n', 'ACK 1 \n', 'ack 1\n', 'ACK 1\r\n', 'RESYNC -1\n']) {
    t.throws(() => (line.startsWith('RESYNC') ? parsePublisherLine(b(line)) : parseConsumerLine(b(line))), MalformedLine, JSON.stringify(line));
  }
  t.equal(encodeEvent(3, -7), 'EVENT 3 -7\n');
  t.equal(encodeResync(10), 'RESYNC 10\n');
  t.equal(encodeResume(-1), 'RESUME -1\n');
  t.equal(encodeAck(4), 'ACK 4\n');
});

t.test('property: encode then parse is the identity on the valid range', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: -1000, max: 1000 }), (seq, delta) => {
      const parsed = parsePublisherLine(b(encodeEvent(seq, delta)));
      return parsed.kind === 'event' && parsed.seq === seq && parsed.delta === delta && !Object.is(parsed.delta, -0);
    }),
  );
  t.pass('round trip holds');
});

t.test('property: arbitrary bytes either parse to a line that re-encodes identically, or raise MalformedLine', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      try {
        const p = parsePublisherLine(bytes);
        const again = p.kind === 'event' ? encodeEvent(p.seq, p.delta) : encodeResync(p.firstAvailable);
        return Buffer.from(bytes).equals(b(again));
      } catch (error) {
        return error instanceof MalformedLine;
      }
    }),
  );
  t.pass('no other outcome');
});

t.test('LineSplitter', async (t) => {
  const s = new LineSplitter();
  t.same(s.push(b('EVENT 0 7\nEVE')), { lines: [b('EVENT 0 7\n')] });
  t.same(s.fragment, b('EVE'));
  t.same(s.push(b('NT 1 5\n')), { lines: [b('EVENT 1 5\n')] });
  t.equal(s.fragment.length, 0);
  // Byte-at-a-time delivery (a 1-byte slicer) gives the same lines.
  const one = new LineSplitter();
  const got: Buffer[] = [];
  for (const byte of b('EVENT 0 7\nEVENT 1 5\n')) got.push(...one.push(Uint8Array.of(byte)).lines);
  t.same(got, [b('EVENT 0 7\n'), b('EVENT 1 5\n')]);
  // An unterminated fragment of 64 bytes can never become a line: reported without waiting.
  const big = new LineSplitter();
  t.notOk(big.push(b('x'.repeat(63))).overflow, '63 bytes may still end in an LF within the limit');
  const r = big.push(b('x'));
  t.equal(r.overflow?.length, 64, 'the 64th byte without LF is an overflow');
  const flood = new LineSplitter().push(Buffer.alloc(10 * 1024, 0x41));
  t.equal(flood.lines.length, 0);
  t.equal(flood.overflow?.length, 10 * 1024);
});

t.test('grammarBreak names the rule a line breaks, and agrees with the parsers', async (t) => {
  const publisher: [string, string][] = [
    ['EVENT 3 +4\n', 'a "+" sign'],
    ['EVENT 3 -0\n', 'a "-0"'],
    ['EVENT 03 4\n', 'a leading zero ("03")'],
    ['EVENT 3 04\n', 'a leading zero ("04")'],
    ['EVENT 3 4\r\n', 'a CR before the LF (a CRLF line ending)'],
    ['EVENT\t3 4\n', 'a tab where exactly one space belongs'],
    ['EVENT  3 4\n', 'two spaces in a row'],
    ['EVENT 3 4 \n', 'a trailing space'],
    [' EVENT 3 4\n', 'a leading space'],
    ['event 3 4\n', 'a lowercase keyword "event"'],
    ['HELLO 3 4\n', 'an unknown keyword "HELLO"'],
    ['EVENT 3 4 0\n', 'an extra field ("0")'],
    ['EVENT 3\n', 'a missing field'],
    ['EVENT 3 x\n', '"x" is not a decimal integer'],
    ['\n', 'an empty line'],
    ['EVENT 3 4\xe9\n', 'byte 0xe9, which is not printable ASCII'],
    ['EVENT 3 1001\n', 'delta 1001 outside -1000..1000'],
    ['EVENT 99999999999999999 4\n', 'seq 99999999999999999 is too large'],
    [`EVENT 3 4${' '.repeat(60)}\n`, 'longer than 64 bytes'],
    ['A'.repeat(4096), 'longer than 64 bytes'],
    ['EVENT 3 4', 'no LF at the end: a fragment is not a line'],
    ['EVENT 3\n4\n', 'an LF inside the line'],
  ];
  for (const [line, why] of publisher) {
    const name = JSON.stringify(line.slice(0, 70));
    t.equal(grammarBreak(line, 'publisher'), why, name);
    t.throws(() => parsePublisherLine(b(line)), MalformedLine, `${name}: the parser refuses it too`);
  }
  for (const line of ['EVENT 0 7\n', 'EVENT 12 -1000\n', 'EVENT 3 0\n', 'RESYNC 4\n'])
    t.equal(grammarBreak(line, 'publisher'), undefined, JSON.stringify(line));
  for (const line of ['ACK 3\n', 'RESUME -1\n', 'RESUME 7\n']) t.equal(grammarBreak(line, 'consumer'), undefined, JSON.stringify(line));
  t.equal(grammarBreak('ACK +3\n', 'consumer'), 'a "+" sign');
  t.equal(grammarBreak('ack 3\n', 'consumer'), 'a lowercase keyword "ack"');
  t.equal(grammarBreak('ACK -1\n', 'consumer'), 'not "RESUME <last>" or "ACK <seq>"', "no rule in words: the parser's reason");
  t.equal(grammarBreak('EVENT 3 4\n', 'consumer'), 'an unknown keyword "EVENT"', 'judged by the grammar of the side that sent it');
});

t.test('property: grammarBreak is undefined exactly when the parser accepts the line', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70 }), fc.constantFrom<'publisher' | 'consumer'>('publisher', 'consumer'), (bytes, sender) => {
      const text = Buffer.from(bytes).toString('latin1');
      let valid = true;
      try {
        (sender === 'publisher' ? parsePublisherLine : parseConsumerLine)(Buffer.from(bytes));
      } catch {
        valid = false;
      }
      return (grammarBreak(text, sender) === undefined) === valid;
    }),
  );
  fc.assert(fc.property(fc.nat(), fc.integer({ min: -1000, max: 1000 }), (seq, delta) => grammarBreak(encodeEvent(seq, delta), 'publisher') === undefined));
});
