// The option parsers and options every command that runs scenarios shares (sizes, counts, the
// sealing flags, the room quota): beside the commands, so that no command imports another.
import { type Command, InvalidArgumentError } from 'commander';
import type { SealMode } from '../run/sealing.js';
import { DEFAULT_ROOM_QUOTA_BYTES } from '../sandbox/room-fs.js';
import { formatBytes, parseBytes } from '../text/bytes.js';

/** The sealing mode the flags ask for. */
export const sealModeOf = (seal: boolean | undefined): SealMode | undefined => (seal === undefined ? undefined : seal ? 'on' : 'off');

export const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
};

export const nonNegativeInt = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number >= 0');
  return Number(value);
};

/** A size option in bytes (`--store-limit 256M`, `--room-quota 1G`: binary units), at least `min`. */
export const sizeOption =
  (min = 1) =>
  (value: string): number => {
    const bytes = parseBytes(value);
    if (bytes === undefined || bytes < min) throw new InvalidArgumentError(`expected a size such as 256M or 1G, at least ${formatBytes(min)}`);
    return bytes;
  };

/** `--store-limit`, on every command that runs consumers. */
export const STORE_LIMIT_FLAGS = '--store-limit <size>';
export const STORE_LIMIT_HELP =
  "the largest consumer store (file + WAL) the checker reads, e.g. 256M, 1G (default: the lab's, 64 MiB); a larger one fails with its size";

/** Smallest room quota a flag may ask for: a consumer's SQLite file and its journal need room. */
const MIN_ROOM_QUOTA = 1024 ** 2;
/** The option, for every command that runs scenarios sealed. */
export const addRoomQuotaOption = (command: Command): Command =>
  command.option(
    '--room-quota <size>',
    `sealed runs: the disk quota of each consumer's room, its HOME and the only place its store lives (e.g. 512M, 2G; default ${formatBytes(DEFAULT_ROOM_QUOTA_BYTES)})`,
    sizeOption(MIN_ROOM_QUOTA),
  );

/**
 * How help words a lab option's default: the registry's first lab (the one a scenario file without
 * `protocol` speaks). Not its name: the program is built before any lab is loaded, and no list
 * outside a lab's folder names the labs.
 */
export const DEFAULT_LAB_HELP = 'the first lab: the one a scenario file without `protocol` speaks';
