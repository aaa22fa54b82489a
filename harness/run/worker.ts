// A sealed run's worker: started by the runner inside the run's network namespace, it runs the
// run's body (publisher in process, Toxiproxy, control, confined consumers; the firewall's port
// for the proxy and its counters, run here in the namespace) and talks to the runner over its
// IPC channel only: the runner is outside the namespace. Everything it writes
// in the run folder is the harness's evidence: readable by root alone. It runs in a process
// group of its own, so a Ctrl-C at the terminal does not reach it: the runner sends `abort`
// instead, and the run stops as an in-process run does (harness/run/execute.ts). While it runs, it
// says it is alive every second: a worker stuck in a call that cannot be interrupted (SQLite
// opening a named pipe a consumer swapped in) falls silent, and the runner kills it.

import { enableCompileCache } from '../base/compile-cache.js';
import type { JournalEntry } from '../record/journal.js';
import { startToxiproxy } from '../toxiproxy/server.js';
import type { Executed, RunRequest } from './execute.js';

export type ToRunner = { type: 'entries'; entries: JournalEntry[] } | { type: 'done'; executed: Executed } | { type: 'alive' };

export type ToWorker = { type: 'run'; request: RunRequest } | { type: 'abort'; reason: string };

// Journal entries go to the runner in batches, one message per BATCH_MS at most (and always
// before any other message, so the runner sees everything in order): one IPC message per entry
// (four per event of a stream) cost this process more CPU than the publisher's own work.
const BATCH_MS = 10;
let pending: JournalEntry[] = [];
let batchTimer: NodeJS.Timeout | undefined;

function flushEntries(): void {
  clearTimeout(batchTimer);
  batchTimer = undefined;
  if (pending.length === 0) return;
  const entries = pending;
  pending = [];
  if (process.connected) process.send?.({ type: 'entries', entries } satisfies ToRunner);
}

function sendEntry(entry: JournalEntry): void {
  pending.push(entry);
  batchTimer ??= setTimeout(flushEntries, BATCH_MS);
}

const stop = new AbortController();

/** How often a running worker tells the runner it is alive (sealed.ts STALL_MS is many times this). */
const ALIVE_MS = 1000;

// A sealed run always starts its own Toxiproxy (an external one cannot serve its namespace): it
// starts while this worker waits for its run, which takes it (execute.ts RunHooks.toxiproxy).
enableCompileCache(); // before the run's modules load, below
const toxiproxy = startToxiproxy({ own: true });
toxiproxy.catch(() => {}); // the run awaits it, and reports its failure as before
// The run's module graph (some 60 ms to load here) loads while Toxiproxy starts, not before:
// imported statically, it held Toxiproxy's start back until it had loaded, and the run then
// waited for Toxiproxy.
const execute = import('./execute.js');

process.umask(0o077);
process.on('message', (message: ToWorker) => {
  if (message.type === 'abort') return stop.abort(message.reason);
  // Unref'd: it never keeps this process alive on its own.
  // Only while connected: after `done` the channel is closed, and a send on it is an unhandled
  // ERR_IPC_CHANNEL_CLOSED that crashes this worker (seen under load, where a tick can still
  // come between the disconnect and the exit).
  setInterval(() => {
    if (process.connected) process.send?.({ type: 'alive' } satisfies ToRunner);
  }, ALIVE_MS).unref();
  void execute
    .then(({ executeRun }) =>
      executeRun(message.request, {
        onJournal: sendEntry,
        signal: stop.signal,
        toxiproxy,
      }),
    )
    .then(
      ({ entries: _entries, ...executed }): Executed => executed,
      (error: unknown): Executed => ({
        status: 'error',
        error: `the sealed run's worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      }),
    )
    .then((executed) => {
      // Disconnect only once the last message is written: the IPC channel's writes are
      // asynchronous, and closing it with a backlog (a long run's journal entries, a large
      // verdict) cancels what is still queued — the runner would see the worker end without
      // `done`.
      if (!process.send) return;
      flushEntries();
      process.send({ type: 'done', executed } satisfies ToRunner, undefined, {}, () => process.disconnect?.());
    });
});
