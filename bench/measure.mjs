// make bench's measuring tools: a timed child process, figures and floors sampled in turns
// (so both see the same noise), a journal's streaming rate, a ledger run without the harness.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const root = new URL('..', import.meta.url).pathname;
export const cli = join(root, 'dist', 'harness', 'cli.js');
export const TS_REFERENCE = ['node', join(root, 'dist', 'consumer', 'ledger', 'typescript', 'client.js')];
export const PY_REFERENCE = ['python3', join(root, 'consumer', 'ledger', 'python', 'client.py')];

/** Runs a command to its end; resolves with its wall time in seconds and its exit code. */
export function timed(argv, { env = process.env, cwd = root, stdout = 'ignore' } = {}) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', stdout, 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => {
      if (err.length < 4000) err += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ seconds: (performance.now() - t0) / 1000, code, stderr: err }));
  });
}

/** `reps` rounds, each running every sampler once in turn; returns one sample list per sampler. */
export async function inTurns(reps, samplers) {
  const samples = samplers.map(() => []);
  for (let i = 0; i < reps; i++) for (const [k, sample] of samplers.entries()) samples[k].push(await sample(i));
  return samples;
}

/** Events per second of a stream in a journal: from its first EVENT sent to its last ACK received. */
export function journalRate(journalFile, stream = 'consumer') {
  let first;
  let last;
  let acks = 0;
  for (const line of readFileSync(journalFile, 'utf8').split('\n')) {
    if (!line.includes('"wire"') || !line.includes(`"stream":"${stream}"`)) continue;
    const e = JSON.parse(line);
    if (e.kind === 'send' && first === undefined && e.line.startsWith('EVENT')) first = e.t;
    if (e.kind === 'recv' && e.line.startsWith('ACK')) {
      last = e.t;
      acks++;
    }
  }
  if (first === undefined || last === undefined || last <= first) throw new Error(`${journalFile}: no EVENT…ACK span on stream ${stream}`);
  // The journal's clock is in milliseconds.
  return acks / ((last - first) / 1000);
}

/** The first journal entry of a type. */
export function journalEntry(journalFile, type) {
  for (const line of readFileSync(journalFile, 'utf8').split('\n')) if (line.includes(`"type":"${type}"`)) return JSON.parse(line);
  return undefined;
}
