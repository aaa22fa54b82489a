// Ctrl-C, honestly: the first SIGINT or SIGTERM aborts (start nothing new, stop what runs, write
// every report, then exit 130 or 143); a second one forces the exit at once, still running the
// cleanups of harness/base/cleanup.ts, which kill every process group, Toxiproxy and namespace.
// Commands that can stop gracefully ask for it with `interruptible()`; without it, the first
// signal already forces the exit. The same signal again within SAME_DELIVERY_MS is the first one
// delivered twice, not a second request: timeout(1) sends its signal to its child and then to the
// child's process group, and a loaded machine hands the two over one by one.

import { runCleanups, setInterruptHandler } from './cleanup.js';
import { EXIT_SIGNAL } from './exit-status.js';

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** How soon the same signal again counts as the first one delivered twice (no human presses Ctrl-C twice that fast). */
export const SAME_DELIVERY_MS = 500;

/** The exit status after `signal`: 128 + its number. */
export const exitStatusFor = (signal: NodeJS.Signals): number => EXIT_SIGNAL[signal as keyof typeof EXIT_SIGNAL] ?? 130;

export interface Interruptible {
  /** Aborted on the first SIGINT/SIGTERM; its reason is the signal's name. */
  signal: AbortSignal;
  /** The signal that stopped us, if any. */
  by(): StopSignal | undefined;
  /** Gives the signals back to the default handling (forced exit). */
  dispose(): void;
}

export interface InterruptOptions {
  /** Told once, on the first signal (e.g. to say "stopping" on the console). */
  onInterrupt?(signal: StopSignal): void;
  /** How the forced exit exits (default process.exit); for tests. */
  exit?(code: number): void;
}

/**
 * Turns the first SIGINT/SIGTERM into an abort; a second signal runs the cleanups and exits
 * (a third exits at once: everything started carries a parent-death signal).
 */
export function interruptible(options: InterruptOptions = {}): Interruptible {
  const controller = new AbortController();
  let by: StopSignal | undefined;
  let byAt = 0;
  let forced = 0;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const dispose = setInterruptHandler((signal) => {
    if (!by && (signal === 'SIGINT' || signal === 'SIGTERM')) {
      by = signal;
      byAt = performance.now();
      controller.abort(signal);
      options.onInterrupt?.(signal);
      return;
    }
    if (signal === by && forced === 0 && performance.now() - byAt < SAME_DELIVERY_MS) return;
    const code = exitStatusFor(by ?? signal);
    if (++forced > 1) {
      exit(code);
      return;
    }
    process.stderr.write(`\nchaoslab: ${signal} again: stopping now (the reports of unfinished runs are not written)\n`);
    void runCleanups().finally(() => exit(code));
  });
  return { signal: controller.signal, by: () => by, dispose };
}

/** Calls `fn` once when `signal` aborts (at once if it has); returns the undo, which frees the listener. */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    fn();
    return () => {};
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
