// Whose is a connection the publisher accepted, in an unsealed run? Such runs share the machine's
// loopback with every other process of the user: another run's Toxiproxy or harness (an API
// client whose server died, and whose port this run's publisher now listens on), a stranger. A
// connection is tied to this run when the process at its far end is this run's Toxiproxy (the
// consumer's traffic) or a process this run started, of the stream's own role (the control on
// its stream; the consumer around the proxy, a finding). Anything else says nothing about the
// consumer: the run cannot be judged, and says why. Nothing holding the far end any more counts
// the same: the harness cannot tell whose it was.

import type { Role } from '../record/journal.js';
import type { ProcessRunner } from '../processes/processes.js';
import { findPeerProcess, type PeerProcess } from '../sandbox/peer.js';
import type { SocketEnds } from '../../publisher/transcript.js';
import type { ProcessRef } from '../findings/verdict.js';
import type { Attribution } from '../record/wire-journal.js';

/** The far end's process in words: "pid 4242 (node /x/cli.js run ack-crash)". */
export const describePeer = (peer: PeerProcess): string => `pid ${peer.pid} (${peer.cmdline.join(' ').slice(0, 160) || peer.comm})`;

export function attributor(
  proxyPid: number | undefined,
  processes: Pick<ProcessRunner, 'ownerOf'>,
  streamRole: (stream: string) => Role | undefined,
  cannotJudge: (reason: string) => void,
  find: typeof findPeerProcess = findPeerProcess,
): (ends: SocketEnds, stream: string, guess: ProcessRef | undefined) => Attribution {
  return (ends, stream, guess) => {
    const role = guess?.role ?? streamRole(stream);
    const where = `the publisher's ${role ?? stream} port ${ends.localPort}`;
    const found = find(ends, { candidates: proxyPid === undefined ? [] : [proxyPid] });
    if (!found) {
      cannotJudge(
        `a connection from ${ends.remoteAddress}:${ends.remotePort} reached ${where}, and no process held its other end any more: the harness cannot tell whose it was, so the run cannot be judged`,
      );
      return { peer: { via: 'unknown' }, owner: undefined };
    }
    const peer = { pid: found.pid, comm: found.comm };
    // This run's Toxiproxy: the consumer's traffic (the lab knows which process runs now).
    if (proxyPid !== undefined && found.pids.includes(proxyPid)) {
      if (role === 'consumer') return { peer: { ...peer, via: 'proxy' }, owner: guess };
      cannotJudge(
        `this run's Toxiproxy (pid ${proxyPid}) connected to ${where}, where only the ${role ?? 'stream'}'s own process connects: its proxy was changed, so the run cannot be judged`,
      );
      return { peer: { ...peer, via: 'stray' }, owner: undefined };
    }
    const own = processes.ownerOf(found.pids);
    if (own && own.role === role) return { peer: { ...peer, via: 'direct' }, owner: own };
    const who =
      own !== undefined
        ? `this run's ${own.role === 'consumer' ? `consumer incarnation ${own.incarnation}` : 'control'}`
        : found.comm === 'toxiproxy-serve' || found.cmdline[0]?.endsWith('toxiproxy-server')
          ? proxyPid === undefined
            ? "a toxiproxy-server, but this run's own server is one whose process the harness could not see (TOXIPROXY_URL: docs/sandbox.md)"
            : 'a toxiproxy-server of another run'
          : 'not a process of this run';
    cannotJudge(`a connection from ${describePeer(found)}, ${who}, reached ${where}: the run cannot be judged`);
    return { peer: { ...peer, via: 'stray' }, owner: undefined };
  };
}
