// One TCP listener per stream, for both labs' publishers: it hands each connection to its stream
// and keeps the open sockets, so that closing can cut them off.

import { type Server, type Socket, createServer } from 'node:net';

export interface Listening<S> {
  stream: S;
  host: string;
  port: number;
  server: Server;
  sockets: Set<Socket>;
}

/** Listens on `host:port` (0: any free port) for `stream`; rejects when the port cannot be had. */
export async function listenFor<S extends { accept(socket: Socket): void }>(stream: S, host: string, port: number): Promise<Listening<S>> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    stream.accept(socket);
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
  return { stream, host, port: bound, server, sockets };
}
