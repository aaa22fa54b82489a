// The HTTP requests the harness makes to Toxiproxy's API, over node:http. Not fetch: a process's
// first fetch loads and compiles undici (about 50 ms, on every run's path to its first proxy).
// Failures look like fetch's, which the error messages are made from: a network error is an
// Error whose `cause` carries the socket's code (ECONNREFUSED), a timeout is named TimeoutError.

import { request } from 'node:http';

export interface HttpAnswer {
  status: number;
  ok: boolean;
  text: string;
}

/** One request with its own connection (none is kept open to outlive the server); `body` is sent as JSON. */
export function httpRequest(method: string, url: string, options: { body?: unknown; timeoutMs: number }): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(url, {
      method,
      agent: false,
      headers: payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    });
    let settled = false;
    const fail = (cause: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error('request failed', { cause }));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      const error = new Error(`no answer within ${options.timeoutMs} ms`);
      error.name = 'TimeoutError';
      reject(error);
      req.destroy();
    }, options.timeoutMs);
    req.on('error', fail);
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('close', () => {
        if (!response.complete) fail(new Error('the connection closed before the whole answer'));
      });
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const status = response.statusCode ?? 0;
        resolve({ status, ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(payload);
  });
}
