/**
 * A rate-limited, delaying work queue of string keys with client-go semantics (`util/workqueue`).
 *
 * Guarantees:
 * - `add` dedupes: a key waiting in the queue is queued once however often it is added (the dirty set).
 * - A key is handed to at most one worker at a time: a key re-added while it is being processed is only
 *   marked dirty, and re-queued when its worker calls `done` (the processing set).
 * - Two lanes (`Priority`): keys come out in FIFO order of their first add since they were last handed out within a
 *   lane, and `progress` keys before `normal` ones, but never more than PROGRESS_RUN of them in a row while a
 *   `normal` key waits, so neither lane starves. A `normal` key added again as `progress` moves up; never down.
 *   client-go's queue has one FIFO; controller-runtime's priority queue (`UsePriorityQueue`) has priorities too.
 * - `addAfter` uses the injected Clock; when a key is already waiting, the earliest ready time wins (and the
 *   higher lane of the two adds).
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

/**
 * The lane of a key. `progress`: the key's objects moved on work already under way (a CloneSet's pods were
 * scheduled, became Ready, ...), so its pass finishes work instead of starting more: one pass may make dozens of
 * pods Ready. `normal`: everything else (a new or changed object, a requeue, a resync). In a fleet of CloneSets
 * created at once, one FIFO put the pass that writes a CloneSet's scheduled pods' readiness behind every other
 * CloneSet's first, creating pass: with 10 000 pods in 100 CloneSets, 696 were Ready when all 10 000 existed
 * (docs/performance.md, "The progress lane").
 */
export type Priority = 'progress' | 'normal';

/** At most this many `progress` keys are handed out in a row while a `normal` key waits. */
export const PROGRESS_RUN = 3;

interface Waiting {
  readonly at: number;
  readonly timer: TimerHandle;
  priority: Priority;
}

/** A FIFO of keys with a moving head (shift() on a large array is linear). */
class Lane {
  #keys: string[] = [];
  #head = 0;

  push(key: string): void {
    this.#keys.push(key);
  }

  /** The next key, or undefined when empty. Entries may be stale (the key moved lanes): the caller checks. */
  shift(): string | undefined {
    if (this.#head >= this.#keys.length) return undefined;
    const key = this.#keys[this.#head];
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#keys.length) {
      this.#keys = this.#keys.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }

  clear(): void {
    this.#keys = [];
    this.#head = 0;
  }
}

export class WorkQueue {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #progress = new Lane();
  readonly #normal = new Lane();
  /** The lane of each key waiting to be handed out (an entry of the other lane for it is stale). */
  readonly #queued = new Map<string, Priority>();
  /** The lane a key dirty while in flight goes back to when its worker is done. */
  readonly #requeueLane = new Map<string, Priority>();
  /** `progress` keys handed out in a row while a `normal` one waited. */
  #progressRun = 0;
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

  add(key: string, priority: Priority = 'normal'): void {
    if (this.#shuttingDown) return;
    if (this.#dirty.has(key)) {
      if (priority !== 'progress') return;
      // Moves up: a queued key to the progress lane (its normal entry becomes stale), an in-flight one for its requeue.
      if (this.#queued.get(key) === 'normal') {
        this.#queued.set(key, 'progress');
        this.#progress.push(key);
      } else if (this.#processing.has(key)) this.#requeueLane.set(key, 'progress');
      return;
    }
    this.#dirty.add(key);
    // client-go counts an add when the key becomes dirty, also while a worker holds it.
    this.#metrics?.added();
    if (this.#metrics !== undefined) this.#addedAt.set(key, this.#clock.monotonicNow());
    if (this.#processing.has(key)) {
      this.#requeueLane.set(key, priority); // re-queued by done()
      return;
    }
    this.#push(key, priority);
  }

  addAfter(key: string, ms: number, priority: Priority = 'normal'): void {
    if (this.#shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key, priority);
      return;
    }
    const at = this.#clock.monotonicNow() + ms;
    const existing = this.#waiting.get(key);
    if (existing !== undefined) {
      if (priority === 'progress') existing.priority = 'progress';
      if (existing.at <= at) return;
      existing.timer.cancel();
    }
    const waiting: Waiting = {
      at,
      timer: this.#clock.setTimeout(() => {
        this.#waiting.delete(key);
        this.add(key, waiting.priority);
      }, ms),
      // The higher lane of this add and the one it replaces (set above when this one is progress).
      priority: existing?.priority ?? priority,
    };
    this.#waiting.set(key, waiting);
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
    const requeueAs = this.#requeueLane.get(key) ?? 'normal';
    this.#requeueLane.delete(key);
    if (this.#dirty.has(key)) {
      if (!this.#shuttingDown || this.#drain) this.#push(key, requeueAs);
      else {
        this.#dirty.delete(key);
        this.#addedAt.delete(key);
      }
    }
    this.#checkIdle();
  }

  /** Keys waiting to be handed out (not counting delayed or in-flight keys). */
  len(): number {
    return this.#queued.size;
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
        for (const key of this.#queued.keys()) {
          this.#dirty.delete(key);
          this.#addedAt.delete(key);
        }
        this.#queued.clear();
        this.#progress.clear();
        this.#normal.clear();
      }
    }
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#checkIdle();
    return idle;
  }

  #push(key: string, priority: Priority): void {
    this.#addsTotal++;
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#handOut(key);
      getter(key);
      return;
    }
    this.#queued.set(key, priority);
    (priority === 'progress' ? this.#progress : this.#normal).push(key);
  }

  /** The next key of that lane, skipping the entries of keys that moved to the other lane. */
  #shift(lane: Lane, priority: Priority): string | undefined {
    for (;;) {
      const key = lane.shift();
      if (key === undefined || this.#queued.get(key) === priority) return key;
    }
  }

  #take(): string | undefined {
    if (this.#queued.size === 0) return undefined;
    let key: string | undefined;
    if (this.#progressRun < PROGRESS_RUN) key = this.#shift(this.#progress, 'progress');
    if (key !== undefined) {
      this.#progressRun++;
    } else {
      key = this.#shift(this.#normal, 'normal') ?? this.#shift(this.#progress, 'progress');
      this.#progressRun = 0;
    }
    if (key === undefined) return undefined;
    this.#queued.delete(key);
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
