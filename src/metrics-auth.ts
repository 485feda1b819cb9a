// Secure metrics (--metrics-secure), as controller-runtime's filters.WithAuthenticationAndAuthorization: /metrics
// over HTTPS, each caller's bearer token checked with a TokenReview, then a SubjectAccessReview asks whether that
// user may `get` the non-resource URL /metrics. 401 without a valid token, 403 without the permission. Answers
// are cached for a minute per token, so a Prometheus scraping every 15 s costs the API server two requests a minute.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type http from 'node:http';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { KubeClient } from './kube/client.ts';
import type { ResourceRef } from './kube/resources.ts';
import type { CertAndKey } from './webhook/certificates.ts';

const TOKEN_REVIEWS: ResourceRef = { group: 'authentication.k8s.io', version: 'v1', plural: 'tokenreviews', namespaced: false };
const SUBJECT_ACCESS_REVIEWS: ResourceRef = { group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', namespaced: false };
const CACHE_TTL_MS = 60_000;
/** A self-signed certificate lives this long; the process restarts well before (an upgrade, a node drain). */
const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 3600_000;

export type Verdict = 'allowed' | 'unauthenticated' | 'forbidden';

interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The two reviews the API server answers (a port, so tests can answer them). */
export interface ReviewPort {
  tokenReview(token: string): Promise<{ authenticated: boolean; user?: UserInfo }>;
  accessReview(user: UserInfo, verb: string, path: string): Promise<boolean>;
}

export function apiReviewPort(client: KubeClient): ReviewPort {
  return {
    async tokenReview(token) {
      const r = await client.create<{ status?: { authenticated?: boolean; user?: UserInfo } }>(TOKEN_REVIEWS, undefined, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      return { authenticated: r.status?.authenticated === true, ...(r.status?.user !== undefined ? { user: r.status.user } : {}) };
    },
    async accessReview(user, verb, urlPath) {
      const r = await client.create<{ status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path: urlPath, verb } },
      });
      return r.status?.allowed === true;
    },
  };
}

/** Decides a request from its Authorization header; verdicts are cached per token (hashed) for a minute. */
export class MetricsAuthorizer {
  readonly #reviews: ReviewPort;
  readonly #now: () => number;
  readonly #cache = new Map<string, { verdict: Verdict; until: number }>();

  constructor(reviews: ReviewPort, now: () => number) {
    this.#reviews = reviews;
    this.#now = now;
  }

  async authorize(authorization: string | undefined, urlPath: string): Promise<Verdict> {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (m?.[1] === undefined) return 'unauthenticated';
    const token = m[1];
    const key = `${createHash('sha256').update(token).digest('hex')} ${urlPath}`;
    const now = this.#now();
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.until > now) return cached.verdict;
    const review = await this.#reviews.tokenReview(token);
    const verdict: Verdict =
      !review.authenticated || review.user === undefined ? 'unauthenticated' : (await this.#reviews.accessReview(review.user, 'get', urlPath)) ? 'allowed' : 'forbidden';
    for (const [k, v] of this.#cache) if (v.until <= now) this.#cache.delete(k);
    this.#cache.set(key, { verdict, until: now + CACHE_TTL_MS });
    return verdict;
  }
}

/** Wraps a handler: only allowed callers reach it. */
export function authorizedHandler(inner: http.RequestListener, auth: MetricsAuthorizer, logger: Logger): http.RequestListener {
  return (req, res) => {
    const urlPath = (req.url ?? '/').split('?')[0] ?? '/';
    auth.authorize(req.headers.authorization, urlPath).then(
      (verdict) => {
        if (verdict === 'allowed') return void inner(req, res);
        if (verdict === 'unauthenticated') return void res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized: send a bearer token (a ServiceAccount token)\n');
        res.writeHead(403, { 'content-type': 'text/plain' }).end(`Forbidden: the token's user may not get the non-resource URL ${urlPath}\n`);
      },
      (e: unknown) => {
        logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'metrics authentication failed: TokenReview or SubjectAccessReview could not be made');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('authentication or authorization failed; see the controller log\n');
      },
    );
  };
}

/** tls.crt/tls.key from the directory, or a self-signed pair for this host (a scraper then skips verification). */
export async function metricsCertificate(certDir: string | undefined, nowMs: number): Promise<CertAndKey> {
  if (certDir !== undefined) return { cert: readFileSync(path.join(certDir, 'tls.crt'), 'utf8'), key: readFileSync(path.join(certDir, 'tls.key'), 'utf8') };
  const { generateCA, issueServingCertificate } = await import('./webhook/cert-issuer.ts');
  const ca = await generateCA(nowMs, SELF_SIGNED_VALIDITY_MS);
  return issueServingCertificate(ca, [hostname(), 'localhost', '127.0.0.1'], nowMs, SELF_SIGNED_VALIDITY_MS);
}

export function createSecureServer(pair: CertAndKey, handler: http.RequestListener): https.Server {
  return https.createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, handler);
}
