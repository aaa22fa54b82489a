// The harness stops cleanly when its parent dies (a CI runner killed, a terminal closed without
// SIGHUP reaching us). Node cannot set its own parent-death signal, so this polls: when the
// parent pid changes (we were reparented to init or a subreaper), `onOrphaned` runs — typically
// runCleanups(), which kills the consumers, Toxiproxy, the run namespaces — then the process
// exits. Everything the harness started carries its own parent-death signal (setpriv
// --pdeathsig KILL, see confine.ts and namespace.ts), so even a SIGKILLed harness leaves nothing.

export interface ParentWatch {
  stop(): void;
}

/** Polls process.ppid every `intervalMs` (default 500); on a change calls onOrphaned, then exits with `exitCode` (default 129). */
export function exitWithParent(onOrphaned: () => Promise<void> | void, options: { intervalMs?: number; exitCode?: number } = {}): ParentWatch {
  const parent = process.ppid;
  let fired = false;
  const timer = setInterval(() => {
    if (fired || process.ppid === parent) return;
    fired = true;
    clearInterval(timer);
    process.stderr.write(`chaoslab: parent process ${parent} is gone, cleaning up\n`);
    void (async () => {
      try {
        await onOrphaned();
      } finally {
        process.exit(options.exitCode ?? 129);
      }
    })();
  }, options.intervalMs ?? 500);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
