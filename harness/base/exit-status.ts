// The CLI's exit statuses: 0 pass, 1 the consumer failed, 2 usage or harness error (2 wins);
// after Ctrl-C or SIGTERM, 128 + the signal's number (130, 143), as shells report it.
export const EXIT = { pass: 0, fail: 1, error: 2 } as const;

/** The exit status after a stop signal (the reports written first, or not: a second signal). */
export const EXIT_SIGNAL = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/** The status of several results: any harness error wins, then any failure (an unfinished run is no pass; a skipped one is no failure). */
export function combinedStatus(statuses: ('pass' | 'fail' | 'error' | 'interrupted' | 'skipped')[]): 'pass' | 'fail' | 'error' {
  if (statuses.includes('error') || statuses.includes('interrupted')) return 'error';
  return statuses.includes('fail') ? 'fail' : 'pass';
}

/** A mistake in how the command was called, found after parsing: printed, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
