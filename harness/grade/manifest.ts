// A submission's manifest: chaoslab.json or chaoslab.yaml in its folder, giving `lab`,
// `command` (starts the consumer, run from the built folder), `server` (starts the push server,
// for a lab whose server is graded too: its server scenarios), at least one of the two, and
// optionally `build` (run once before grading). Without one, the first default that fits the folder's files is used, and
// the grader says which. A mistake names the file and the field. The grader is root: the
// manifest is read without following links (no-follow.ts), and one that is a link, a FIFO, a
// device or a socket is a mistake naming it, its content never read.

import { existsSync, lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readSubmissionFile, SubmissionFileError } from './build/no-follow.js';

export interface Manifest {
  lab?: string;
  /** The consumer's command line; absent in a manifest that gives only a server. */
  command?: string;
  /** The push server's command line (graded by the rubric's server scenarios). */
  server?: string;
  build?: string;
  /** Where it came from, in words a student reads ("chaoslab.yaml", "no manifest: defaults for client.py"). */
  source: string;
}

export class ManifestError extends Error {
  override name = 'ManifestError';
}

export const MANIFEST_FILES = ['chaoslab.json', 'chaoslab.yaml', 'chaoslab.yml'] as const;
/** No honest manifest comes near it (three short fields). */
export const MANIFEST_MAX_BYTES = 64 * 1024;

/** The defaults, first match wins: a file that must exist, and what it means. */
export const DEFAULTS: readonly { file: string; command: string; build?: string }[] = [
  { file: 'client.py', command: 'python3 client.py' },
  { file: 'consumer.py', command: 'python3 consumer.py' },
  { file: 'consumer.mjs', command: 'node consumer.mjs' },
  { file: 'client.mjs', command: 'node client.mjs' },
  { file: 'consumer.js', command: 'node consumer.js' },
  { file: 'client.js', command: 'node client.js' },
  { file: 'go.mod', command: './consumer', build: 'go build -o consumer .' },
  { file: 'Cargo.toml', command: './target/release/consumer', build: 'cargo build --release' },
  { file: 'consumer', command: './consumer' },
];

/** The submission's manifest, or the default that fits; throws ManifestError naming the file and field. */
export function readManifest(dir: string): Manifest {
  // Present is there at all, a dangling link too (existsSync would follow it).
  const present = MANIFEST_FILES.filter((f) => entryExists(join(dir, f)));
  if (present.length > 1) throw new ManifestError(`${join(dir, present[0]!)}: ${present.join(' and ')} both exist: keep one`);
  if (present.length === 1) {
    const file = join(dir, present[0]!);
    let text: string;
    try {
      text = readSubmissionFile(file, MANIFEST_MAX_BYTES);
    } catch (error) {
      if (error instanceof SubmissionFileError) throw new ManifestError(error.message);
      throw error;
    }
    return parseManifest(file, text, present[0]!);
  }
  for (const d of DEFAULTS) {
    const path = join(dir, d.file);
    if (existsSync(path) && statSync(path).isFile()) {
      return {
        command: d.command,
        ...(d.build ? { build: d.build } : {}),
        source: `no manifest: the default for ${d.file}${d.build ? ` (build \`${d.build}\`)` : ''}`,
      };
    }
  }
  throw new ManifestError(
    `${dir}: no chaoslab.json or chaoslab.yaml, and none of ${DEFAULTS.map((d) => d.file).join(', ')} to guess a command from: add a manifest with lab and command`,
  );
}

function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Checks a manifest's text; `shown` is the name used in the result's words. */
export function parseManifest(file: string, text: string, shown: string): Manifest {
  let doc: unknown;
  try {
    doc = file.endsWith('.json') ? JSON.parse(text) : parse(text);
  } catch (error) {
    throw new ManifestError(`${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ManifestError(`${file}: must be a mapping with lab, command (and/or server) and optionally build`);
  const m = doc as Record<string, unknown>;
  for (const key of Object.keys(m))
    if (!['lab', 'command', 'server', 'build'].includes(key)) throw new ManifestError(`${file}: ${key}: unknown field (lab, command, server, build)`);
  const text_ = (field: string, required: boolean): string | undefined => {
    const value = m[field];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.trim() === '')
      throw new ManifestError(`${file}: ${field}: must be a non-empty string${required ? ' (required)' : ''}`);
    if (value.includes('\0') || value.includes('\n')) throw new ManifestError(`${file}: ${field}: must be one line`);
    return value.trim();
  };
  const lab = text_('lab', false);
  // A server alone is a submission too (a class of servers); neither is nothing to grade.
  const server = text_('server', false);
  const command = text_('command', server === undefined);
  const build = text_('build', false);
  return { ...(lab ? { lab } : {}), ...(command ? { command } : {}), ...(server ? { server } : {}), ...(build ? { build } : {}), source: shown };
}

/** How a manifest starts the submission, in words: "chaoslab.yaml: `python3 c.py`", or with a server "…: consumer `…`, server `…`". */
export function manifestHow(manifest: Pick<Manifest, 'source' | 'command' | 'server'>): string {
  if (manifest.server === undefined) return `${manifest.source}: \`${manifest.command}\``;
  return `${manifest.source}: ${[...(manifest.command ? [`consumer \`${manifest.command}\``] : []), `server \`${manifest.server}\``].join(', ')}`;
}
