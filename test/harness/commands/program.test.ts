// The command line's own mistakes: an unknown option or command is one line and a hint, never
// the whole help; --help still prints the help.
import { CommanderError } from 'commander';
import t from 'tap';
import { buildProgram, oneLineError } from '../../../harness/commands/program.js';

async function parse(args: string[]): Promise<{ out: string; err: string; error?: CommanderError }> {
  let out = '';
  let err = '';
  const program = buildProgram({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  try {
    await program.parseAsync(args, { from: 'user' });
    return { out, err };
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return { out, err, error };
  }
}

t.test('oneLineError', async (t) => {
  t.equal(oneLineError("error: unknown option '--foo'", 'chaoslab run'), "chaoslab: unknown option '--foo' (see chaoslab run --help)\n");
  t.equal(
    oneLineError("error: unknown option '--jbs'\n(Did you mean --jobs?)\n", 'chaoslab run'),
    "chaoslab: unknown option '--jbs' (did you mean --jobs?) (see chaoslab run --help)\n",
  );
});

t.test('an unknown option of run: one line naming it, and where the help is', async (t) => {
  const { err, out, error } = await parse(['run', 'ack-crash', '--foo']);
  t.equal(error?.code, 'commander.unknownOption');
  t.equal(err, "chaoslab: unknown option '--foo' (see chaoslab run --help)\n");
  t.equal(out, '');
  t.notMatch(err, /Usage:|Options:/);
});

t.test('a near miss gets commander’s suggestion, on the same line', async (t) => {
  const { err } = await parse(['run', 'ack-crash', '--jbs', '2']);
  t.equal(err, "chaoslab: unknown option '--jbs' (did you mean --jobs?) (see chaoslab run --help)\n");
});

t.test('an unknown command and a bad option value are one line too', async (t) => {
  const cmd = await parse(['rn']);
  t.equal(cmd.error?.code, 'commander.unknownCommand');
  t.match(cmd.err, /^chaoslab: unknown command 'rn' \(did you mean run\?\) \(see chaoslab --help\)\n$/);
  const value = await parse(['run', 'gap', '--jobs', 'x']);
  t.match(value.err, /^chaoslab: option '--jobs <n>' argument 'x' is invalid\. expected a whole number >= 1 \(see chaoslab run --help\)\n$/);
  const reporter = await parse(['run', 'gap', '--reporter', 'xml']);
  t.match(reporter.err, /^chaoslab: option '--reporter <name>' argument 'xml' is invalid\. Allowed choices are console, json\. \(see chaoslab run --help\)\n$/);
  const missing = await parse(['report']);
  t.match(missing.err, /^chaoslab: missing required argument 'run-folders' \(see chaoslab report --help\)\n$/);
});

t.test('--help still prints the whole help, to stdout', async (t) => {
  const { out, error } = await parse(['run', '--help']);
  t.equal(error?.exitCode, 0);
  t.match(out, /Usage: chaoslab run \[options\] \[scenarios\.\.\.\]/);
  t.match(out, /--out <dir>/);
  t.match(out, /--reporter <name>/);
  t.notMatch(out, /--reports <dir>/, '--reports is accepted but no longer advertised');
});

/** What a command writes to process.stdout (list and validate write there directly). */
async function stdoutOf(args: string[]): Promise<string> {
  let text = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    await buildProgram({ writeOut: () => {}, writeErr: () => {} }).parseAsync(args, { from: 'user' });
  } finally {
    process.stdout.write = write;
  }
  return text;
}

t.test('list and validate', async (t) => {
  const list = (await stdoutOf(['list'])).split('\n').filter(Boolean);
  t.ok(list.length > 30, `${list.length} scenarios`);
  t.match(list[0], /^ack-crash\s+\[ledger\] A consumer that crashes/);
  t.ok(
    list.some((l) => /^feed-happy-path\s+\[feed\] /.test(l)),
    'each line names its lab',
  );
  const feed = (await stdoutOf(['list', '--lab', 'feed'])).split('\n').filter(Boolean);
  t.ok(feed.length > 0 && feed.some((l) => l.startsWith('feed-happy-path ')));
  t.notOk(
    feed.some((l) => /^\S/.test(l) && !l.startsWith('feed-')),
    'only feed scenarios',
  );
  t.notMatch(feed.join('\n'), /\[feed\]/, 'one lab: no lab tags');
  t.match(feed.join(' ').replace(/\s+/g, ' '), /\(e\.g\. "1:13:2" for "1:00000000000013:0002"\)/, 'the whole summary, past its "e.g."');
  await t.rejects(stdoutOf(['list', '--lab', 'nolab']), { name: 'UsageError', message: /unknown lab "nolab"; labs: feed, ledger/ });
  const file = `${import.meta.dirname}/../../../scenarios/ledger/gap.yaml`;
  t.equal(await stdoutOf(['validate', file]), `${file}: ok\n`);
  t.equal(await stdoutOf(['validate', 'gap', 'feed-happy-*']), 'gap: ok\nfeed-happy-path: ok\n', 'names and globs');
  await t.rejects(stdoutOf(['validate', '--lab', 'feed', 'happy-path']), /happy-path is a ledger scenario/);
  await t.rejects(stdoutOf(['validate', `${import.meta.dirname}/nope.yaml`]), /no such file/);
});

t.test('run refuses what it cannot select before starting anything', async (t) => {
  await t.rejects(stdoutOf(['run', 'ack-crash', 'nope-*', 'gapp']), {
    name: 'UsageError',
    message: 'no scenario matches "nope-*", "gapp" (did you mean "gap"?)',
  });
  await t.rejects(stdoutOf(['run', '--all', 'gap']), /give scenario names or --all, not both/);
});
