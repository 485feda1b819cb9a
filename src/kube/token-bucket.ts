// Client-side request rate limit (client-go's `flowcontrol` token bucket): `qps` tokens per second, at most
// `burst` saved up. `take()` waits for a token instead of failing, so a burst of writes is smoothed, not dropped.

import { setTimeout as sleepTimer } from 'node:timers/promises';

/** The time source of the bucket (kube/ sits below runtime/, so it does not use runtime's Clock). */
export interface BucketTime {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realBucketTime: BucketTime = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleepTimer(ms, undefined, signal === undefined ? {} : { signal }),
};

export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #time: BucketTime;
  /** Tokens available at `#at`; negative when callers have reserved future tokens. */
  #tokens: number;
  #at: number;

  /** `qps <= 0` or a non-finite qps disables the limit. */
  constructor(qps: number, burst: number, time: BucketTime = realBucketTime) {
    this.#qps = qps;
    this.#burst = Math.max(1, burst);
    this.#time = time;
    this.#tokens = this.#burst;
    this.#at = time.now();
  }

  get unlimited(): boolean {
    return !(this.#qps > 0) || !Number.isFinite(this.#qps);
  }

  /**
   * Reserves one token and returns how long the caller must wait for it (0 when one was available).
   * Reservations are taken in call order, so waiting callers are served first come, first served.
   */
  reserve(): number {
    if (this.unlimited) return 0;
    const now = this.#time.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#qps);
    this.#at = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }

  /** Resolves when the caller may send its request. */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.#time.sleep(wait, signal);
  }
}
