// The consumer's room and the run folder around it, and whether the consumer's uid can reach
// what it needs.
//
// A sealed run folder is root's and mode 0711: the consumer's uid may pass through it to its
// room but not list it; every other file in it (journal.jsonl, the plan, control.db, reports)
// is made 0600/0700 root, so the consumer can neither read nor write the evidence even by name.
// The room, `<run folder>/room/`, is the consumer's uid's, mode 0700: it holds only the
// consumer's database and is the consumer's HOME. After the run closeRoom() hands it back to
// root (without following any link the consumer left), so a later consumer that gets the same
// uid cannot read or change an old run's room.
//
// Reachability: before a run, checkReachable() tells, for the consumer's uid, whether the
// working directory can be entered and the command (first word, looked up in the sealed PATH)
// executed, and whether the files the command names can be read; it names the first path on
// the way that is not (e.g. /root is 0700, mkdtemp folders are 0700). It reads mode bits for
// uid U / gid U with no supplementary groups, which is exactly what setpriv gives; POSIX ACLs
// and mount options (noexec) are not looked at.

import {
  chmodSync,
  chownSync,
  closeSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  statSync,
  type Stats,
} from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** PATH of every sealed consumer. */
export const SEALED_PATH = '/usr/local/bin:/usr/bin:/bin';
export const ROOM_NAME = 'room';

/** Makes `runDir` (created if needed) root's, 0711: passable, not listable. */
export function prepareRunFolder(runDir: string): void {
  mkdirSync(runDir, { recursive: true, mode: 0o711 });
  chownSync(runDir, 0, 0);
  chmodSync(runDir, 0o711);
}

/**
 * Takes every entry of the run folder but the room away from other users: files 0600, folders
 * 0700 (recursively; links are not followed). Call after creating evidence files, or set
 * process.umask(0o077) in the process that writes them.
 */
export function protectEvidence(runDir: string, roomName = ROOM_NAME): void {
  for (const name of readdirSync(runDir)) {
    if (name === roomName) continue;
    restrict(join(runDir, name));
  }
}

function restrict(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  chmodSync(path, st.mode & (st.isDirectory() ? 0o700 : 0o600));
  if (st.isDirectory()) for (const name of readdirSync(path)) restrict(join(path, name));
}

/** Creates `<runDir>/room` owned by uid:gid, mode 0700; returns its path. */
export function createRoom(runDir: string, uid: number, gid = uid, roomName = ROOM_NAME): string {
  const room = join(runDir, roomName);
  mkdirSync(room, { mode: 0o700 });
  chownSync(room, uid, gid);
  chmodSync(room, 0o700);
  return room;
}

/**
 * After the run (no process of the uid left): everything in the room becomes root's, set-id
 * bits and world-write dropped; links are changed themselves, never followed.
 * Returns what the consumer left that is not a plain file or folder (links, fifos, sockets).
 */
export function closeRoom(room: string): string[] {
  const odd: string[] = [];
  const visit = (path: string): void => {
    const st = lstatSync(path);
    lchownSync(path, 0, 0);
    if (st.isSymbolicLink()) {
      odd.push(`${path} (symbolic link to ${readlinkSync(path)})`);
      return;
    }
    if (!st.isFile() && !st.isDirectory()) {
      odd.push(`${path} (${st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : 'special file'})`);
      return;
    }
    chmodSync(path, st.mode & 0o755);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(room);
  return odd;
}

/**
 * Hands every room of a run folder (`<runDir>/rooms/*`) back to root, whoever made them: the
 * runner calls it after every sealed run, so a room is never left the uid's when the worker died
 * before its own closeRoom (a later consumer with the same uid could otherwise reach it).
 */
export function handBackRooms(runDir: string): void {
  const rooms = join(runDir, 'rooms');
  let names: string[];
  try {
    if (!lstatSync(rooms).isDirectory()) return;
    names = readdirSync(rooms);
  } catch {
    return; // no room was made
  }
  for (const name of names) {
    try {
      closeRoom(join(rooms, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // removed meanwhile: nothing to hand back
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reachability for a uid

export type Need = 'read' | 'write' | 'execute' | 'search';
const BITS: Record<Need, number> = { read: 4, write: 2, execute: 1, search: 1 };

export interface Unreachable {
  /** The path that stops the uid (an ancestor folder, or the target itself). */
  path: string;
  /** What the uid lacks there. */
  lacks: Need;
  /** What was being reached, e.g. the working directory or the command. */
  target: string;
  /** One line for a person. */
  message: string;
}

function permits(st: Stats, uid: number, gid: number, need: Need): boolean {
  if (uid === 0) return need !== 'execute' || (st.mode & 0o111) !== 0 || st.isDirectory();
  const shift = st.uid === uid ? 6 : st.gid === gid ? 3 : 0;
  return ((st.mode >> shift) & BITS[need]) !== 0;
}

/**
 * Whether uid:gid (no supplementary groups) can reach `path` and has `need` on it. Walks every
 * component from /, following symbolic links (each link's target is walked the same way).
 * Returns what stops it, or undefined when reachable. A path that does not exist is reported too.
 */
export function checkAccess(path: string, uid: number, gid: number, need: Need, target = path): Unreachable | undefined {
  const stop = (at: string, lacks: Need, why: string): Unreachable => ({
    path: at,
    lacks,
    target,
    message: `uid ${uid} cannot reach ${target}: ${why}`,
  });
  let hops = 0;
  const walk = (absolute: string): { real: string } | Unreachable => {
    let current = '/';
    const parts = absolute.split('/').filter((part) => part !== '' && part !== '.');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      let st: Stats;
      try {
        st = statSync(current);
      } catch {
        return stop(current, 'search', `${current} does not exist`);
      }
      if (!permits(st, uid, gid, 'search')) return stop(current, 'search', `${current} is not searchable by it (${describeMode(st)})`);
      if (part === '..') {
        current = dirname(current);
        continue;
      }
      const next = join(current, part);
      let lst: Stats;
      try {
        lst = lstatSync(next);
      } catch {
        return stop(next, need, `${next} does not exist`);
      }
      if (lst.isSymbolicLink()) {
        if (++hops > 40) return stop(next, need, `too many symbolic links at ${next}`);
        const link = readlinkSync(next);
        const resolved = walk(resolve(current, link));
        if ('path' in resolved) return resolved;
        current = resolved.real;
      } else {
        current = next;
      }
    }
    return { real: current };
  };
  const reached = walk(resolve(path));
  if ('path' in reached) return reached;
  let st: Stats;
  try {
    st = statSync(reached.real);
  } catch {
    return stop(reached.real, need, `${reached.real} does not exist`);
  }
  if (!permits(st, uid, gid, need)) {
    const where = reached.real === resolve(path) ? reached.real : `${reached.real} (where ${path} leads)`;
    return stop(
      reached.real,
      need,
      `${where} is not ${need === 'search' ? 'searchable' : `${need === 'execute' ? 'executable' : `${need}able`}`} by it (${describeMode(st)})`,
    );
  }
  if (need === 'execute' && !st.isFile()) return stop(reached.real, need, `${reached.real} is not a file`);
  return undefined;
}

function describeMode(st: Stats): string {
  return `owner ${st.uid}:${st.gid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}`;
}

/** Splits a shell command line into words (quotes and backslashes honoured; stops at nothing). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  const append = (text: string): void => {
    word = (word ?? '') + text;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else append(c);
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) append(command[++i]!);
      else append(c);
    } else if (c === "'" || c === '"') {
      quote = c;
      append('');
    } else if (c === '\\' && i + 1 < command.length) {
      append(command[++i]!);
    } else if (/\s/.test(c) || ';&|()<>'.includes(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      append(c);
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** Where the command's program is for the consumer: the first word that is not VAR=value, looked up in `path`. */
export function resolveProgram(command: string, cwd: string, path = SEALED_PATH): { word: string; file?: string } | undefined {
  const word = shellWords(command).find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  if (word === undefined) return undefined;
  if (word.includes('/')) return { word, file: resolve(cwd, word) };
  for (const dir of path.split(':')) {
    if (dir === '') continue;
    const candidate = join(dir, word);
    try {
      if (statSync(candidate).isFile()) return { word, file: candidate };
    } catch {}
  }
  return { word }; // a shell builtin, or not found: the shell will say
}

export interface ReachabilityInput {
  uid: number;
  gid?: number;
  /** The consumer's working directory. */
  cwd: string;
  /** The consumer's shell command line. */
  command: string;
  /** The room (HOME): must be the uid's and writable. */
  room?: string;
  /** PATH the consumer runs with (SEALED_PATH). */
  path?: string;
}

/** Folders a sealed run replaces with fresh, empty ones of its own (confine.ts); the working directory stays reachable. */
const PRIVATE_FOLDERS = ['/tmp', '/var/tmp', '/dev/shm', '/run/lock', '/var/lock'];

/**
 * `file` (absolute) lies in a folder the sealed run empties, outside the working directory that
 * stays: the uid will not find it. Checked for the command's program only: another word naming a
 * path there may be meant for inside the run (a hostile store's symlink target); a program that
 * then cannot open it says "not found", and the run's finding says why (core-findings.ts).
 */
function hiddenByPrivateFolder(file: string, cwd: string, target: string): Unreachable | undefined {
  const folder = PRIVATE_FOLDERS.find((f) => file.startsWith(`${f}/`));
  if (!folder || file.startsWith(`${resolve(cwd)}/`)) return undefined;
  return {
    path: file,
    lacks: 'read',
    target,
    message: `${target}${target.endsWith(file) ? '' : ` (${file})`} lies under ${folder}: a sealed run has its own empty ${folder}, so it is not there; keep your program and what it reads in your project folder`,
  };
}

/**
 * Everything that would stop the consumer's uid, each naming its path: the working directory
 * (search), the program (execute; read too for a script), every other word of the command that
 * names an existing file or folder (read / search), and the room (write). Empty when all is reachable.
 */
export function checkReachable(input: ReachabilityInput): Unreachable[] {
  const uid = input.uid;
  const gid = input.gid ?? uid;
  const problems: Unreachable[] = [];
  const add = (problem: Unreachable | undefined): void => {
    if (problem && !problems.some((p) => p.path === problem.path && p.target === problem.target)) problems.push(problem);
  };
  add(checkAccess(input.cwd, uid, gid, 'search', `the working directory ${input.cwd}`));
  if (input.room !== undefined) add(checkAccess(input.room, uid, gid, 'write', `the room ${input.room}`));
  const program = resolveProgram(input.command, input.cwd, input.path ?? SEALED_PATH);
  if (program?.file !== undefined) {
    const what = `the command's program ${program.word}`;
    const exec = hiddenByPrivateFolder(resolve(input.cwd, program.file), input.cwd, what) ?? checkAccess(program.file, uid, gid, 'execute', what);
    add(exec);
    if (!exec && isScript(program.file)) add(checkAccess(program.file, uid, gid, 'read', what));
  } else if (program !== undefined && !isShellWord(program.word)) {
    problems.push({
      path: program.word,
      lacks: 'execute',
      target: `the command's program ${program.word}`,
      message: `${program.word} is not found in the consumer's PATH (${input.path ?? SEALED_PATH}); give its full path`,
    });
  }
  for (const word of shellWords(input.command)) {
    if (word === program?.word || word.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    const candidate = isAbsolute(word) ? word : resolve(input.cwd, word);
    let st: Stats;
    try {
      st = statSync(candidate); // exists for the harness: then the consumer needs it too
    } catch {
      continue;
    }
    if (!word.includes('/') && !st.isFile()) continue; // a plain word that happens to name a folder here
    add(checkAccess(candidate, uid, gid, st.isDirectory() ? 'search' : 'read', `${word} in the command`));
  }
  return problems;
}

const SHELL_WORDS = new Set([
  'exec',
  'cd',
  'echo',
  'printf',
  'true',
  'false',
  'test',
  '[',
  'set',
  'export',
  'trap',
  'kill',
  'read',
  'wait',
  'sleep',
  'ulimit',
  'while',
  'for',
  'if',
  'until',
  '{',
  '!',
  'eval',
  'command',
]);

function isShellWord(word: string): boolean {
  return SHELL_WORDS.has(word);
}

/** A file starting with "#!": the kernel has its interpreter read it, as the consumer's uid. */
function isScript(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head.toString('latin1') === '#!';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
