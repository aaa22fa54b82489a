// A read taken while a consumer was stopped at its own `stop` hook that found the store locked
// (SQLITE_BUSY). Inside a BEGIN IMMEDIATE transaction, or after its COMMIT, a stopped writer
// holds no lock that keeps a reader out; only a COMMIT under way (or BEGIN EXCLUSIVE) does. So
// the process went on past its hook before the stop took hold: the common case is a runtime with
// several threads (Go) that sent SIGSTOP to the process and let the calling thread run into its
// COMMIT until the signal landed. Every lab words its unreadable mid-run read with this.

/**
 * How long a read while stopped waits for a lock. The stopped process releases none, so waiting
 * longer only helps a thread or child still finishing; and the harness's event loop (the
 * publisher, the control's stream) is blocked for as long as SQLite waits. At 5 s the control's
 * own read timeout ran out under load and its connection was gone before the harness could see
 * whose it was.
 */
export const STOPPED_READ_TIMEOUT_MS = 250;

/** Whether a read's error is SQLite's "database is locked" (SQLITE_BUSY, or one of its extended codes). */
export const isStoreLocked = (error: string): boolean => /\bSQLITE_BUSY\b|\bSQLITE_BUSY_[A-Z]+\b|database is locked/.test(error);

/**
 * The words for a read while stopped at a hook that found the store locked, or undefined when the
 * error is another one. `error` is the reader's own message, kept at the end as evidence.
 */
export function stoppedLockWords(error: string): string | undefined {
  if (!isStoreLocked(error)) return undefined;
  return `the store was locked for writing (a transaction still open) while the process was stopped at its hook: the process ran past its hook (into its COMMIT), or its transaction keeps readers out (BEGIN EXCLUSIVE, where the contract says BEGIN IMMEDIATE). A stop must halt the process before the calling thread does anything more: with several threads, send SIGSTOP to the calling thread (tgkill), not to the process (contract, fault hooks: stop) [${error}]`;
}
