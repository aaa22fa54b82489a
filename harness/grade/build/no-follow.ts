// Files the grader reads from a submission (its manifest, the tree it copies), opened without
// following links: the grader runs as root, so a `chaoslab.json` that is a symbolic link to a
// root-only file would otherwise put that file's content in results.json. A link, FIFO, device
// or socket where a file is read is an error naming the file and what it was, never its
// content; a FIFO never blocks (O_NONBLOCK, then fstat before any read).

import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  type Stats,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

export class SubmissionFileError extends Error {
  override name = 'SubmissionFileError';
}

/** What a file system entry is, in the words an error uses. */
export function kindOf(st: Stats): string {
  if (st.isFile()) return 'a file';
  if (st.isDirectory()) return 'a folder';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'a special file';
}

const NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens a regular file without following a link or blocking on a FIFO; throws naming `shown`. */
function openRegular(path: string, shown: string): { fd: number; st: Stats } {
  let fd: number;
  try {
    fd = openSync(path, NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a link is ELOOP; a socket cannot be opened at all (ENXIO).
    if (code === 'ELOOP' || code === 'ENXIO') throw new SubmissionFileError(`${shown}: is ${kindOf(lstatSync(path))}, not a file: it was not read`);
    throw new SubmissionFileError(`${shown}: cannot be read (${code ?? (error as Error).message})`);
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new SubmissionFileError(`${shown}: is ${kindOf(st)}, not a file: it was not read`);
  }
  return { fd, st };
}

/** A submission's small text file (a manifest), at most `maxBytes`; `shown` names it in errors. */
export function readSubmissionFile(path: string, maxBytes: number, shown = path): string {
  const { fd, st } = openRegular(path, shown);
  try {
    if (st.size > maxBytes) throw new SubmissionFileError(`${shown}: is ${st.size} bytes, more than the ${maxBytes} a manifest may have`);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies a submission's tree: folders and regular files (their permission bits, never set-id),
 * symbolic links as links (never followed: the consumer follows them later with its own uid's
 * rights). A FIFO, device or socket anywhere is an error naming it: it is not a submission's.
 */
export function copySubmission(from: string, to: string, shown = from): void {
  const visit = (src: string, dst: string, name: string): void => {
    const st = lstatSync(src);
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (st.isDirectory()) {
      mkdirSync(dst, { mode: 0o700 });
      for (const entry of readdirSync(src).sort()) visit(join(src, entry), join(dst, entry), join(name, entry));
    } else if (st.isFile()) copyFile(src, dst, name);
    else throw new SubmissionFileError(`${name}: is ${kindOf(st)}: a submission holds files, folders and links only`);
  };
  visit(from, to, shown);
}

function copyFile(src: string, dst: string, shown: string): void {
  const { fd, st } = openRegular(src, shown);
  let out: number | undefined;
  try {
    out = openSync(dst, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, st.mode & 0o777);
    const buf = Buffer.alloc(1024 * 1024);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
      for (let written = 0; written < n; ) written += writeSync(out, buf, written, n - written);
    }
  } finally {
    closeSync(fd);
    if (out !== undefined) closeSync(out);
  }
}
