// When to create or rotate the webhook's CA and serving certificate. Pure: the certificates as parsed facts and the
// time in, a plan out (cert-source.ts carries it out: cert-issuer.ts issues, the Secret is written there).
//
// Zero-downtime CA rotation in two steps, each its own sync:
//  1. at 2/3 of the CA's lifetime a new CA is created; the CA bundle (Secret key ca.crt, and the caBundle of the
//     webhook configurations and of the CRD) becomes old + new; the serving certificate, signed by the old CA, stays;
//  2. once the bundle has had time to reach the API server (propagationMs after step 1), the serving certificate is
//     re-issued by the new CA. An old CA leaves the bundle only when it expires.
// A serving certificate alone is re-issued at 2/3 of its lifetime, or when it does not cover the wanted host names.

export interface CertInfo {
  readonly subject: string;
  readonly issuer: string;
  /** epoch ms */
  readonly notBefore: number;
  readonly notAfter: number;
  readonly dnsNames: readonly string[];
  readonly ips: readonly string[];
}

export interface CertState {
  /** the CA bundle (ca.crt), in order */
  readonly bundle: readonly CertInfo[];
  /** ca.key is present and belongs to the newest CA of the bundle */
  readonly newestCAKeyUsable: boolean;
  /** tls.crt, when present, parseable and matching tls.key */
  readonly serving?: CertInfo;
  /** when the newest CA was added (annotation), epoch ms */
  readonly caRotatedAt?: number;
}

export interface CertPolicy {
  readonly validityMs: number;
  /** fraction of the lifetime after which a certificate is replaced (2/3) */
  readonly rotateAt: number;
  readonly propagationMs: number;
}

export interface CertPlan {
  readonly newCA: boolean;
  readonly newServing: boolean;
  /** subjects of CAs that leave the bundle (expired) */
  readonly dropCAs: readonly string[];
  /** why, for the log */
  readonly reasons: readonly string[];
}

export function rotationDue(c: CertInfo, nowMs: number, rotateAt: number): boolean {
  return nowMs >= c.notBefore + (c.notAfter - c.notBefore) * rotateAt;
}

export function covers(c: CertInfo, hosts: readonly string[]): boolean {
  return hosts.every((h) => c.dnsNames.includes(h) || c.ips.includes(h));
}

export function newestCA(bundle: readonly CertInfo[]): CertInfo | undefined {
  let best: CertInfo | undefined;
  for (const c of bundle) if (best === undefined || c.notBefore > best.notBefore) best = c;
  return best;
}

export function planCertificates(state: CertState, hosts: readonly string[], nowMs: number, policy: CertPolicy): CertPlan {
  const reasons: string[] = [];
  const newest = newestCA(state.bundle);
  let newCA = false;
  if (newest === undefined) {
    newCA = true;
    reasons.push('no CA yet');
  } else if (!state.newestCAKeyUsable) {
    newCA = true;
    reasons.push('the CA key is missing or does not match the newest CA');
  } else if (nowMs >= newest.notAfter) {
    newCA = true;
    reasons.push('the CA expired');
  } else if (rotationDue(newest, nowMs, policy.rotateAt)) {
    newCA = true;
    reasons.push('the CA is past 2/3 of its lifetime');
  }
  const dropCAs = state.bundle.filter((c) => nowMs >= c.notAfter).map((c) => c.subject);
  const serving = state.serving;
  const trustedIssuer = serving !== undefined && state.bundle.some((c) => c.subject === serving.issuer && nowMs < c.notAfter);
  const servingUsable = serving !== undefined && trustedIssuer && nowMs < serving.notAfter && covers(serving, hosts);
  let newServing = false;
  if (!servingUsable) {
    newServing = true;
    reasons.push(serving === undefined ? 'no serving certificate yet' : 'the serving certificate is expired, untrusted or does not cover the host names');
  } else if (newCA) {
    // step 1 of a CA rotation: keep serving with the old CA's certificate until the new bundle has propagated
  } else if (newest !== undefined && serving.issuer !== newest.subject) {
    // step 2, only once the API server can know the new CA (even if the old certificate is past its 2/3 point:
    // it is still valid, and one signed by a CA the API server does not trust yet would fail requests)
    if (nowMs >= (state.caRotatedAt ?? 0) + policy.propagationMs) {
      newServing = true;
      reasons.push('the CA bundle with the new CA has propagated: re-issuing the serving certificate from it');
    }
  } else if (rotationDue(serving, nowMs, policy.rotateAt)) {
    newServing = true;
    reasons.push('the serving certificate is past 2/3 of its lifetime');
  }
  return { newCA, newServing, dropCAs, reasons };
}

/** Intervals derived from the validity: a year → resync 1 min, propagation 10 s; 2 min → 6 s and 4 s. */
export function policyFor(validityMs: number): CertPolicy & { resyncMs: number; backdateMs: number } {
  const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));
  return {
    validityMs,
    rotateAt: 2 / 3,
    propagationMs: clamp(validityMs / 30, 1000, 10_000),
    resyncMs: clamp(validityMs / 20, 1000, 60_000),
    // notBefore slightly in the past, for clocks that disagree a little
    backdateMs: Math.min(60_000, validityMs / 10),
  };
}

/**
 * How long until the next look at the certificates: the resync interval, or earlier when a rotation point, the end of
 * a propagation wait or an expiry comes first (never less than 200 ms).
 */
export function nextCheckDelay(state: CertState, nowMs: number, policy: CertPolicy & { resyncMs: number }): number {
  const points: number[] = [nowMs + policy.resyncMs];
  const point = (c: CertInfo): number => c.notBefore + (c.notAfter - c.notBefore) * policy.rotateAt;
  for (const c of state.bundle) points.push(c.notAfter);
  const newest = newestCA(state.bundle);
  if (newest !== undefined) points.push(point(newest));
  if (state.serving !== undefined) {
    points.push(point(state.serving), state.serving.notAfter);
    if (newest !== undefined && state.serving.issuer !== newest.subject) points.push((state.caRotatedAt ?? 0) + policy.propagationMs);
  }
  const next = Math.min(...points.filter((p) => p > nowMs));
  return Math.max(200, next - nowMs);
}
