// The names a server run's journal gives the harness's signals and each connection's instance:
// written by the run (process, scenes, relays), read back by the wire checks.

/** Journal names of the harness's own signals to the server of a one-server run. */
export const SERVER_SIGNAL = { notListening: 'server-not-listening', sigterm: 'end-of-run-server' } as const;

/** The journal's fault names for the harness's signals to instance `n` of the server. */
export const instanceSignal = (kind: 'sigterm' | 'kill' | 'end', n: number): string => `${kind}-instance-${n}`;
export const SIGNAL_NAME = /^(sigterm|kill|end)-instance-(\d+)$/;
/** The relay's tag on a connection's `open`: the instance it leads to. */
export const instanceTag = (n: number): string => `instance ${n}`;
export const TAG = /^instance (\d+)$/;
