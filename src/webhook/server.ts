// The webhook HTTPS server (node:https): AdmissionReview v1 for mutate/validate, ConversionReview v1 at /convert,
// /healthz and /readyz. The certificate is swapped in place (setSecureContext) when it rotates; the server listens
// only once it has one, and is ready only then.
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { FeatureGates } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import {
  BadRequestError,
  badRequest,
  internalError,
  mutate,
  parseAdmissionReview,
  podsToPrefetch,
  reviewReply,
  validate,
  type AdmissionRequest,
  type AdmissionResponse,
} from './admission-review.ts';
import { CLONESET_VERSIONS, type AdmissionHandlers, type CloneSetVersion } from './contracts.ts';
import { convertReview } from './conversion-review.ts';
import { CONVERT_PATH, mutatePath, validatePath } from './configurations.ts';
import type { CertAndKey } from './certificates.ts';

/** An AdmissionReview holds up to two objects of at most ~1.5 MiB each (etcd's limit), plus the envelope. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** The API server gives up after timeoutSeconds (10); answering later is useless. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface WebhookServerDeps {
  readonly handlers: AdmissionHandlers;
  readonly gates: FeatureGates;
  /** GETs the named pods of a namespace; a name that does not exist is absent from the map. */
  readonly fetchPods: (namespace: string, names: readonly string[]) => Promise<ReadonlyMap<string, Pod>>;
  readonly logger: Logger;
  /** extra readiness (e.g. the webhook configurations are in place); certificates are always required */
  readonly ready?: () => boolean;
}

type Route = { kind: 'mutate' | 'validate'; version: CloneSetVersion } | { kind: 'convert' };

const ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
  ...CLONESET_VERSIONS.map((v): [string, Route] => [mutatePath(v), { kind: 'mutate', version: v }]),
  ...CLONESET_VERSIONS.map((v): [string, Route] => [validatePath(v), { kind: 'validate', version: v }]),
  [CONVERT_PATH, { kind: 'convert' }],
]);

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(b);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch (e) {
    throw new HttpError(400, `the body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' }).end(text);
}

function notAfterMs(pem: string): number | undefined {
  try {
    const ms = Date.parse(new X509Certificate(pem).validTo);
    return Number.isFinite(ms) ? ms : undefined;
  } catch {
    return undefined;
  }
}

/** controller-runtime's webhook metrics, by webhook path: requests by HTTP code, in flight. */
export interface WebhookStats {
  readonly requests: ReadonlyMap<string, ReadonlyMap<number, number>>;
  readonly inFlight: ReadonlyMap<string, number>;
  /** notAfter (epoch ms) of the serving certificate in use, once one is loaded (the certificate-expiry alert). */
  readonly certificateNotAfterMs?: number;
}

export class WebhookServer {
  readonly #deps: WebhookServerDeps;
  #server: https.Server | undefined;
  #certLoaded = false;
  readonly #requests = new Map<string, Map<number, number>>();
  readonly #inFlight = new Map<string, number>();
  #certNotAfterMs: number | undefined;

  stats(): WebhookStats {
    return { requests: this.#requests, inFlight: this.#inFlight, ...(this.#certNotAfterMs !== undefined ? { certificateNotAfterMs: this.#certNotAfterMs } : {}) };
  }

  #count(path: string, code: number): void {
    const byCode = this.#requests.get(path) ?? new Map<number, number>();
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    this.#requests.set(path, byCode);
  }

  constructor(deps: WebhookServerDeps) {
    this.#deps = deps;
  }

  get certificateLoaded(): boolean {
    return this.#certLoaded;
  }

  isReady(): boolean {
    return this.#certLoaded && (this.#deps.ready?.() ?? true);
  }

  /** Listens on the first call; later calls swap the certificate of the running server (no restart, no dropped connection). */
  async setCertificate(pair: CertAndKey, port: number, host: string | undefined): Promise<void> {
    this.#certNotAfterMs = notAfterMs(pair.cert);
    if (this.#server !== undefined) {
      this.#server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
      return;
    }
    const server = https.createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (req, res) => void this.handle(req, res));
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // reusePort (Linux): several webhook processes may serve one URL (the kernel spreads connections), so that a
      // process can be replaced without a moment where nobody answers (URL mode has no Service to do that)
      server.listen({ port, ...(host !== undefined ? { host } : {}), reusePort: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => this.#deps.logger.error({ err: e.message }, 'webhook server error'));
    this.#certLoaded = true;
  }

  /** The bound port (when listening on port 0). */
  get port(): number | undefined {
    const a = this.#server?.address();
    return typeof a === 'object' && a !== null ? a.port : undefined;
  }

  /** Stops accepting, lets requests in flight finish (at most REQUEST_TIMEOUT_MS), then drops what is left. */
  async close(): Promise<void> {
    const s = this.#server;
    if (s === undefined) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeIdleConnections();
    const timer = setTimeout(() => s.closeAllConnections(), REQUEST_TIMEOUT_MS);
    await closed;
    clearTimeout(timer);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/healthz') return send(res, 200, 'ok');
    if (path === '/readyz') return this.isReady() ? send(res, 200, 'ok') : send(res, 503, 'certificates or webhook configurations not in place yet');
    const route = ROUTES.get(path);
    if (route === undefined) return send(res, 404, `no webhook at ${path}; paths: ${[...ROUTES.keys()].join(', ')}`);
    if (req.method !== 'POST') return send(res, 405, `${path} takes POST`);
    const started = performance.now();
    this.#inFlight.set(path, (this.#inFlight.get(path) ?? 0) + 1);
    res.once('close', () => {
      this.#inFlight.set(path, (this.#inFlight.get(path) ?? 1) - 1);
      this.#count(path, res.statusCode);
    });
    try {
      const body = await readBody(req);
      if (route.kind === 'convert') return send(res, 200, convertReview(body, this.#deps.handlers.convertCloneSet));
      let review: AdmissionRequest;
      try {
        review = parseAdmissionReview(body);
      } catch (e) {
        if (e instanceof BadRequestError) throw new HttpError(400, e.message);
        throw e;
      }
      const response = await this.#admit(route.kind, route.version, review);
      this.#deps.logger.debug(
        {
          path,
          uid: review.uid,
          op: review.operation,
          name: review.name,
          namespace: review.namespace,
          allowed: response.allowed,
          patched: response.patch !== undefined,
          ms: Math.round(performance.now() - started),
        },
        'admission',
      );
      return send(res, 200, reviewReply(response));
    } catch (e) {
      if (e instanceof HttpError) return send(res, e.status, e.message);
      if (e instanceof BadRequestError) return send(res, 400, e.message);
      this.#deps.logger.error({ path, err: e instanceof Error ? e.stack : String(e) }, 'webhook handler failed');
      return send(res, 500, `internal error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async #admit(kind: 'mutate' | 'validate', version: CloneSetVersion, review: AdmissionRequest): Promise<AdmissionResponse> {
    try {
      if (kind === 'mutate') return mutate(review, version, this.#deps.handlers, this.#deps.gates);
      const names = podsToPrefetch(review);
      const pods = names.length === 0 || review.namespace === undefined ? new Map<string, Pod>() : await this.#deps.fetchPods(review.namespace, names);
      return validate(review, version, this.#deps.handlers, { pods, gates: this.#deps.gates });
    } catch (e) {
      if (e instanceof BadRequestError) return badRequest(review.uid, e.message);
      this.#deps.logger.error({ uid: review.uid, err: e instanceof Error ? e.stack : String(e) }, 'admission handler failed');
      return internalError(review.uid, e);
    }
  }
}
