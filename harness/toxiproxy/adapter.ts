// The one place that talks to the Toxiproxy API, over toxiproxy-node-client v4.
//
// What this hides about the client (v4.1.0, CommonJS; its named exports import fine under NodeNext):
//  - its errors carry no status and drop the server's body ("Request failed with status code 404"):
//    the client's public `api` transport is replaced by one that keeps both, and every call is
//    wrapped so a ToxiproxyApiError names the operation, the proxy/toxic, the HTTP status and the
//    server's message ({"error":"proxy not found","status":404});
//  - it cannot list toxics: GET /proxies/<name>/toxics is read directly (the server has it);
//  - it updates with POST plus a full body (deprecated by the server and easy to get wrong):
//    enable/disable is PATCH {"enabled": ...};
//  - GET /version answers JSON in 2.12 (`{"version": "2.12.0"}`) but the client returns raw text.
// Names are restricted to [A-Za-z0-9._-] because the client puts them into URLs unencoded.

import { Proxy as ClientProxy, Toxiproxy, ToxiproxyError } from 'toxiproxy-node-client';
import type { ToxicType } from 'toxiproxy-node-client';
import { onCleanup } from '../base/cleanup.js';
import { type HttpAnswer, httpRequest } from './http.js';

export type ToxicStream = 'upstream' | 'downstream';
export type { ToxicType };

export interface HostPort {
  host: string;
  port: number;
}

export interface ToxicSpec {
  /** Unique per proxy. */
  name: string;
  /** latency, bandwidth, slow_close, timeout, reset_peer, slicer, limit_data. */
  type: ToxicType;
  /** upstream = client → upstream server, downstream = upstream server → client. */
  stream: ToxicStream;
  /** Fraction (0..1) of connections affected, decided per connection; default 1. */
  toxicity?: number;
  /** Type-specific attributes, e.g. { latency: 100, jitter: 0 } or { bytes: 10 }. */
  attributes: Record<string, number>;
}

/** A toxic as the server reports it (attributes include the server's defaults, e.g. jitter: 0). */
export interface ToxicInfo {
  name: string;
  type: ToxicType;
  stream: ToxicStream;
  toxicity: number;
  attributes: Record<string, number>;
}

export interface ProxyInfo {
  name: string;
  listen: HostPort;
  upstream: string;
  enabled: boolean;
  toxics: ToxicInfo[];
}

/** An error from the Toxiproxy API or from reaching it; the message says what, where and why. */
export class ToxiproxyApiError extends Error {
  override readonly name = 'ToxiproxyApiError';
  constructor(
    message: string,
    readonly operation: string,
    readonly details: {
      proxy?: string;
      toxic?: string;
      /** HTTP status, when the server answered. */
      status?: number;
      /** The server's `error` text, when it sent one. */
      serverMessage?: string;
      method?: string;
      url?: string;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get serverMessage(): string | undefined {
    return this.details.serverMessage;
  }
}

/** The server at the adapter's URL is not the one this run started: nothing was sent. */
export class ToxiproxyIdentityError extends ToxiproxyApiError {
  constructor(message: string, operation: string, ids: { proxy?: string; toxic?: string }) {
    super(message, operation, ids);
    Object.defineProperty(this, 'name', { value: 'ToxiproxyIdentityError' });
  }
}

export interface ProxyHandle {
  readonly name: string;
  /** Where clients connect: 127.0.0.1 and the port the server actually bound. */
  readonly listen: HostPort;
  readonly upstream: HostPort;
  /** Adds a toxic; affects open connections as well as new ones. Returns the server's view. */
  addToxic(spec: ToxicSpec): Promise<ToxicInfo>;
  removeToxic(name: string): Promise<void>;
  /** The toxics currently on the proxy, as the server reports them. */
  toxics(): Promise<ToxicInfo[]>;
  /** Disabling closes the listener and every open connection; enabling listens again on the same port. */
  setEnabled(enabled: boolean): Promise<void>;
  /** The proxy as the server reports it. */
  info(): Promise<ProxyInfo>;
  /** Deletes the proxy (closing its connections) and unregisters its cleanup; idempotent, "not found" counts as removed. */
  remove(): Promise<void>;
}

/**
 * Every API call's bound. A local server answers in milliseconds; a hung or impostor one must not
 * hold a run (docs/sandbox.md, Limits).
 */
export const REQUEST_TIMEOUT_MS = 5_000;
/** Calls that change what the consumer's traffic meets: the server's identity is checked in full first. */
const THOROUGH = new Set(['create proxy', 'add toxic', 'enable proxy', 'disable proxy']);
const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

export class ToxiproxyAdapter {
  readonly url: string;
  private readonly client: Toxiproxy;
  private readonly http: StatusHttpClient;

  /**
   * `identityProblem` (an owned server's): why the server at `url` may not be the one this run
   * started, asked before every call; a call to an impostor is never made (ToxiproxyIdentityError).
   */
  constructor(
    url: string,
    private readonly identityProblem?: (thorough: boolean) => string | undefined,
  ) {
    this.url = url.replace(/\/+$/, '');
    this.client = new Toxiproxy(this.url);
    this.http = new StatusHttpClient();
    // Public, mutable field of the client; Proxy/Toxic objects created from now on use it too.
    this.client.api = this.http as unknown as Toxiproxy['api'];
  }

  /** The server's version string, e.g. `2.12.0`. */
  async version(): Promise<string> {
    const text = (await this.call('read version', {}, () => this.client.getVersion())).trim();
    try {
      const parsed = JSON.parse(text) as { version?: unknown };
      if (typeof parsed.version === 'string') return parsed.version;
    } catch {
      // older servers answer plain text
    }
    return text;
  }

  /**
   * Creates an enabled proxy listening on 127.0.0.1 at an ephemeral port chosen by the server,
   * and registers a cleanup that deletes it (the handle's remove() unregisters it).
   */
  async createProxy(name: string, upstream: HostPort): Promise<ProxyHandle> {
    checkName('proxy', name);
    const upstreamText = joinHostPort(upstream);
    const created = await this.call('create proxy', { proxy: name }, () =>
      this.client.createProxy({ name, listen: '127.0.0.1:0', upstream: upstreamText, enabled: true }),
    );
    let listen = parseHostPort(created.listen);
    if (listen === undefined || listen.port === 0) {
      // 2.12 answers with the bound address; read it back in case a server does not.
      const current = await this.call('read proxy', { proxy: name }, () => this.client.get(name));
      listen = parseHostPort(current.listen);
    }
    if (listen === undefined || listen.port === 0) {
      await this.deleteProxy(name).catch(() => undefined);
      throw new ToxiproxyApiError(
        `toxiproxy: create proxy "${name}": server reported no usable listen address (${JSON.stringify(created.listen)})`,
        'create proxy',
        { proxy: name },
      );
    }
    return new Handle(this, name, listen, { ...upstream }, (fn) => onCleanup(`toxiproxy proxy ${name}`, fn));
  }

  /** All proxies on the server. */
  async listProxies(): Promise<ProxyInfo[]> {
    const all = await this.call('list proxies', {}, () => this.http.get<Record<string, RawProxy>>(`${this.url}/proxies`));
    return Object.values(all.data ?? {}).map(toProxyInfo);
  }

  /** Deletes every proxy whose name starts with `prefix` (e.g. leftovers of a crashed run); returns their names. */
  async removeAllWithPrefix(prefix: string): Promise<string[]> {
    if (prefix === '') throw new Error('removeAllWithPrefix: refusing an empty prefix (it would delete every proxy)');
    const names = (await this.listProxies()).map((p) => p.name).filter((n) => n.startsWith(prefix));
    for (const name of names) await this.deleteProxy(name);
    return names.sort();
  }

  // --- used by Handle -------------------------------------------------------------------------

  /** @internal DELETE /proxies/<name>; "not found" counts as done. */
  async deleteProxy(name: string): Promise<void> {
    try {
      await this.call('remove proxy', { proxy: name }, () => this.clientProxy(name).remove());
    } catch (error) {
      if (error instanceof ToxiproxyApiError && error.status === 404) return;
      throw error;
    }
  }

  /** @internal */
  async proxyInfo(name: string): Promise<ProxyInfo> {
    const raw = await this.call('read proxy', { proxy: name }, () => this.http.get<RawProxy>(this.proxyUrl(name)));
    return toProxyInfo(raw.data);
  }

  /** @internal */
  async addToxic(proxy: string, spec: ToxicSpec): Promise<ToxicInfo> {
    checkName('toxic', spec.name);
    const ids = { proxy, toxic: spec.name };
    const body = {
      name: spec.name,
      type: spec.type,
      stream: spec.stream,
      toxicity: spec.toxicity ?? 1,
      attributes: spec.attributes,
    };
    const toxic = await this.call('add toxic', ids, () => this.clientProxy(proxy).addToxic(body));
    return toToxicInfo(toxic.toJson());
  }

  /** @internal */
  async removeToxic(proxy: string, toxic: string): Promise<void> {
    await this.call('remove toxic', { proxy, toxic }, () => this.http.delete(`${this.proxyUrl(proxy)}/toxics/${toxic}`));
  }

  /** @internal */
  async listToxics(proxy: string): Promise<ToxicInfo[]> {
    const raw = await this.call('list toxics', { proxy }, () => this.http.get<RawToxic[]>(`${this.proxyUrl(proxy)}/toxics`));
    return (raw.data ?? []).map(toToxicInfo);
  }

  /** @internal */
  async setEnabled(proxy: string, enabled: boolean): Promise<void> {
    await this.call(enabled ? 'enable proxy' : 'disable proxy', { proxy }, () => this.http.request('PATCH', this.proxyUrl(proxy), { enabled }));
  }

  private proxyUrl(name: string): string {
    return `${this.url}/proxies/${name}`;
  }

  /** The client's Proxy object for a name, without the round trip of client.get() (it only needs the name for URLs). */
  private clientProxy(name: string): ClientProxy {
    return new ClientProxy(this.client, { name, listen: '', upstream: '', enabled: true, toxics: [] });
  }

  private async call<T>(operation: string, ids: { proxy?: string; toxic?: string }, fn: () => Promise<T>): Promise<T> {
    const problem = this.identityProblem?.(THOROUGH.has(operation));
    if (problem !== undefined) throw new ToxiproxyIdentityError(`toxiproxy: ${operation} not sent: ${problem}`, operation, ids);
    try {
      return await fn();
    } catch (error) {
      throw wrapError(operation, ids, error, this.url);
    }
  }
}

class Handle implements ProxyHandle {
  private unregister: (() => void) | undefined;
  private removed: Promise<void> | undefined;

  constructor(
    private readonly adapter: ToxiproxyAdapter,
    readonly name: string,
    readonly listen: HostPort,
    readonly upstream: HostPort,
    register: (fn: () => Promise<void>) => () => void,
  ) {
    this.unregister = register(() => this.removeForCleanup());
  }

  addToxic(spec: ToxicSpec): Promise<ToxicInfo> {
    return this.adapter.addToxic(this.name, spec);
  }
  removeToxic(name: string): Promise<void> {
    return this.adapter.removeToxic(this.name, name);
  }
  toxics(): Promise<ToxicInfo[]> {
    return this.adapter.listToxics(this.name);
  }
  setEnabled(enabled: boolean): Promise<void> {
    return this.adapter.setEnabled(this.name, enabled);
  }
  info(): Promise<ProxyInfo> {
    return this.adapter.proxyInfo(this.name);
  }
  remove(): Promise<void> {
    this.removed ??= this.adapter.deleteProxy(this.name).then(
      () => {
        this.unregister?.();
        this.unregister = undefined;
      },
      (error: unknown) => {
        this.removed = undefined; // allow a retry
        throw error;
      },
    );
    return this.removed;
  }

  /** At exit: a server that is already gone took its proxies with it. */
  private async removeForCleanup(): Promise<void> {
    this.unregister = undefined;
    try {
      await this.remove();
    } catch (error) {
      if (error instanceof ToxiproxyApiError && error.status === undefined) return;
      throw error;
    }
  }
}

// --- transport --------------------------------------------------------------------------------

/** Thrown by StatusHttpClient; turned into ToxiproxyApiError by ToxiproxyAdapter.call. */
class HttpStatusError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number | undefined,
    readonly serverMessage: string | undefined,
    cause?: unknown,
  ) {
    super(status === undefined ? `${method} ${url} failed` : `${method} ${url}: HTTP ${status}`, { cause });
  }
}

/** Same surface as the client's HttpClient (get/post/delete/getText), but errors keep status and body. */
class StatusHttpClient {
  get<T>(url: string): Promise<{ data: T }> {
    return this.request<T>('GET', url);
  }
  post<T>(url: string, body?: unknown): Promise<{ data: T }> {
    return this.request<T>('POST', url, body);
  }
  async delete(url: string): Promise<void> {
    await this.request('DELETE', url);
  }
  async getText(url: string): Promise<string> {
    return (await this.send('GET', url)).text;
  }

  async request<T>(method: string, url: string, body?: unknown): Promise<{ data: T }> {
    const { text } = await this.send(method, url, body);
    if (text.trim() === '') return { data: undefined as T };
    try {
      return { data: JSON.parse(text) as T };
    } catch (error) {
      throw new HttpStatusError(method, url, undefined, `unparsable response ${JSON.stringify(text.slice(0, 200))}`, error);
    }
  }

  private async send(method: string, url: string, body?: unknown): Promise<{ text: string }> {
    let answer: HttpAnswer;
    try {
      answer = await httpRequest(method, url, { body, timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (error) {
      throw new HttpStatusError(method, url, undefined, undefined, error);
    }
    if (!answer.ok) throw new HttpStatusError(method, url, answer.status, serverMessageOf(answer.text));
    return { text: answer.text };
  }
}

function serverMessageOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    const parsed = JSON.parse(trimmed) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return trimmed.slice(0, 500);
}

function wrapError(operation: string, ids: { proxy?: string; toxic?: string }, error: unknown, base: string): Error {
  if (error instanceof ToxiproxyApiError) return error;
  // e.g. `add toxic "lag" on proxy "p1"`, `enable proxy "p1"`, `list toxics of proxy "p1"`, `read version`
  let head = `toxiproxy: ${operation}`;
  if (ids.toxic !== undefined) {
    head += operation.endsWith(' toxic') ? ` "${ids.toxic}"` : ` toxic "${ids.toxic}"`;
    if (ids.proxy !== undefined) head += ` on proxy "${ids.proxy}"`;
  } else if (ids.proxy !== undefined) {
    head += operation.endsWith(' proxy') ? ` "${ids.proxy}"` : ` of proxy "${ids.proxy}"`;
  }

  if (error instanceof HttpStatusError) {
    if (error.status !== undefined) {
      const said = error.serverMessage === undefined ? '' : `: ${error.serverMessage}`;
      return new ToxiproxyApiError(`${head} failed: HTTP ${error.status}${said} (${error.method} ${error.url})`, operation, {
        ...ids,
        status: error.status,
        serverMessage: error.serverMessage,
        method: error.method,
        url: error.url,
      });
    }
    const reason = error.serverMessage ?? causeText(error.cause);
    return new ToxiproxyApiError(`${head} failed: ${reason} (${error.method} ${error.url})`, operation, {
      ...ids,
      serverMessage: error.serverMessage,
      method: error.method,
      url: error.url,
      cause: error.cause,
    });
  }
  if (error instanceof ToxiproxyError) {
    // The client's own error (should not happen with our transport): only a status in its text.
    const status = /status code (\d{3})/.exec(error.message)?.[1];
    return new ToxiproxyApiError(`${head} failed: ${error.message} (server ${base})`, operation, {
      ...ids,
      status: status === undefined ? undefined : Number(status),
      cause: error,
    });
  }
  return new ToxiproxyApiError(`${head} failed: ${causeText(error)} (server ${base})`, operation, { ...ids, cause: error });
}

function causeText(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS} ms`;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return `cannot reach the server (${typeof code === 'string' ? code : cause.message})`;
    }
    return error.message;
  }
  return String(error);
}

// --- shapes -----------------------------------------------------------------------------------

interface RawToxic {
  name: string;
  type: ToxicType;
  stream: ToxicStream;
  toxicity: number;
  attributes: unknown;
}

interface RawProxy {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics?: RawToxic[] | null;
}

function toToxicInfo(raw: RawToxic): ToxicInfo {
  const attributes: Record<string, number> = {};
  if (typeof raw.attributes === 'object' && raw.attributes !== null) {
    for (const [key, value] of Object.entries(raw.attributes)) {
      if (typeof value === 'number') attributes[key] = value;
    }
  }
  return { name: raw.name, type: raw.type, stream: raw.stream, toxicity: raw.toxicity, attributes };
}

function toProxyInfo(raw: RawProxy): ProxyInfo {
  return {
    name: raw.name,
    listen: parseHostPort(raw.listen) ?? { host: raw.listen, port: 0 },
    upstream: raw.upstream,
    enabled: raw.enabled,
    toxics: (raw.toxics ?? []).map(toToxicInfo),
  };
}

function parseHostPort(text: string): HostPort | undefined {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return undefined;
  const port = Number(text.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) return undefined;
  const host = text.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

function joinHostPort({ host, port }: HostPort): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function checkName(kind: 'proxy' | 'toxic', name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new ToxiproxyApiError(`toxiproxy: invalid ${kind} name ${JSON.stringify(name)} (allowed: letters, digits, . _ -)`, `validate ${kind} name`, {
      [kind]: name,
    });
  }
}
