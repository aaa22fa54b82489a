// `--out <dir>` (and its older name `--reports`, still accepted) for every command that writes
// or reads the reports folder.
import { type Command, Option } from 'commander';

export function addOutOption(command: Command, what: string): Command {
  return command
    .option('--out <dir>', `${what} (default: reports/ in the current directory)`)
    .addOption(new Option('--reports <dir>', 'the same as --out').hideHelp());
}
