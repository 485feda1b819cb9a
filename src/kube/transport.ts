// Raw HTTP to the API server on node:http(s) with ONE keep-alive agent; TLS material and auth headers come
// from client-node's KubeConfig (`applyToHTTPSOptions`, called per request so refreshed tokens are picked up).

import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { ConnectionError, apiErrorFromResponse } from './api-error.ts';

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface HttpResponse {
  readonly status: number;
  readonly body: string;
}

/** A socket idle this long during a non-watch request is a dead connection. */
const REQUEST_IDLE_TIMEOUT_MS = 60_000;

export class Transport {
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
    const common = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 100 };
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
    return new Transport(server, kc, agent, userAgent);
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

  async #options(method: string, body: { contentType: string; data: string } | undefined): Promise<https.RequestOptions> {
    const auth: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(auth); // fills headers.Authorization / Impersonate-*, or basic `auth`
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.#userAgent };
    for (const [k, v] of Object.entries(auth.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (body !== undefined) {
      headers['Content-Type'] = body.contentType;
      headers['Content-Length'] = String(Buffer.byteLength(body.data));
    }
    return { method, agent: this.#agent, headers, ...(auth.auth === undefined ? {} : { auth: auth.auth }) };
  }

  /** One request, whole body read. Non-2xx is returned, not thrown; network failure → ConnectionError. */
  async request(method: string, path: string, query: Query, body?: { contentType: string; data: string }): Promise<HttpResponse> {
    const url = this.url(path, query);
    const opts = await this.#options(method, body);
    const what = `${method} ${url.pathname}`;
    return new Promise<HttpResponse>((resolve, reject) => {
      const req = this.#mod.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => reject(new ConnectionError(this.server.origin, what, e)));
      });
      req.setTimeout(REQUEST_IDLE_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_IDLE_TIMEOUT_MS / 1000}s`)));
      req.on('error', (e) => reject(new ConnectionError(this.server.origin, what, e)));
      req.end(body?.data);
    });
  }

  /**
   * A streaming GET (watch): calls `onLine` for each newline-terminated line. Resolves when the server ends
   * the stream, when `signal` aborts, or at `deadlineMs` (guards against a silently dead connection).
   * Rejects with ApiError for a non-2xx answer, ConnectionError for network failures, or what `onLine` threw.
   */
  async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal, deadlineMs: number): Promise<void> {
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
        signal.removeEventListener('abort', onAbort);
        if (!keepSocket) req.destroy();
        if (err === undefined) resolve();
        else reject(err);
      };
      const onAbort = (): void => finish();
      const deadline = setTimeout(() => finish(), deadlineMs);
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
