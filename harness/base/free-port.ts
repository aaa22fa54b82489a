// A TCP port of the loopback that was free a moment ago, asked of the OS (listen on port 0): for
// a program the harness starts and tells where to listen. Another process may take it meanwhile;
// the program then fails to listen, which the caller sees.

import { createServer } from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((done, failed) => {
    const server = createServer();
    server.unref();
    server.once('error', failed);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? done(port) : failed(new Error('could not pick a free port'))));
    });
  });
}
