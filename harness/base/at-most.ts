// Waiting for something with a bound on the wait.

/**
 * `p`'s value, or undefined once `ms` pass first. The timer is cleared however `p` settles, so it
 * does not keep a process with nothing left to do alive.
 */
export async function atMost<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
