// The CLI's exit statuses: 0 pass, 1 the consumer failed, 2 usage or harness error (2 wins).
export const EXIT = { pass: 0, fail: 1, error: 2 } as const;

/** The status of several results: any harness error wins, then any failure. */
export function combinedStatus(statuses: ('pass' | 'fail' | 'error')[]): 'pass' | 'fail' | 'error' {
  if (statuses.includes('error')) return 'error';
  return statuses.includes('fail') ? 'fail' : 'pass';
}

/** A mistake in how the command was called, found after parsing: printed, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
