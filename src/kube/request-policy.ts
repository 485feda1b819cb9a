// The request policy of the REST client: which failed attempts are retried, after how long, and how many
// retries the client may spend overall. Pure decisions (no IO, no clock): client.ts does the waiting.
//
// Follows client-go's rest client (k8s.io/client-go/rest/request.go `checkWait`, `retryAfterSeconds`, and
// `IsRetryableError` for idempotent requests), with two additions of ours: 429/503/504 are retried with a
// jittered exponential backoff even when the server sent no Retry-After, and a client-wide retry budget stops
// retries from multiplying the load on an API server that is already shedding it.

export interface RequestPolicy {
  /** Retries per request after the first attempt (client-go: 10 for Retry-After answers). */
  readonly maxRetries: number;
  /** First backoff when the server gave no Retry-After; doubles per retry up to `backoffMaxMs`. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** A Retry-After longer than this is cut to it (a misconfigured proxy must not park a worker for an hour). */
  readonly maxRetryAfterMs: number;
  /** Each attempt (connect, send, whole answer read) must finish within this; 0 = no deadline. */
  readonly requestTimeoutMs: number;
  /** Retry budget: at most `budgetCapacity` retries saved up; each first attempt adds `budgetRatio` of one. */
  readonly budgetCapacity: number;
  readonly budgetRatio: number;
}

export const DEFAULT_REQUEST_POLICY: RequestPolicy = {
  maxRetries: 5,
  backoffBaseMs: 250,
  backoffMaxMs: 8_000,
  maxRetryAfterMs: 60_000,
  requestTimeoutMs: 30_000,
  budgetCapacity: 50,
  budgetRatio: 0.1,
};

/** What went wrong with one attempt: an HTTP answer, or no answer (with whether the server could have received it). */
export type AttemptFailure =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string | undefined; readonly retryAfterSeconds?: number | undefined }
  | { readonly kind: 'connection'; readonly notReceived: boolean };

export type RetryDecision = { readonly retry: false; readonly why: string } | { readonly retry: true; readonly delayMs: number; readonly why: string };

const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method.toUpperCase());
}

/**
 * `Retry-After` as client-go reads it: whole seconds only (an HTTP date is ignored), falling back to the
 * Status body's `details.retryAfterSeconds`. Undefined when neither is usable.
 */
export function retryAfterMs(f: Extract<AttemptFailure, { kind: 'status' }>): number | undefined {
  const header = f.retryAfter?.trim();
  if (header !== undefined && /^\d+$/.test(header)) return Number(header) * 1000;
  const body = f.retryAfterSeconds;
  return body !== undefined && Number.isFinite(body) && body >= 0 ? body * 1000 : undefined;
}

/** Exponential backoff with equal jitter: half the step fixed, half random (`random` in [0, 1)). */
export function backoffMs(policy: RequestPolicy, retry: number, random: number): number {
  const step = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.min(retry, 30));
  return step / 2 + (random * step) / 2;
}

/**
 * Whether attempt number `retry` (0 = the first retry) of a `method` request that failed with `f` is retried.
 * - Retry-After on 429 or any 5xx: the server asks us to come back; wait exactly that long (client-go).
 * - 429 and 503 without it: the request was shed before it was processed; safe for every method.
 * - 504 (and 500 without Retry-After is never retried: it may be a real failure): 504 may have been processed, so
 *   only idempotent requests.
 * - Connection failures: a request the server never received (refused, DNS) is retried for every method; a reset
 *   or a timeout after sending only for idempotent ones — a POST may have created its object already.
 */
export function retryDecision(policy: RequestPolicy, method: string, f: AttemptFailure, retry: number, random: number): RetryDecision {
  if (retry >= policy.maxRetries) return { retry: false, why: `gave up after ${policy.maxRetries} retries` };
  const idempotent = isIdempotent(method);
  if (f.kind === 'connection') {
    if (f.notReceived || idempotent) return { retry: true, delayMs: backoffMs(policy, retry, random), why: 'connection failed' };
    return { retry: false, why: `a ${method} may have reached the server; not retried` };
  }
  const after = retryAfterMs(f);
  if (after !== undefined && (f.status === 429 || f.status >= 500)) {
    return { retry: true, delayMs: Math.min(after, policy.maxRetryAfterMs), why: `HTTP ${f.status} with Retry-After` };
  }
  if (f.status === 429 || f.status === 503) return { retry: true, delayMs: backoffMs(policy, retry, random), why: `HTTP ${f.status}` };
  if (f.status === 504 && idempotent) return { retry: true, delayMs: backoffMs(policy, retry, random), why: 'HTTP 504' };
  return { retry: false, why: `HTTP ${f.status} is not retried` };
}

/**
 * A client-wide budget of retries (in the spirit of gRPC's retry throttling): every first attempt saves
 * `ratio` of a retry, up to `capacity`; every retry spends one. When the API server fails everything, the
 * retries stay a bounded fraction of the requests instead of multiplying them.
 */
export class RetryBudget {
  readonly #capacity: number;
  readonly #ratio: number;
  #tokens: number;

  constructor(capacity: number, ratio: number) {
    this.#capacity = Math.max(0, capacity);
    this.#ratio = Math.max(0, ratio);
    this.#tokens = this.#capacity;
  }

  get available(): number {
    return this.#tokens;
  }

  /** A first attempt was made. */
  deposit(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + this.#ratio);
  }

  /** Takes one retry from the budget; false when it is spent. */
  withdraw(): boolean {
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
