/**
 * A rate-limited, delaying work queue of string keys with client-go semantics (`util/workqueue`).
 *
 * Guarantees:
 * - `add` dedupes: a key waiting in the queue is queued once however often it is added (the dirty set).
 * - A key is handed to at most one worker at a time: a key re-added while it is being processed is only
 *   marked dirty, and re-queued when its worker calls `done` (the processing set).
 * - Keys come out in FIFO order of their first add since they were last handed out.
 * - `addAfter` uses the injected Clock; when a key is already waiting, the earliest ready time wins.
 * - After `shutDown` adds and pending `addAfter`s are dropped. Without drain the queued keys are dropped too
 *   (level-triggered: the next process re-lists) and `get()` resolves `undefined` at once; with `drain`
 *   queued keys (and dirty in-flight keys) are still handed out and `get()` resolves `undefined` only when
 *   nothing is queued or in flight. The promise `shutDown` returns resolves when nothing is in flight or queued.
 */
import type { Clock, TimerHandle } from './clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

export interface WorkQueueOptions {
  readonly clock: Clock;
  readonly rateLimiter?: RateLimiter;
  readonly metrics?: WorkQueueMetrics;
}

/**
 * What client-go's workqueue reports to its MetricsProvider (k8s.io/client-go/util/workqueue/metrics.go), pushed
 * as it happens; depth and the in-flight times are read when scraped (`len`, `unfinishedWork`).
 */
export interface WorkQueueMetrics {
  /** A key became dirty (workqueue_adds_total). */
  added(): void;
  /** A rate-limited re-add (workqueue_retries_total). */
  retried(): void;
  /** A key was handed to a worker this long after it was added (workqueue_queue_duration_seconds). */
  queued(seconds: number): void;
  /** A worker finished a key it took this long to process (workqueue_work_duration_seconds). */
  worked(seconds: number): void;
}

/** Work in flight, as workqueue_unfinished_work_seconds and workqueue_longest_running_processor_seconds report it. */
export interface UnfinishedWork {
  readonly totalSeconds: number;
  readonly longestSeconds: number;
}

interface Waiting {
  readonly at: number;
  readonly timer: TimerHandle;
}

export class WorkQueue {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  #queue: string[] = [];
  #head = 0;
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #waiting = new Map<string, Waiting>();
  readonly #getters: ((key: string | undefined) => void)[] = [];
  #shuttingDown = false;
  #drain = false;
  #idleWaiters: (() => void)[] = [];
  #addsTotal = 0;
  #retriesTotal = 0;
  readonly #metrics: WorkQueueMetrics | undefined;
  /** When each dirty key was added (queue latency), and when each in-flight key was handed out (work duration). */
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();

  constructor(opts: WorkQueueOptions) {
    this.#clock = opts.clock;
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter(opts.clock);
    this.#metrics = opts.metrics;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    // client-go counts an add when the key becomes dirty, also while a worker holds it.
    this.#metrics?.added();
    if (this.#metrics !== undefined) this.#addedAt.set(key, this.#clock.monotonicNow());
    if (this.#processing.has(key)) return; // re-queued by done()
    this.#push(key);
  }

  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const at = this.#clock.monotonicNow() + ms;
    const existing = this.#waiting.get(key);
    if (existing !== undefined) {
      if (existing.at <= at) return;
      existing.timer.cancel();
    }
    const timer = this.#clock.setTimeout(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, ms);
    this.#waiting.set(key, { at, timer });
  }

  /** `addAfter(key, max(limiter.when(key), minDelayMs))`; `minDelayMs` honours a server's Retry-After. */
  addRateLimited(key: string, minDelayMs = 0): void {
    if (this.#shuttingDown) return;
    this.#retriesTotal++;
    this.#metrics?.retried();
    this.addAfter(key, Math.max(this.#limiter.when(key), minDelayMs));
  }

  forget(key: string): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiter.numRequeues(key);
  }

  /** Resolves with the next key (now marked as processing), or `undefined` once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.#take();
    if (key !== undefined) return Promise.resolve(key);
    if (this.#finished()) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** The worker finished `key`; if it was re-added meanwhile it goes back into the queue. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    const started = this.#startedAt.get(key);
    if (started !== undefined) {
      this.#startedAt.delete(key);
      this.#metrics?.worked(Math.max(0, this.#clock.monotonicNow() - started) / 1000);
    }
    if (this.#dirty.has(key)) {
      if (!this.#shuttingDown || this.#drain) this.#push(key);
      else {
        this.#dirty.delete(key);
        this.#addedAt.delete(key);
      }
    }
    this.#checkIdle();
  }

  /** Keys waiting to be handed out (not counting delayed or in-flight keys). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /** Keys actually enqueued (after dedupe), for metrics. */
  get addsTotal(): number {
    return this.#addsTotal;
  }

  /** Rate-limited re-adds, for metrics. */
  get retriesTotal(): number {
    return this.#retriesTotal;
  }

  /** Time spent so far on the keys workers hold now. */
  unfinishedWork(): UnfinishedWork {
    const now = this.#clock.monotonicNow();
    let totalMs = 0;
    let longestMs = 0;
    for (const at of this.#startedAt.values()) {
      const ms = Math.max(0, now - at);
      totalMs += ms;
      longestMs = Math.max(longestMs, ms);
    }
    return { totalSeconds: totalMs / 1000, longestSeconds: longestMs / 1000 };
  }

  processingCount(): number {
    return this.#processing.size;
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  shutDown(opts: { drain?: boolean } = {}): Promise<void> {
    if (!this.#shuttingDown) {
      this.#shuttingDown = true;
      this.#drain = opts.drain ?? false;
      for (const w of this.#waiting.values()) w.timer.cancel();
      this.#waiting.clear();
      if (!this.#drain) {
        for (const key of this.#queue.slice(this.#head)) {
          this.#dirty.delete(key);
          this.#addedAt.delete(key);
        }
        this.#queue = [];
        this.#head = 0;
      }
    }
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#checkIdle();
    return idle;
  }

  #push(key: string): void {
    this.#addsTotal++;
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#handOut(key);
      getter(key);
      return;
    }
    this.#queue.push(key);
  }

  #take(): string | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const key = this.#queue[this.#head];
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (key === undefined) return undefined;
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#handOut(key);
    return key;
  }

  #handOut(key: string): void {
    if (this.#metrics === undefined) return;
    const now = this.#clock.monotonicNow();
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) this.#metrics.queued(Math.max(0, now - added) / 1000);
    this.#startedAt.set(key, now);
  }

  /** Shut down and nothing left to hand out (with drain: nothing in flight that could be re-queued either). */
  #finished(): boolean {
    return this.#shuttingDown && this.len() === 0 && (!this.#drain || this.#processing.size === 0);
  }

  #checkIdle(): void {
    if (this.#finished()) for (const g of this.#getters.splice(0)) g(undefined);
    if (!this.#shuttingDown || this.#processing.size > 0 || this.len() > 0) return;
    for (const w of this.#idleWaiters.splice(0)) w();
  }
}
