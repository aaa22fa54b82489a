// Waiting for something with a bound on the wait.

/** Waits for `p` at most `ms`; the timer is cleared when `p` wins, so it does not keep a process with nothing left to do alive. */
export async function atMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
