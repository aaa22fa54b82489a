// Locates, starts and stops the real Toxiproxy server (never a stand-in).
//
// Which server is used, first match wins:
//   1. options.url, else env TOXIPROXY_URL: a server someone else runs (owned=false, stop() is a no-op);
//   2. a binary we start ourselves (owned=true): options.binary, else env TOXIPROXY_SERVER,
//      else <project root>/.tools/bin/toxiproxy-server (made by scripts/install-toxiproxy.sh),
//      else `toxiproxy-server` on PATH.
//
// An owned server listens on 127.0.0.1 on a free port. Toxiproxy does NOT exit when its API port
// cannot be bound (it logs "Server finished with error" and keeps running), so a failed bind is
// detected from its log, the process is killed and another port is tried.

import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { freePort } from '../base/free-port.js';
import { delimiter, join, resolve } from 'node:path';
import { dieWithHarness } from '../base/orphans.js';
import { holdsSocket, listenerInode, loopbackListenerPids } from '../sandbox/peer.js';
import { readStat } from '../sandbox/proc.js';
import { onCleanup } from '../base/cleanup.js';
import { toolsBinDir } from '../base/paths.js';
import { httpRequest } from './http.js';

export interface ToxiproxyServer {
  /** Base URL of the API, without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** What the server's GET /version reports, e.g. `2.12.0`. */
  version: string;
  /** true when this process started the server (and stop() ends it). */
  owned: boolean;
  /**
   * Process id of the server: an owned server's, or an external one's on this machine's loopback
   * (the process holding its API port when it was first asked), which carries the consumer's traffic.
   */
  pid?: number;
  /** The last lines the server logged (owned servers only; empty otherwise). */
  logTail(): string[];
  /**
   * Why the server answering at `url` may not be this one any more (its API port can be reused by
   * another process once it is gone), or undefined when it still is. Cheap: the process has not
   * exited. `thorough` also checks that the pid holds the API port's listening socket (a read of
   * /proc/net/tcp, 5 ms here: the kernel walks its whole socket table; the IPv4 server's socket is
   * found there, so /proc/net/tcp6 is not read as well, which took another 5 ms). External
   * servers are never checked (`identity` says so).
   */
  identityProblem(thorough: boolean): string | undefined;
  /** How the server's identity is known, in words, for the journal. */
  identity: string;
  /** Ends an owned server (SIGTERM, SIGKILL after a grace period) and waits for its exit; idempotent. No-op when not owned. */
  stop(): Promise<void>;
}

export interface StartToxiproxyOptions {
  /** Use the server already running at this URL (takes precedence over everything else). */
  url?: string;
  /** Start a server of our own even when TOXIPROXY_URL is set (a sealed run: an external one cannot serve its namespace). */
  own?: boolean;
  /** Path of the toxiproxy-server binary to start. */
  binary?: string;
  /** Receives every line the server logs. */
  log?: (line: string) => void;
  /**
   * The server's LOG_LEVEL (default: env TOXIPROXY_LOG_LEVEL, else `info`; Toxiproxy's own default
   * logs every request and toxic operation at debug/trace). Not above `info`: start-up needs its info lines.
   */
  logLevel?: 'trace' | 'debug' | 'info';
  /** How long to wait for GET /version to answer (default 10 s). */
  readyTimeoutMs?: number;
}

const BINARY_NAME = 'toxiproxy-server';
const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 3_000;
const PORT_ATTEMPTS = 4;
const LOG_TAIL_LINES = 200;
const LOG_LINE_MAX = 2_000;

const HOW_TO_GET_ONE = [
  'Run `make setup` (or scripts/install-toxiproxy.sh) to build .tools/bin/toxiproxy-server, or:',
  '  - download the release binary from https://github.com/Shopify/toxiproxy/releases and put it on PATH',
  '    as toxiproxy-server (or point TOXIPROXY_SERVER at it);',
  '  - install it with a package manager, e.g. `brew install toxiproxy`;',
  '  - run the container (docker run -d --network host ghcr.io/shopify/toxiproxy) and set',
  '    TOXIPROXY_URL=http://127.0.0.1:8474;',
  '  - install Go >= 1.22 and run scripts/install-toxiproxy.sh.',
].join('\n');

/**
 * The URL of a server the user runs: `given` (`--toxiproxy-url`), else TOXIPROXY_URL when it is
 * set and not blank; undefined when a run starts its own. The sealing decision asks the same.
 */
export function externalToxiproxyUrl(given?: string): string | undefined {
  return given ?? nonEmpty(process.env.TOXIPROXY_URL);
}

/** Starts (or connects to) the real Toxiproxy server; see the module comment for the order. */
export async function startToxiproxy(options: StartToxiproxyOptions = {}): Promise<ToxiproxyServer> {
  const external = options.own ? options.url : externalToxiproxyUrl(options.url);
  if (external !== undefined) return useRunningServer(external, options.url !== undefined ? 'url option' : 'TOXIPROXY_URL');

  const logLevel = options.logLevel ?? nonEmpty(process.env.TOXIPROXY_LOG_LEVEL) ?? 'info';
  if (!['trace', 'debug', 'info'].includes(logLevel)) {
    throw new Error(`toxiproxy log level must be trace, debug or info, not ${JSON.stringify(logLevel)}`);
  }
  const binary = locateToxiproxyServer(options.binary);
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    const result = await launch(binary, port, logLevel, options);
    if (result.ok) return result.server;
    lastError = result.error;
    if (!result.retry) break;
  }
  throw lastError ?? new Error('toxiproxy-server did not start');
}

/**
 * Path of the toxiproxy-server binary that startToxiproxy would run (ignoring TOXIPROXY_URL):
 * `explicit`, else env TOXIPROXY_SERVER, else .tools/bin/toxiproxy-server under the project root,
 * else toxiproxy-server on PATH. Throws with installation advice when there is none.
 */
export function locateToxiproxyServer(explicit?: string): string {
  const given = explicit ?? nonEmpty(process.env.TOXIPROXY_SERVER);
  if (given !== undefined) {
    const from = explicit !== undefined ? 'binary option' : 'TOXIPROXY_SERVER';
    const path = resolve(given);
    if (!isExecutableFile(path)) {
      throw new Error(`toxiproxy-server given by ${from} is not an executable file: ${path}\n${HOW_TO_GET_ONE}`);
    }
    return path;
  }
  const local = join(toolsBinDir, BINARY_NAME);
  if (isExecutableFile(local)) return local;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, BINARY_NAME);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new Error(`no toxiproxy-server found (looked at TOXIPROXY_URL, TOXIPROXY_SERVER, ${local} and PATH).\n${HOW_TO_GET_ONE}`);
}

// ---------------------------------------------------------------------------------------------

async function useRunningServer(rawUrl: string, from: string): Promise<ToxiproxyServer> {
  const url = normaliseUrl(rawUrl, from);
  let version: string;
  try {
    version = await fetchVersion(url, 5_000);
  } catch (error) {
    throw new Error(`Toxiproxy at ${url} (from ${from}) does not answer GET /version: ${describe(error)}`);
  }
  // Its process carries the consumer's traffic: an unsealed run tells that traffic from a
  // stranger's by it (run/attribute.ts). Found once, by the API port it listens on.
  const port = loopbackPort(url);
  const pid = port === undefined ? undefined : loopbackListenerPids(port)[0];
  const found =
    pid !== undefined
      ? `; its process is pid ${pid}, which listened on its API port when the run started`
      : "; its process could not be found on this machine (not on the loopback, or not ours to read): connections through it cannot be told from a stranger's, so an unsealed run will not be judged";
  return {
    url,
    version,
    owned: false,
    pid,
    logTail: () => [],
    stop: async () => {},
    identityProblem: () => undefined,
    identity: `not checked: a server run by the user (${from}); whatever answers at ${url} is taken for it${found}`,
  };
}

/** The port of a URL on this machine's loopback (127.0.0.1, localhost, [::1]), else undefined. */
function loopbackPort(url: string): number | undefined {
  const { hostname, port, protocol } = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(hostname)) return undefined;
  return Number(port || (protocol === 'https:' ? 443 : 80));
}

type LaunchResult = { ok: true; server: ToxiproxyServer } | { ok: false; retry: boolean; error: Error };

async function launch(binary: string, port: number, logLevel: string, options: StartToxiproxyOptions): Promise<LaunchResult> {
  const url = `http://127.0.0.1:${port}`;
  const log = serverLog(options.log);

  // The server dies with the harness even if the harness is SIGKILLed.
  const [file, ...args] = dieWithHarness([binary, '-host', '127.0.0.1', '-port', String(port)]);
  const child = spawn(file!, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C at the terminal reaches the harness, which stops the run and
    // then the server, not the server under a running run. It still dies with the harness (setpriv).
    detached: true,
    env: { ...process.env, LOG_LEVEL: logLevel },
  });
  for (const stream of [child.stdout, child.stderr]) if (stream) readLines(stream, log.record);
  const exit = watchExit(child, log.wake);
  const stop = stopperOf(child, exit, url);

  const fail = async (retry: boolean, reason: string): Promise<LaunchResult> => {
    await stop();
    const logText = log.tail.length > 0 ? `\n--- toxiproxy-server log (last lines) ---\n${log.tail.slice(-30).join('\n')}` : '';
    return { ok: false, retry, error: new Error(`toxiproxy-server (${binary}) on ${url}: ${reason}${logText}`) };
  };

  const timeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let lastProbeError = 'not probed yet';
  let confirmations = 0;
  /** The listening socket it was seen holding: later checks ask whether it still holds that one (not where a wrapper forks the server). */
  let listener: number | undefined;
  // Once the server says it is starting its HTTP server, it answers within a few milliseconds.
  let quickProbes = 25;
  for (;;) {
    if (log.bindFailed) return fail(true, 'could not bind its API port');
    if (exit.info !== undefined) return fail(false, `exited before answering GET /version (${exit.info})`);
    if (Date.now() > deadline) {
      return fail(false, `GET /version did not answer within ${timeoutMs} ms (last: ${lastProbeError})`);
    }
    try {
      const version = await fetchVersion(url, 1_000);
      // Only trust the answer once our process has reached its listen call, and it is ours: a
      // different process that grabbed the port would also answer. Ours at once when our process
      // holds the listening socket; otherwise (no /proc, a wrapper that forks the server) when a
      // later probe still sees no bind error.
      const started = log.httpStarted && !log.bindFailed;
      listener = started && child.pid !== undefined ? listenerInode(child.pid, '127.0.0.1', port) : undefined;
      if (listener !== undefined) confirmations = 2;
      else if (started) confirmations++;
      if (confirmations >= 2) {
        const server = { url, port, version, pid: child.pid, tail: log.tail, stop, exit, listener };
        return { ok: true, server: ownedServer(server) };
      }
    } catch (error) {
      lastProbeError = describe(error);
      confirmations = 0;
    }
    if (confirmations > 0) await sleep(30);
    else await log.nextEvent(log.httpStarted && quickProbes-- > 0 ? 2 : 50);
  }
}

/** The server's log: a bounded tail, what it says about its start, and a wake-up for the readiness wait. */
interface ServerLog {
  tail: string[];
  bindFailed: boolean;
  httpStarted: boolean;
  record(line: string): void;
  /** Resolves after `ms`, or sooner on the next log line or the exit (`wake`). */
  nextEvent(ms: number): Promise<void>;
  wake(): void;
}

function serverLog(sink: ((line: string) => void) | undefined): ServerLog {
  // The wait for readiness wakes on each log line and on the exit, not only on its timer.
  let wakeUp: (() => void) | undefined;
  const log: ServerLog = {
    tail: [],
    bindFailed: false,
    httpStarted: false,
    nextEvent: (ms) =>
      new Promise((done) => {
        const timer = setTimeout(done, ms);
        wakeUp = () => {
          clearTimeout(timer);
          done();
        };
      }),
    wake: () => {
      const w = wakeUp;
      wakeUp = undefined;
      w?.();
    },
    record: (line) => {
      if (line === '') return;
      queueMicrotask(log.wake);
      const bounded = line.length > LOG_LINE_MAX ? `${line.slice(0, LOG_LINE_MAX)}…` : line;
      log.tail.push(bounded);
      if (log.tail.length > LOG_TAIL_LINES) log.tail.shift();
      if (line.includes('Starting Toxiproxy HTTP server')) log.httpStarted = true;
      if (line.includes('Server finished with error') || line.includes('address already in use')) log.bindFailed = true;
      try {
        sink?.(bounded);
      } catch {
        // a failing log sink must not break the server
      }
    },
  };
  return log;
}

/** Feeds a stream's lines to `record`, an overlong unfinished line in pieces. */
function readLines(stream: NodeJS.ReadableStream, record: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      record(pending.slice(0, newline).replace(/\r$/, ''));
      pending = pending.slice(newline + 1);
    }
    if (pending.length > LOG_LINE_MAX * 4) {
      record(pending);
      pending = '';
    }
  });
  stream.on('end', () => {
    if (pending !== '') record(pending);
    pending = '';
  });
}

/** How the process ended (undefined while it runs), and a promise that settles then. */
interface ExitWatch {
  info: string | undefined;
  exited: Promise<void>;
}

function watchExit(child: ChildProcess, wake: () => void): ExitWatch {
  const watch: ExitWatch = { info: undefined, exited: Promise.resolve() };
  // Settles once the process is gone and its output read ('close'), or it could not start ('error').
  watch.exited = new Promise<void>((done) => {
    child.once('error', (error) => {
      watch.info ??= describe(error);
      done();
      wake();
    });
    child.once('close', (code, signal) => {
      watch.info ??= `exit code ${String(code ?? 'none')}, signal ${String(signal ?? 'none')}`;
      done();
      wake();
    });
  });
  return watch;
}

/** Stops the server once (SIGTERM, SIGKILL after the grace), also when the harness cleans up. */
function stopperOf(child: ChildProcess, exit: ExitWatch, url: string): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      unregister();
      if (exit.info !== undefined) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), STOP_GRACE_MS);
      });
      const outcome = await Promise.race([exit.exited.then(() => 'exited' as const), graceOver]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        child.kill('SIGKILL');
        await exit.exited;
      }
    })();
    return stopping;
  };
  const unregister = onCleanup(`toxiproxy-server pid ${String(child.pid ?? '?')} on ${url}`, stop);
  return stop;
}

/** The server this run started, once it answered and was confirmed as ours. */
function ownedServer(s: {
  url: string;
  port: number;
  version: string;
  pid: number | undefined;
  tail: readonly string[];
  stop: () => Promise<void>;
  exit: ExitWatch;
  listener: number | undefined;
}): ToxiproxyServer {
  const { url, port, pid, exit, listener } = s;
  const identityProblem = (thorough: boolean): string | undefined => {
    const who = `toxiproxy-server pid ${String(pid ?? '?')} (${url}), the one this run started,`;
    if (exit.info !== undefined || pid === undefined) return `${who} is gone (${exit.info ?? 'no pid'}): its port may be another process's now`;
    const state = readStat(pid)?.state;
    if (state === undefined || state === 'Z' || state === 'X') return `${who} is gone: its port may be another process's now`;
    // The socket it listened with at start, still its own: while it holds it, no other process can
    // listen on that port (one that shut it down would free the port; Toxiproxy never does).
    if (thorough && listener !== undefined && !holdsSocket(pid, listener)) return `${who} no longer holds its API port ${port}: another process answers there`;
    return undefined;
  };
  return {
    url,
    version: s.version,
    owned: true,
    pid,
    logTail: () => [...s.tail],
    stop: s.stop,
    identityProblem,
    identity:
      listener !== undefined
        ? `checked: pid ${String(pid)} holds the listening socket of port ${port} (at start, and the same socket before each proxy creation and fault; alive before every call)`
        : `partly checked: pid ${String(pid)} is alive before every call (its listening socket could not be seen in /proc)`,
  };
}

/** GET /version: 2.12 answers `{"version": "2.12.0"}`, older servers plain text. */
async function fetchVersion(url: string, timeoutMs: number): Promise<string> {
  const response = await httpRequest('GET', `${url}/version`, { timeoutMs });
  const text = response.text.trim();
  if (!response.ok) throw new Error(`HTTP ${response.status} ${text}`);
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { version?: unknown }).version === 'string') {
      return (parsed as { version: string }).version;
    }
  } catch {
    // plain text version
  }
  return text;
}

function normaliseUrl(raw: string, from: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new Error(`invalid Toxiproxy URL from ${from}: ${JSON.stringify(raw)}`);
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return `${error.message}: ${typeof code === 'string' ? `${code} ` : ''}${cause.message}`;
    }
    return error.message;
  }
  return String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
