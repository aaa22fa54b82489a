#!/usr/bin/env node
// The scripted publisher on its own: `node dist/publisher/ledger/main.js --deltas 7,5,-3`.
// Prints the port, then one JSON transcript entry per line, until Ctrl-C.

import { Command, InvalidArgumentError } from 'commander';
import { Publisher } from './server.js';

const integer = (min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
  return n;
};

const program = new Command('chaoslab-publisher')
  .description('scripted ledger-lab publisher: EVENT <seq> <delta> lines, replay from RESUME, RESYNC past retention')
  .requiredOption('--deltas <list>', 'comma-separated deltas; seq is the position from 0', (v) =>
    v.split(',').map((d) => {
      const n = Number(d);
      if (!/^(0|-?[1-9][0-9]*)$/.test(d) || n < -1000 || n > 1000) throw new InvalidArgumentError(`bad delta "${d}" (integers -1000..1000)`);
      return n;
    }),
  )
  .option('--port <port>', 'listen port on 127.0.0.1 (0 = ephemeral)', integer(0), 0)
  .option('--window <n>', 'max unacknowledged events in flight', integer(1), 16)
  .option('--retention-start <seq>', 'first seq still in the log', integer(0), 0)
  .option('--redeliver-unacked', 'on RESUME, resend unacknowledged events first', false)
  .option('--ack-deadline-ms <ms>', 'close when an owed ACK has not come for this long (window full, or everything sent)', integer(1), 5000)
  .parse();

const opts = program.opts<{ deltas: number[]; port: number; window: number; retentionStart: number; redeliverUnacked: boolean; ackDeadlineMs: number }>();
const publisher = await Publisher.start(
  [
    {
      name: 'main',
      events: opts.deltas.map((delta, seq) => ({ seq, delta })),
      window: opts.window,
      retentionStart: opts.retentionStart,
      redeliverUnacked: opts.redeliverUnacked,
      ackDeadlineMs: opts.ackDeadlineMs,
    },
  ],
  { ports: { main: opts.port }, onTranscript: (entry) => process.stdout.write(`${JSON.stringify(entry)}\n`) },
);
process.stderr.write(`publisher listening on 127.0.0.1:${publisher.stream('main').port}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void publisher.close().then(() => process.exit(0)));
