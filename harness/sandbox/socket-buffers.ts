// Small TCP buffers for one sealed run. Loopback sockets grow to megabytes (tcp_wmem's ceiling is
// 4 MiB, tcp_rmem's 6 MiB or more), so a publisher and Toxiproxy can park thousands of frames
// in the kernel before a slow reader pushes back. `net.ipv4.tcp_rmem` and `tcp_wmem` belong to a
// network namespace (Linux 4.15 and later), so the sealed run's worker, which runs inside its
// own, sets them there: every socket the run opens afterwards (publisher, Toxiproxy, consumers)
// gets this size, and nothing outside the run changes.

import { readFileSync, writeFileSync } from 'node:fs';

const SYSCTLS = ['/proc/sys/net/ipv4/tcp_rmem', '/proc/sys/net/ipv4/tcp_wmem'] as const;

/** Fixes min, default and max of both buffers at `bytes`; throws, naming the file, when the kernel refuses. */
export function fixSocketBuffers(bytes: number, files: readonly string[] = SYSCTLS): void {
  const value = `${bytes} ${bytes} ${bytes}`;
  for (const file of files) {
    try {
      writeFileSync(file, `${value}\n`);
    } catch (error) {
      throw new Error(`socket_buffer_bytes: could not set ${file} to "${value}": ${(error as Error).message}`);
    }
    const now = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    if (now.some((n) => n !== bytes)) throw new Error(`socket_buffer_bytes: ${file} reads "${now.join(' ')}" after writing "${value}"`);
  }
}
