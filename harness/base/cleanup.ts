// One place that knows what must be undone when the harness ends — normally, on an error,
// or on Ctrl-C/SIGTERM — so no proxy, server or consumer process outlives a run.
// Cleanups run last-registered first (like a stack of `finally` blocks). A signal runs them and
// exits, unless a command stops gracefully (harness/base/interrupt.ts) and takes the signal itself.

type Cleanup = () => Promise<void> | void;

const cleanups = new Set<{ name: string; fn: Cleanup }>();
let signalsInstalled = false;
let running: Promise<void> | undefined;
let interruptHandler: ((signal: NodeJS.Signals) => void) | undefined;

/** Hands SIGINT/SIGTERM/SIGHUP to `handler` instead of the default (cleanups, then exit); returns the undo. */
export function setInterruptHandler(handler: (signal: NodeJS.Signals) => void): () => void {
  installSignalHandlers();
  interruptHandler = handler;
  return () => {
    if (interruptHandler === handler) interruptHandler = undefined;
  };
}

/** Registers a cleanup; the returned function unregisters it (call it once the resource is gone). */
export function onCleanup(name: string, fn: Cleanup): () => void {
  installSignalHandlers();
  const entry = { name, fn };
  cleanups.add(entry);
  return () => cleanups.delete(entry);
}

/** Runs every registered cleanup once, newest first; errors are reported, never thrown. */
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    for (const entry of [...cleanups].reverse()) {
      cleanups.delete(entry);
      try {
        await entry.fn();
      } catch (error) {
        process.stderr.write(`chaoslab: cleanup "${entry.name}" failed: ${String(error)}\n`);
      }
    }
  })().finally(() => {
    running = undefined;
  });
  return running;
}

function installSignalHandlers(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));
}

/** What a SIGINT/SIGTERM/SIGHUP does: the interrupt handler's business if there is one, else cleanups and exit. */
export function onSignal(signal: NodeJS.Signals): void {
  if (interruptHandler) {
    interruptHandler(signal);
    return;
  }
  process.stderr.write(`\nchaoslab: ${signal} received, cleaning up\n`);
  void runCleanups().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
}
