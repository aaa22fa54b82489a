// Mutant "continue-after-malformed": on a malformed line it logs to stderr and carries on
// with the next line instead of closing the connection.
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「不正なメッセージを読んだあとで、そのまま次の行から続けると、実際に抜けたコマンドを
//     隠してしまうおそれがあるため、接続を終了します。」
//   "After reading a malformed message the connection is closed, because carrying on with
//    the next line could hide a command that was really lost."
//
// A stream of valid lines never reaches the catch — a near miss. The bad line itself is
// still not applied; what follows it is. (A fragment of 64 bytes without LF and a final
// fragment are reported by the line reader, not by consumeLine, so they still end the
// session.)
// Killed by: malformed-double-space (any malformed-* scenario with a line that reaches
// parseLine does) — the publisher puts a malformed line before a valid EVENT k; nothing from
// that line or after it may be applied or acknowledged, and this consumer ACKs and applies k
// and waits for the publisher to close instead of hanging up.
// Python twin: consumer/ledger/mutants/continue-after-malformed.py.
import { MalformedLine, consumeLine, main } from '../typescript/ledger-client.js';

await main({
  async consumeLine(s, bytes) {
    try {
      await consumeLine(s, bytes);
    } catch (err) {
      if (!(err instanceof MalformedLine)) throw err;
      process.stderr.write(`skipping ${err.message}\n`); // BUG: skip it and read on
    }
  },
});
