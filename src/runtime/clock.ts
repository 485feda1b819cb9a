/**
 * Time as an injected dependency. Everything in runtime/ and cloneset/ that needs "now" or a timer takes a
 * `Clock`, so tests drive time with `FakeClock` instead of sleeping.
 *
 * Two kinds of time: every DURATION (expectation TTLs, backoff, rate limits, lease timing, timers) is measured
 * on `monotonicNow()`, which never jumps when the wall clock is stepped (NTP, a VM resumed, an operator);
 * `now()`, the wall clock, is only for timestamps written into objects and compared with timestamps read from
 * them (conditions, lifecycle annotations).
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Wall clock, epoch milliseconds: only for timestamps written into (or read from) objects. */
  now(): number;
  /** Milliseconds from an arbitrary origin, never going backwards: every duration is measured on it. */
  monotonicNow(): number;
  /** Run `fn` once after `ms` milliseconds of monotonic time (negative or NaN treated as 0). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

/** The name the lease code uses for a Clock: it relies on the monotonic part. */
export type MonotonicClock = Clock;

function sanitizeDelay(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** Node's maximum timer delay (2^31-1 ms); longer delays are chained. */
const MAX_TIMER_MS = 2_147_483_647;

export const systemClock: MonotonicClock = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  setTimeout(fn: () => void, ms: number): TimerHandle {
    // Monotonic: a wall clock step must neither fire a timer early nor hold it back.
    const deadline = performance.now() + sanitizeDelay(ms);
    let cancelled = false;
    let handle: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      const remaining = deadline - performance.now();
      if (remaining > MAX_TIMER_MS) {
        handle = setTimeout(arm, MAX_TIMER_MS);
      } else {
        handle = setTimeout(
          () => {
            if (!cancelled) fn();
          },
          Math.max(0, remaining),
        );
      }
      handle.unref?.();
    };
    arm();
    return {
      cancel(): void {
        cancelled = true;
        if (handle !== undefined) clearTimeout(handle);
      },
    };
  },
};

/** Resolves after `ms` on `clock`, or as soon as `signal` aborts (never rejects). */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

interface FakeTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * Deterministic clock for tests. Timers fire only from `advance`/`set`, in (due time, creation order) order;
 * `now()` during a callback equals that timer's due time. Timers created by a callback that fall due within the
 * same advance also fire. `stepWall` moves only the wall part (`now()`), as an NTP step would: monotonic time
 * and timers are unaffected.
 */
export class FakeClock implements MonotonicClock {
  #now: number;
  #wallOffset = 0;
  #seq = 0;
  #timers: FakeTimer[] = [];

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  monotonicNow(): number {
    return this.#now;
  }

  /** Step the wall clock by `ms` (may be negative) without moving monotonic time or firing timers. */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { id: this.#seq++, at: this.#now + sanitizeDelay(ms), fn, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: (): void => {
        timer.cancelled = true;
        this.#timers = this.#timers.filter((t) => t !== timer);
      },
    };
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    this.set(this.#now + sanitizeDelay(ms));
  }

  /** Jump to absolute time `ms`. Jumping backwards only moves `now()` (no timer fires). */
  set(ms: number): void {
    const target = ms;
    for (;;) {
      const next = this.#nextDue(target);
      if (next === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      if (next.at > this.#now) this.#now = next.at;
      if (!next.cancelled) next.fn();
    }
    this.#now = target;
  }

  /** Number of pending timers (for assertions). */
  pendingTimers(): number {
    return this.#timers.length;
  }

  #nextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers) {
      if (t.at > limit) continue;
      if (best === undefined || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  }
}
