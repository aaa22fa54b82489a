// One place that knows what must be undone when the harness ends — normally, on an error,
// or on Ctrl-C/SIGTERM — so no proxy, server or consumer process outlives a run.
// Cleanups run last-registered first (like a stack of `finally` blocks).

type Cleanup = () => Promise<void> | void;

const cleanups = new Set<{ name: string; fn: Cleanup }>();
let signalsInstalled = false;
let running: Promise<void> | undefined;

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
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nchaoslab: ${signal} received, cleaning up\n`);
      void runCleanups().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}
