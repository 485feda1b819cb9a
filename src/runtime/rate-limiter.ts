/**
 * Work-queue rate limiters with client-go semantics (`util/workqueue/default_rate_limiters.go`).
 *
 * The controller default is the maximum of a per-item exponential backoff (5 ms · 2^failures, capped at
 * 1000 s) and a global token bucket (10 qps, burst 100) — Kruise's `--rate-limiter-base-delay`,
 * `--rate-limiter-max-delay`, `--rate-limiter-qps` and `--rate-limiter-bucket-size`.
 */
import type { Clock } from './clock.ts';

export interface RateLimiter {
  /** How long to wait before `key` may be processed again; records one more failure for it. */
  when(key: string): number;
  /** Stop tracking `key` (it succeeded): its backoff starts over. */
  forget(key: string): void;
  /** Failures recorded for `key` since the last `forget`. */
  numRequeues(key: string): number;
}

export interface RateLimiterOptions {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly qps: number;
  readonly burst: number;
}

export const DEFAULT_RATE_LIMITER_OPTIONS: Readonly<RateLimiterOptions> = {
  baseDelayMs: 5,
  maxDelayMs: 1_000_000,
  qps: 10,
  burst: 100,
};

/** base · 2^failures, capped at `maxDelayMs`. */
export class ItemExponentialRateLimiter implements RateLimiter {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #failures = new Map<string, number>();

  constructor(baseDelayMs: number, maxDelayMs: number) {
    this.#baseDelayMs = baseDelayMs;
    this.#maxDelayMs = maxDelayMs;
  }

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const backoff = this.#baseDelayMs * 2 ** failures;
    return Number.isFinite(backoff) && backoff <= this.#maxDelayMs ? backoff : this.#maxDelayMs;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * Global token bucket (golang.org/x/time/rate `Reserve().Delay()`): every `when` takes a token, going into
 * debt when the bucket is empty; the delay is the time until the debt is repaid at `qps`.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  readonly #clock: Clock;
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last: number;

  constructor(clock: Clock, qps: number, burst: number) {
    this.#clock = clock;
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = clock.monotonicNow();
  }

  when(_key: string): number {
    const now = this.#clock.monotonicNow();
    const elapsedMs = Math.max(0, now - this.#last);
    this.#last = Math.max(now, this.#last);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsedMs * this.#qps) / 1000);
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens * 1000) / this.#qps);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The worst (longest) delay of several limiters; every limiter records every failure. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    let delay = 0;
    for (const l of this.#limiters) delay = Math.max(delay, l.when(key));
    return delay;
  }

  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let n = 0;
    for (const l of this.#limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}

/** client-go's `DefaultControllerRateLimiter`, every parameter overridable (Kruise flags). */
export function defaultControllerRateLimiter(clock: Clock, opts: Partial<RateLimiterOptions> = {}): RateLimiter {
  const o = { ...DEFAULT_RATE_LIMITER_OPTIONS, ...opts };
  return new MaxOfRateLimiter(new ItemExponentialRateLimiter(o.baseDelayMs, o.maxDelayMs), new TokenBucketRateLimiter(clock, o.qps, o.burst));
}
