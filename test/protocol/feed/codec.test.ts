import fc from 'fast-check';
import t from 'tap';
import {
  AmountError,
  CursorError,
  FrameError,
  MAX_LINE_BYTES,
  MAX_UINT256,
  NdjsonSplitter,
  compareCursors,
  encodeEvent,
  encodePing,
  encodePong,
  encodeReset,
  encodeRevoke,
  encodeSnapshot,
  encodeSubscribe,
  encodeTransfer,
  formatAmount,
  formatCursor,
  parseAmount,
  parseClientFrame,
  parseCursor,
  parseServerFrame,
  resetMeaning,
} from '../../../protocol/feed/index.js';
import { rawTopLevelMember } from '../../../protocol/feed/raw-json.js';

const A = `0x${'a'.repeat(40)}`;
const B = `0x${'b'.repeat(40)}`;
const HASH = `0x${'c'.repeat(64)}`;
const C1 = '1:00000000020134:0007';

/** The frame from a server-side line, or the FrameError's reason. */
const server = (line: string, chainId?: number) => parseServerFrame(line, chainId === undefined ? {} : { chainId });
const client = (line: string, chainId?: number) => parseClientFrame(line, chainId === undefined ? {} : { chainId });
const transfer = (payload: Record<string, unknown>) =>
  JSON.stringify({ op: 'event', cursor: C1, type: 'Transfer', payload: { from: A, to: B, amount: '25', txHash: HASH, blockHash: HASH, ...payload } });

t.test('cursor: parse, format, the edges of each part', async (t) => {
  t.same(parseCursor(C1), { chainId: 1, blockNumber: 20134, logIndex: 7 });
  t.same(parseCursor('0:00000000000000:0000'), { chainId: 0, blockNumber: 0, logIndex: 0 }, 'chain 0, genesis, first log');
  t.same(parseCursor('9007199254740991:99999999999999:9999'), { chainId: Number.MAX_SAFE_INTEGER, blockNumber: 99_999_999_999_999, logIndex: 9999 });
  t.equal(formatCursor({ chainId: 1, blockNumber: 20134, logIndex: 7 }), C1);
  t.equal(formatCursor(parseCursor('137:00000000000001:0010')), '137:00000000000001:0010', 'round trip');
  t.throws(() => formatCursor({ chainId: 1, blockNumber: 10 ** 14, logIndex: 0 }), CursorError, 'a 15-digit block does not fit');
  t.throws(() => formatCursor({ chainId: 1, blockNumber: 1, logIndex: 10_000 }), CursorError, 'a 5-digit log index does not fit');
  t.throws(() => formatCursor({ chainId: -1, blockNumber: 1, logIndex: 0 }), CursorError);
  t.throws(() => formatCursor({ chainId: 1, blockNumber: 1.5, logIndex: 0 }), CursorError);
  const bad: [string, unknown][] = [
    ['unpadded block', '1:20134:0007'],
    ['unpadded log index', '1:00000000020134:7'],
    ['15-digit block', '1:000000000201340:0007'],
    ['5-digit log index', '1:00000000020134:00007'],
    ['leading zero chain id', '01:00000000020134:0007'],
    ['negative chain id', '-1:00000000020134:0007'],
    ['empty chain id', ':00000000020134:0007'],
    ['hex block', '1:0000000002013a:0007'],
    ['leading space', ` ${C1}`],
    ['trailing newline', `${C1}\n`],
    ['two parts', '1:00000000020134'],
    ['chain id above 2^53', '9007199254740993:00000000020134:0007'],
    ['a number', 20134],
    ['null', null],
  ];
  for (const [name, value] of bad) t.throws(() => parseCursor(value), CursorError, name);
});

t.test('cursor: string order is chain order within one chain; chains do not compare', async (t) => {
  const position = fc.record({ blockNumber: fc.integer({ min: 0, max: 99_999_999_999_999 }), logIndex: fc.integer({ min: 0, max: 9999 }) });
  fc.assert(
    fc.property(position, position, (a, b) => {
      const ca = { chainId: 5, ...a };
      const cb = { chainId: 5, ...b };
      const byString = formatCursor(ca) < formatCursor(cb) ? -1 : formatCursor(ca) > formatCursor(cb) ? 1 : 0;
      return Math.sign(compareCursors(ca, cb)) === byString;
    }),
  );
  t.ok(compareCursors(parseCursor('1:00000000000002:0000'), parseCursor('1:00000000000001:9999')) > 0, 'the block decides first');
  t.equal(compareCursors(parseCursor(C1), parseCursor(C1)), 0);
  t.throws(() => compareCursors(parseCursor('1:00000000000001:0000'), parseCursor('2:00000000000001:0000')), /cannot be compared/);
});

t.test('amounts: canonical decimal strings 0..2^256-1 only', async (t) => {
  t.equal(parseAmount('0'), 0n);
  t.equal(parseAmount('25'), 25n);
  t.equal(MAX_UINT256.toString(), '115792089237316195423570985008687907853269984665640564039457584007913129639935');
  t.equal(parseAmount(MAX_UINT256.toString()), MAX_UINT256, '2^256-1 is the largest amount');
  const bad: [string, unknown, RegExp][] = [
    ['2^256', (MAX_UINT256 + 1n).toString(), /above 2\^256-1/],
    ['79 digits', '1'.repeat(79), /not a canonical/],
    ['leading zero', '01', /not a canonical/],
    ['two zeros', '00', /not a canonical/],
    ['plus sign', '+1', /not a canonical/],
    ['minus sign', '-1', /not a canonical/],
    ['minus zero', '-0', /not a canonical/],
    ['fraction', '1.0', /not a canonical/],
    ['exponent', '1e3', /not a canonical/],
    ['hex', '0x10', /not a canonical/],
    ['empty', '', /not a canonical/],
    ['space', ' 1', /not a canonical/],
    ['full-width digit', '\uff11', /not a canonical/],
    ['JSON number', 25, /must be a decimal string, not the number 25/],
    ['null', null, /not null/],
    ['boolean', true, /not the boolean true/],
  ];
  for (const [name, value, reason] of bad) t.throws(() => parseAmount(value), { name: AmountError.name, message: reason }, name);
  t.equal(formatAmount(MAX_UINT256), MAX_UINT256.toString());
  t.throws(() => formatAmount(-1n), AmountError);
  t.throws(() => formatAmount(MAX_UINT256 + 1n), AmountError);
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (n) => parseAmount(formatAmount(n)) === n));
});

t.test('every valid frame, each as the codec parses it', async (t) => {
  t.same(client(encodeSubscribe({ client: 'c1', topics: [A, B], cursor: C1, blockHash: HASH }).trimEnd()), {
    kind: 'frame',
    frame: { op: 'subscribe', client: 'c1', topics: [A, B], cursor: C1, blockHash: HASH },
  });
  t.same(client(encodeSubscribe({ client: 'c1', topics: [A, A], cursor: null, blockHash: null })), {
    kind: 'frame',
    frame: { op: 'subscribe', client: 'c1', topics: [A], cursor: null, blockHash: null },
  });
  const snapshot = encodeSnapshot(C1, HASH, [
    [A, MAX_UINT256],
    [B, 0n],
  ]);
  t.same(server(snapshot), {
    kind: 'frame',
    frame: { op: 'snapshot', cursor: C1, blockHash: HASH, state: { balances: { [A]: MAX_UINT256.toString(), [B]: '0' } } },
  });
  const event = encodeTransfer(C1, { from: A, to: B, amount: 25n, txHash: HASH, blockHash: HASH });
  t.equal(
    event,
    `{"op":"event","cursor":"${C1}","type":"Transfer","payload":{"from":"${A}","to":"${B}","amount":"25","txHash":"${HASH}","blockHash":"${HASH}"}}\n`,
  );
  t.same(server(event), { kind: 'frame', frame: JSON.parse(event) });
  const approval = encodeEvent(C1, 'Approval', { owner: A, spender: B, amount: '7', blockHash: HASH });
  t.same(server(approval), { kind: 'frame', frame: JSON.parse(approval) }, 'other types need only payload.blockHash');
  t.same(server(encodeRevoke('1:00000000020135:0000')), { kind: 'frame', frame: { op: 'revoke', fromCursor: '1:00000000020135:0000' } });
  t.same(server(encodeReset('slow-consumer')), { kind: 'frame', frame: { op: 'reset', reason: 'slow-consumer' } });
  t.same(server(encodePing(7)), { kind: 'frame', frame: { op: 'ping', id: 7 } });
  t.same(client(encodePong(0)), { kind: 'frame', frame: { op: 'pong', id: 0 } });
  t.same(server('{"op":"reset","reason":"maintenance"}'), { kind: 'frame', frame: { op: 'reset', reason: 'maintenance' } });
  t.equal(resetMeaning('maintenance'), 'shutdown', 'an unknown reason counts as shutdown');
  t.equal(resetMeaning('stale-cursor'), 'stale-cursor');
  t.same(
    server(`{"op":"event","cursor":"${C1}","type":"Transfer","payload":{"from":"${A}","to":"${A}","amount":"1","txHash":"x","blockHash":"y","memo":1}}`).kind,
    'frame',
    'extra members are allowed',
  );
  t.same(server(`{"op":"ping","id":3}\r`), { kind: 'frame', frame: { op: 'ping', id: 3 } }, 'a CR before the LF is JSON whitespace');
});

t.test('unknown ops are reported, not rejected; each side knows only its own ops', async (t) => {
  t.same(server('{"op":"notice","anything":[1,2]}'), { kind: 'unknown-op', op: 'notice' });
  t.same(server(encodeSubscribe({ client: 'c', topics: [A], cursor: null, blockHash: null })), { kind: 'unknown-op', op: 'subscribe' });
  t.same(client(encodeRevoke('1:00000000000001:0000')), { kind: 'unknown-op', op: 'revoke' });
  t.same(server('{"op":"EVENT"}'), { kind: 'unknown-op', op: 'EVENT' }, 'ops are case-sensitive');
});

t.test("a consumer's pong: its id is the ping's digits, a JSON integer >= 0 up to 2^53 - 1 (contract section 2)", async (t) => {
  for (const text of ['{"op":"pong","id":7}', '{ "op" : "pong" , "id" : 7 }', '{"op":"pong","id":0}', '{"op":"pong","id":9007199254740991}'])
    t.equal(client(text).kind, 'frame', `${text} is a pong`);
  for (const [text, why] of [
    ['{"op":"pong","id":7.0}', /not 7\.0/],
    ['{"op":"pong","id":7e0}', /not 7e0/],
    ['{"op":"pong","id":-0}', /not -0/],
    ['{"op":"pong","id":"7"}', /not "7"/],
    ['{"op":"pong","id":07}', /not valid JSON/],
    ['{"op":"pong","id":9007199254740992}', /above 2\^53-1/],
  ] as const)
    t.throws(() => client(text), { name: 'FrameError', message: why }, `${text} is an invalid frame: the server closes the connection`);
});

t.test('invalid frames: each rule of the contract, with a reason that names it', async (t) => {
  const bad: [string, string, RegExp, number?][] = [
    ['not JSON', '{"op":"ping","id":1', /not valid JSON/],
    ['trailing comma', '{"op":"ping","id":1,}', /not valid JSON/],
    ['empty line', '', /not valid JSON/],
    ['an array', '[{"op":"ping","id":1}]', /must be a JSON object, not an array/],
    ['null', 'null', /not null/],
    ['a string', '"ping"', /not the string/],
    ['two objects', '{"op":"ping","id":1}{"op":"ping","id":2}', /not valid JSON/],
    ['no op', '{"id":1}', /missing field op/],
    ['op not a string', '{"op":1}', /op must be a string/],
    ['ping without id', '{"op":"ping"}', /missing field id/],
    ['ping id with fraction', '{"op":"ping","id":7.0}', /JSON integer .* not 7\.0/],
    ['ping id with exponent', '{"op":"ping","id":7e0}', /not 7e0/],
    ['ping id negative', '{"op":"ping","id":-1}', /not -1/],
    ['ping id as string', '{"op":"ping","id":"7"}', /not "7"/],
    ['ping id above 2^53-1', '{"op":"ping","id":9007199254740992}', /above 2\^53-1/],
    ['pong id null', '{"op":"pong","id":null}', /not null/],
    ['snapshot without blockHash', `{"op":"snapshot","cursor":"${C1}","state":{"balances":{}}}`, /missing field blockHash/],
    ['snapshot without state', `{"op":"snapshot","cursor":"${C1}","blockHash":"${HASH}"}`, /missing field state/],
    ['snapshot balances an array', `{"op":"snapshot","cursor":"${C1}","blockHash":"${HASH}","state":{"balances":[]}}`, /state\.balances must be an object/],
    [
      'snapshot amount a number',
      `{"op":"snapshot","cursor":"${C1}","blockHash":"${HASH}","state":{"balances":{"${A}":5}}}`,
      /state\.balances\.0xa+: an amount/,
    ],
    [
      'snapshot key not an account',
      `{"op":"snapshot","cursor":"${C1}","blockHash":"${HASH}","state":{"balances":{"alice":"5"}}}`,
      /key "alice" is not an account/,
    ],
    [
      'snapshot key in upper case',
      `{"op":"snapshot","cursor":"${C1}","blockHash":"${HASH}","state":{"balances":{"0x${'A'.repeat(40)}":"5"}}}`,
      /is not an account/,
    ],
    ['snapshot malformed cursor', `{"op":"snapshot","cursor":"1:5:0","blockHash":"${HASH}","state":{"balances":{}}}`, /cursor: malformed cursor/],
    ['event amount as JSON number', transfer({ amount: 25 }), /payload\.amount: an amount must be a decimal string, not the number 25/],
    ['event amount with leading zero', transfer({ amount: '025' }), /payload\.amount/],
    ['event amount 2^256', transfer({ amount: (MAX_UINT256 + 1n).toString() }), /above 2\^256-1/],
    ['event from not an account', transfer({ from: '0x123' }), /payload\.from/],
    ['event without txHash', transfer({ txHash: undefined }), /missing field payload\.txHash/],
    ['event without blockHash', transfer({ blockHash: undefined }), /missing field payload\.blockHash/],
    ['event blockHash a number', transfer({ blockHash: 1 }), /payload\.blockHash must be a string/],
    ['other type without blockHash', `{"op":"event","cursor":"${C1}","type":"Approval","payload":{}}`, /missing field payload\.blockHash/],
    ['event without type', `{"op":"event","cursor":"${C1}","payload":{"blockHash":"x"}}`, /missing field type/],
    ['event type empty', `{"op":"event","cursor":"${C1}","type":"","payload":{"blockHash":"x"}}`, /type must not be empty/],
    ['event payload a string', `{"op":"event","cursor":"${C1}","type":"X","payload":"{}"}`, /payload must be an object/],
    ['event cursor of another chain', transfer({}).replace(C1, '2:00000000020134:0007'), /chain id 2 is not this run's chain 1/, 1],
    ['revoke not at log index 0000', '{"op":"revoke","fromCursor":"1:00000000020135:0002"}', /not the first position of a block/],
    ['revoke without fromCursor', '{"op":"revoke","cursor":"1:00000000020135:0000"}', /missing field fromCursor/],
    ['reset without reason', '{"op":"reset"}', /missing field reason/],
    ['reset reason a number', '{"op":"reset","reason":1}', /reason must be a string/],
  ];
  for (const [name, line, reason, chainId] of bad) {
    t.throws(() => server(line, chainId), { name: FrameError.name, message: reason }, name);
  }
  const badClient: [string, string, RegExp][] = [
    ['no client', `{"op":"subscribe","topics":["${A}"],"cursor":null,"blockHash":null}`, /missing field client/],
    ['empty client', `{"op":"subscribe","client":"","topics":["${A}"],"cursor":null,"blockHash":null}`, /client must not be empty/],
    ['no topics', '{"op":"subscribe","client":"c1","cursor":null,"blockHash":null}', /missing field topics/],
    ['empty topics', '{"op":"subscribe","client":"c1","topics":[],"cursor":null,"blockHash":null}', /non-empty array/],
    ['upper-case topic', `{"op":"subscribe","client":"c1","topics":["0x${'A'.repeat(40)}"],"cursor":null,"blockHash":null}`, /topics\[0\]/],
    ['no cursor member', `{"op":"subscribe","client":"c1","topics":["${A}"],"blockHash":null}`, /missing field cursor/],
    ['cursor without hash', `{"op":"subscribe","client":"c1","topics":["${A}"],"cursor":"3:00000000020134:0007","blockHash":null}`, /both be null/],
    ['hash without cursor', `{"op":"subscribe","client":"c1","topics":["${A}"],"cursor":null,"blockHash":"${HASH}"}`, /both be null/],
    ['cursor of another chain', `{"op":"subscribe","client":"c1","topics":["${A}"],"cursor":"${C1}","blockHash":"${HASH}"}`, /not this run's chain 3/],
  ];
  for (const [name, line, reason] of badClient) t.throws(() => client(line, 3), { name: FrameError.name, message: reason }, name);
});

t.test('bytes: UTF-8 only, at most 1 MiB', async (t) => {
  t.throws(() => parseServerFrame(Buffer.from([0x7b, 0xff, 0x7d])), { message: /not valid UTF-8/ });
  t.throws(() => parseServerFrame(Buffer.from('\ufeff{"op":"ping","id":1}')), { message: /not valid JSON/ }, 'a byte-order mark is not JSON');
  const okText = '{"op":"reset","reason":"é"}';
  t.same(parseServerFrame(Buffer.from(okText)), { kind: 'frame', frame: { op: 'reset', reason: 'é' } }, 'multi-byte UTF-8 is fine');
  const padTo = (bytes: number) => {
    const head = '{"op":"reset","reason":"shutdown","pad":"';
    return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
  };
  t.equal(Buffer.byteLength(padTo(MAX_LINE_BYTES)), MAX_LINE_BYTES);
  t.equal(server(padTo(MAX_LINE_BYTES)).kind, 'frame', 'exactly 1 MiB is a line');
  t.throws(() => server(padTo(MAX_LINE_BYTES + 1)), { message: /1048577 bytes is longer than the 1048576-byte limit/ });
  t.throws(() => encodeEvent(C1, 'Memo', { blockHash: HASH, memo: 'x'.repeat(MAX_LINE_BYTES) }), RangeError, 'our encoder never sends an oversized line');
});

t.test('the raw-literal scanner finds the top-level member, not a nested or quoted one', async (t) => {
  t.equal(rawTopLevelMember('{"op":"ping","id":7}', 'id'), '7');
  t.equal(rawTopLevelMember('{"x":{"id":1.5},"id":3}', 'id'), '3', 'a nested id is not the id');
  t.equal(rawTopLevelMember('{"s":"}\\"id\\":1.5{","id":4}', 'id'), '4', 'braces and quotes inside strings');
  t.equal(rawTopLevelMember('{"id":1.0,"id":2}', 'id'), '2', 'the last duplicate, as JSON.parse keeps');
  t.equal(rawTopLevelMember('{"id":2,"id":{"a":1}}', 'id'), undefined, 'a later object replaces an earlier number');
  t.equal(rawTopLevelMember('{ "id" : 1e2 }', 'id'), '1e2');
  t.equal(rawTopLevelMember('{"\\u0069d":5}', 'id'), '5', 'an escaped key is the same key');
  t.equal(server('{"op":"ping","id":1.0,"id":2}').kind, 'frame', 'the id JSON.parse keeps is a plain integer');
  t.throws(() => server('{"op":"ping","id":2,"id":1.0}'), FrameError);
  t.throws(() => server('{"op":"ping","x":[{"id":1}],"id":1.5}'), FrameError);
});

t.test('line splitting: several per read, split across reads, the 1 MiB limit', async (t) => {
  const s = new NdjsonSplitter();
  let out = s.push(Buffer.from('{"a":1}\n{"b"'));
  t.same(
    out.lines.map((l) => l.toString()),
    ['{"a":1}'],
  );
  t.equal(s.fragmentLength, 4);
  out = s.push(Buffer.from(':2}\n\n{"c":3}\n'));
  t.same(
    out.lines.map((l) => l.toString()),
    ['{"b":2}', '', '{"c":3}'],
    'an empty line is a line (and an invalid frame)',
  );
  t.equal(out.overflow, false);
  t.equal(s.fragmentLength, 0);

  const big = new NdjsonSplitter();
  t.equal(big.push(Buffer.alloc(MAX_LINE_BYTES, 0x61)).overflow, false, 'a 1 MiB fragment may still end in LF');
  const done = big.push(Buffer.from('\n'));
  t.equal(done.lines[0]!.length, MAX_LINE_BYTES, 'a 1 MiB line, the LF not counted');
  const over = new NdjsonSplitter();
  over.push(Buffer.alloc(MAX_LINE_BYTES - 1, 0x61));
  t.equal(over.push(Buffer.from('bb')).overflow, true, 'one byte past the limit without LF: reported at once');

  // Any way of cutting a stream into reads gives the same lines.
  const text = '{"op":"ping","id":1}\n{"op":"reset","reason":"é"}\n\n{"x":[1,2,3]}\n';
  const bytes = Buffer.from(text);
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
      const splitter = new NdjsonSplitter();
      const lines: string[] = [];
      let from = 0;
      for (const cut of [...cuts.sort((a, b) => a - b), bytes.length]) {
        lines.push(...splitter.push(bytes.subarray(from, cut)).lines.map((l) => l.toString()));
        from = cut;
      }
      return JSON.stringify(lines) === JSON.stringify(text.split('\n').slice(0, -1));
    }),
  );
});
