// The harness stops cleanly when its parent dies (a CI runner killed, a terminal closed without
// SIGHUP reaching us). Node cannot set its own parent-death signal, so this polls: when the
// parent pid changes (we were reparented to init or a subreaper), `onOrphaned` runs — typically
// runCleanups(), which kills the consumers, Toxiproxy, the run namespaces — then the process
// exits. Everything the harness started carries its own parent-death signal (setpriv
// --pdeathsig KILL, see confine.ts and namespace.ts, and the helpers below for Toxiproxy and the
// control), so even a SIGKILLed harness leaves nothing.

import { chmodSync, writeFileSync } from 'node:fs';
import { requireTool } from './tools.js';

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

/**
 * A shell command line that runs `command` with a parent-death signal: SIGKILLed when the
 * process that spawns it (the harness, or the run's worker) dies, even by SIGKILL. For the
 * control consumer handed to the supervisor: `bash -c` execs setpriv, setpriv sets the signal
 * and execs bash, which execs a lone simple command, so the pid stays the same throughout.
 */
export function dieWithParentCommand(command: string): string {
  return `${requireTool('setpriv')} --pdeathsig KILL -- ${requireTool('bash')} -c ${shellQuote(command)}`;
}

/**
 * Writes an executable script at `path` that execs `target` with its arguments under a
 * parent-death signal, and returns `path`. For programs whose starter takes a binary path and
 * no argv prefix, e.g. startToxiproxy({ binary: writeDieWithParentWrapper(locateToxiproxyServer(), …) }).
 */
export function writeDieWithParentWrapper(target: string, path: string): string {
  writeFileSync(path, `#!/bin/sh\nexec ${shellQuote(requireTool('setpriv'))} --pdeathsig KILL -- ${shellQuote(target)} "$@"\n`, { mode: 0o700 });
  chmodSync(path, 0o700);
  return path;
}

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
