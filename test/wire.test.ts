import fc from 'fast-check';
import t from 'tap';
import {
  LineSplitter,
  MalformedLine,
  encodeAck,
  encodeEvent,
  encodeResume,
  encodeResync,
  parseConsumerLine,
  parsePublisherLine,
} from '../protocol/ledger/wire.js';

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
