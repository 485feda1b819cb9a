// Raw HTTP to the API server on node:http(s) with ONE keep-alive agent; TLS material and auth headers come
// from client-node's KubeConfig (`applyToHTTPSOptions`: the TLS material once, for the agent; the auth headers per
// request, so refreshed tokens are picked up).

import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigClass } from './client-node-config.ts';
import { ConnectionError, FenceDeadlineError, RequestAbortedError, apiErrorFromResponse } from './api-error.ts';
import type { BodyDecoder } from './list-decoder.ts';

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface HttpResponse {
  readonly status: number;
  readonly body: string;
  /** The Retry-After header, when the server sent one. */
  readonly retryAfter?: string;
  /**
   * The 2xx answer as `RequestControl.decode` decoded it while it arrived (`body` is then empty). A transport may
   * ignore `decode` and return the body instead; KubeClient then decodes the body.
   */
  readonly decoded?: { readonly value: unknown };
}

export interface RequestControl {
  /** Aborting destroys the socket; the request rejects with RequestAbortedError. */
  readonly signal?: AbortSignal | undefined;
  /** The whole exchange (connect, send, answer read) must finish within this; 0/undefined = no deadline. */
  readonly timeoutMs?: number | undefined;
  /**
   * The fence deadline, in ms from the call (counted before the auth hook and the wait for a socket): a request
   * not on the wire by then is never sent, one without an answer by then has its socket destroyed; both reject
   * with FenceDeadlineError. Not retried.
   */
  readonly fenceMs?: number | undefined;
  /**
   * A decoder for a 2xx answer's text, fed chunk by chunk as it arrives instead of the text kept whole (list pages:
   * src/kube/list-decoder.ts). Called once per attempt; what it throws rejects the request.
   */
  readonly decode?: (() => BodyDecoder) | undefined;
  /** The Accept header, when not plain JSON (e.g. a write answered with the object's metadata only: client.ts). */
  readonly accept?: string | undefined;
}

/** A socket idle this long during a non-watch request is a dead connection (when no deadline is set). */
const REQUEST_IDLE_TIMEOUT_MS = 60_000;
/**
 * Connections per client (watches included: the controller's client holds one per informer). Each TLS connection
 * costs memory (OpenSSL and stream buffers): 100 of them added ~8 MiB to the peak RSS of an unthrottled
 * 1000-pod scale-up (135–145 MiB; 128–129 MiB with 16 or 32), for no gain in its time — the API server, not the
 * connection count, bounds it. client-go speaks HTTP/2 over one connection per host; with the default client
 * limits (30 QPS per kind) a handful of requests are in flight at once.
 */
const MAX_SOCKETS = 32;

/** Errors raised before any byte reached the server: retrying cannot apply a write twice. */
const NOT_RECEIVED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/** The watch stream carried no byte (not even a bookmark) for `idleMs`: presumed half-open. */
export class WatchIdleError extends Error {
  override readonly name = 'WatchIdleError';
}

/**
 * What KubeClient needs of its transport: `Transport` (node:http to a real API server), or an in-memory API
 * server (the deterministic simulation in sim/ plugs in here, so the client's retries and request policy run).
 */
export interface HttpTransport {
  readonly server: URL;
  request(method: string, path: string, query: Query, body?: { contentType: string; data: string }, control?: RequestControl): Promise<HttpResponse>;
  stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal, deadlineMs: number, idleMs?: number): Promise<void>;
  close(): void;
}

/**
 * `kc` without its TLS material (CA, client certificate and key), for the per-request auth hook: the agent holds
 * that material already, and `applyToHTTPSOptions` would otherwise decode it from base64 (or read its files) again
 * for every request — three buffers of a few KiB per request, garbage at once. Tokens, exec and auth providers,
 * basic auth and impersonation stay, so what the hook adds to each request is unchanged.
 */
export function authOnly(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const context = kc.getContextObject(kc.getCurrentContext());
  if (cluster === null || user === null || context === null) return kc;
  const { caData: _caData, caFile: _caFile, ...bareCluster } = cluster;
  const { certData: _certData, certFile: _certFile, keyData: _keyData, keyFile: _keyFile, ...bareUser } = user;
  const auth = new (kubeConfigClass())();
  auth.loadFromOptions({ clusters: [bareCluster], users: [bareUser], contexts: [context], currentContext: context.name });
  return auth;
}

export class Transport implements HttpTransport {
  readonly server: URL;
  readonly #kc: KubeConfig;
  readonly #agent: http.Agent;
  readonly #userAgent: string;
  readonly #mod: typeof http | typeof https;

  private constructor(server: URL, kc: KubeConfig, agent: http.Agent, userAgent: string) {
    this.server = server;
    this.#kc = kc;
    this.#agent = agent;
    this.#userAgent = userAgent;
    this.#mod = server.protocol === 'http:' ? http : https;
  }

  static async create(kc: KubeConfig, userAgent: string): Promise<Transport> {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error('kubeconfig has no current cluster');
    const server = new URL(cluster.server);
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const common = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: MAX_SOCKETS };
    const agent =
      server.protocol === 'http:'
        ? new http.Agent(common)
        : new https.Agent({
            ...common,
            ...(tls.ca === undefined ? {} : { ca: tls.ca }),
            ...(tls.cert === undefined ? {} : { cert: tls.cert }),
            ...(tls.key === undefined ? {} : { key: tls.key }),
            ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
            ...(tls.servername === undefined ? {} : { servername: tls.servername }),
          });
    return new Transport(server, authOnly(kc), agent, userAgent);
  }

  /** Closes idle keep-alive sockets (open watches end by their own signal). */
  close(): void {
    this.#agent.destroy();
  }

  url(path: string, query: Query = {}): URL {
    const base = this.server.pathname.replace(/\/$/, '');
    const url = new URL(base + path, this.server);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  async #options(method: string, body: { contentType: string; data: string } | undefined, accept = 'application/json'): Promise<https.RequestOptions> {
    const auth: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(auth); // fills headers.Authorization / Impersonate-*, or basic `auth`
    const headers: Record<string, string> = { Accept: accept, 'User-Agent': this.#userAgent };
    for (const [k, v] of Object.entries(auth.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (body !== undefined) {
      headers['Content-Type'] = body.contentType;
      headers['Content-Length'] = String(Buffer.byteLength(body.data));
    }
    return { method, agent: this.#agent, headers, ...(auth.auth === undefined ? {} : { auth: auth.auth }) };
  }

  /**
   * One request, whole body read. Non-2xx is returned, not thrown; network failure or deadline →
   * ConnectionError (`notReceived` when the server cannot have seen it); abort → RequestAbortedError.
   */
  async request(method: string, path: string, query: Query, body?: { contentType: string; data: string }, control: RequestControl = {}): Promise<HttpResponse> {
    const url = this.url(path, query);
    const what = `${method} ${url.pathname}`;
    const { signal, timeoutMs, fenceMs, decode, accept } = control;
    if (signal?.aborted === true) throw new RequestAbortedError(what);
    // The fence deadline counts from here: the auth hook (exec plugins can take seconds) and the wait for one of
    // the MAX_SOCKETS sockets (shared with long-lived watches) come after.
    const fenceAt = fenceMs === undefined ? undefined : performance.now() + fenceMs;
    if (fenceAt !== undefined && fenceMs !== undefined && fenceMs <= 0) throw new FenceDeadlineError(what, false);
    const opts = await this.#options(method, body, accept);
    if (fenceAt !== undefined && fenceAt - performance.now() <= 0) throw new FenceDeadlineError(what, false);
    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      let onWire = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        if (deadline !== undefined) clearTimeout(deadline);
        if (fence !== undefined) clearTimeout(fence);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (e: unknown): void => settle(() => reject(new ConnectionError(this.server.origin, what, e, NOT_RECEIVED_CODES.has(errorCode(e) ?? ''))));
      const onAbort = (): void => {
        settle(() => reject(new RequestAbortedError(what)));
        req.destroy();
      };
      const req = this.#mod.request(url, opts, (res) => {
        // Decoded as it arrives: fed to `decode` (list pages, which never exist whole then; answers nobody reads, which are dropped) or kept as text, in V8's heap. Socket chunks joined by Buffer.concat at the end
        // cost a native buffer the size of the body: ~2.5 MB per list page of 500 pods. glibc's malloc moves its
        // mmap threshold up to the size of such a buffer once one is freed, so the pages after it came from the
        // brk heap, which it cannot give back while anything lives above them: one relist of 60 000 pods grew the
        // process's [heap] by 24 MiB for good (docs/performance.md, "Native memory").
        res.setEncoding('utf8');
        const status = res.statusCode ?? 0;
        const decoder = decode !== undefined && status >= 200 && status <= 299 ? decode() : undefined;
        const failDecoding = (e: unknown): void => {
          settle(() => reject(e));
          req.destroy();
        };
        let text = '';
        res.on('data', (c: string) => {
          if (decoder === undefined) text += c;
          else if (!settled) {
            try {
              decoder.write(c);
            } catch (e) {
              failDecoding(e);
            }
          }
        });
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          let response: HttpResponse = { status, body: text };
          if (decoder !== undefined) {
            if (settled) return;
            try {
              response = { status, body: '', decoded: { value: decoder.end() } };
            } catch (e) {
              failDecoding(e);
              return;
            }
          }
          settle(() => resolve(typeof retryAfter === 'string' ? { ...response, retryAfter } : response));
        });
        res.on('error', fail);
      });
      const deadline =
        timeoutMs !== undefined && timeoutMs > 0
          ? setTimeout(() => {
              fail(new Error(`no complete answer within ${timeoutMs / 1000}s (--kube-api-request-timeout)`));
              req.destroy();
            }, timeoutMs)
          : undefined;
      if (deadline === undefined) req.setTimeout(REQUEST_IDLE_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_IDLE_TIMEOUT_MS / 1000}s`)));
      // A request still waiting for a socket has not been written: destroying it means it is never sent.
      req.once('socket', () => {
        // Handed a socket after a pause (SIGSTOP, GC) or a long queue: the deadline may be past before the timer
        // below had a chance to run; the request is not written then.
        if (fenceAt !== undefined && performance.now() >= fenceAt) {
          settle(() => reject(new FenceDeadlineError(what, false)));
          req.destroy();
          return;
        }
        onWire = true;
      });
      const fence =
        fenceAt === undefined
          ? undefined
          : setTimeout(
              () => {
                settle(() => reject(new FenceDeadlineError(what, onWire)));
                req.destroy();
              },
              Math.max(0, fenceAt - performance.now()),
            );
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', fail);
      req.end(body?.data);
    });
  }

  /**
   * A streaming GET (watch): calls `onLine` for each newline-terminated line. Resolves when the server ends
   * the stream, when `signal` aborts, or at `deadlineMs` (guards against a silently dead connection).
   * Rejects with ApiError for a non-2xx answer, ConnectionError for network failures, WatchIdleError when no
   * byte arrived for `idleMs` (0 = never), or what `onLine` threw.
   */
  async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal, deadlineMs: number, idleMs = 0): Promise<void> {
    if (signal.aborted) return;
    const url = this.url(path, query);
    const opts = await this.#options('GET', undefined);
    const what = `WATCH ${url.pathname}`;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown, keepSocket = false): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (idle !== undefined) clearTimeout(idle);
        signal.removeEventListener('abort', onAbort);
        if (!keepSocket) req.destroy();
        if (err === undefined) resolve();
        else reject(err);
      };
      const onAbort = (): void => finish();
      const deadline = setTimeout(() => finish(), deadlineMs);
      // Any byte (an event or a bookmark) proves the connection alive; silence past idleMs means a half-open
      // connection (a node or a load balancer went away) that would otherwise leave the cache stale for minutes.
      let idle: ReturnType<typeof setTimeout> | undefined;
      // Restarted by every chunk: refresh() re-arms the one timer instead of allocating another per chunk.
      const armIdle = (): void => {
        if (idleMs <= 0) return;
        if (idle !== undefined) idle.refresh();
        else idle = setTimeout(() => finish(new WatchIdleError(`${what}: no data and no bookmark for ${idleMs / 1000}s (--watch-idle-timeout)`)), idleMs);
      };
      armIdle();
      signal.addEventListener('abort', onAbort, { once: true });
      const req = this.#mod.request(url, opts, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish(apiErrorFromResponse(status, Buffer.concat(chunks).toString('utf8'), { request: what }), true));
          return;
        }
        res.setEncoding('utf8');
        let buffered = '';
        res.on('data', (chunk: string) => {
          armIdle();
          buffered += chunk;
          let nl = buffered.indexOf('\n');
          while (nl >= 0 && !settled) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line !== '') {
              try {
                onLine(line);
              } catch (e) {
                finish(e);
                return;
              }
            }
            nl = buffered.indexOf('\n');
          }
        });
        res.on('end', () => finish(undefined, true));
        res.on('error', (e) => finish(new ConnectionError(this.server.origin, what, e)));
      });
      req.on('error', (e) => finish(new ConnectionError(this.server.origin, what, e)));
      req.end();
    });
  }
}
