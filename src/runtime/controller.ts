/**
 * The controller worker loop: N workers take keys from a WorkQueue and call `reconcile(key)`.
 *
 * `#reconcileOnce` (with `#handleError` for a thrown error) is the one place where a reconcile outcome becomes a
 * queue operation (controller-runtime `reconcileHandler`):
 * - thrown `TerminalError` → `forget`, no requeue (retrying cannot help; the reconciler reports it);
 * - any other thrown error → `addRateLimited` (per-key exponential backoff and global bucket), at least the
 *   server's Retry-After when the error is an ApiError that carries one (`retryAfterSeconds`, e.g. a 429);
 * - `requeueAfterMs > 0` → `forget` + `addAfter`;
 * - otherwise → `forget`.
 * Reconcile is key-only and level-triggered: the reason for a reconcile is never passed in.
 */
import type { Logger } from 'pino';
import { ApiError, errorText } from '../kube/api-error.ts';
import type { Clock } from './clock.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { WorkQueue, type Priority, type WorkQueueMetrics } from './workqueue.ts';

/** `{}` = done; `requeueAfterMs` = look again after that delay even if nothing changes. */
export type ReconcileResult = { readonly requeueAfterMs?: number };

/** A failure that retrying cannot fix (e.g. an invalid selector): logged, never requeued. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export interface ControllerOptions {
  readonly name: string;
  readonly workers: number;
  readonly reconcile: (key: string) => Promise<ReconcileResult>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly rateLimiter?: RateLimiter;
  readonly metrics?: ControllerMetrics;
}

/** controller-runtime's `result` label of controller_runtime_reconcile_total. */
export type ReconcileResultLabel = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * What controller-runtime's reconcileHandler reports (pkg/internal/controller/metrics), pushed as it happens; the
 * active workers are read when scraped (`stats`).
 */
export interface ControllerMetrics {
  readonly queue: WorkQueueMetrics;
  /**
   * One reconcile ended. `error`: `terminal` for a TerminalError (not retried), `panic` for a programming error
   * (a TypeError, RangeError or ReferenceError, or a thrown non-Error: what would be a panic in Go).
   */
  reconciled(result: ReconcileResultLabel, seconds: number, error?: 'terminal' | 'panic'): void;
}

export type ReconcileOutcome = 'success' | 'requeue_after' | 'error' | 'terminal_error';

/** Plain counters, read by the metrics endpoint. */
export interface ControllerStats {
  readonly reconcilesTotal: number;
  readonly reconcileErrorsTotal: number;
  readonly reconcilesByOutcome: Readonly<Record<ReconcileOutcome, number>>;
  readonly reconcileTimeMsTotal: number;
  readonly activeWorkers: number;
  readonly queueDepth: number;
  readonly queueAddsTotal: number;
  readonly queueRetriesTotal: number;
  readonly unfinishedWorkSeconds: number;
  readonly longestRunningProcessorSeconds: number;
}

/** Go's panics have no JavaScript twin; these are the thrown values that only a bug produces. */
function isProgrammingError(e: unknown): boolean {
  return !(e instanceof Error) || e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError;
}

/**
 * The server's Retry-After of an API error (`details.retryAfterSeconds` of its Status), in ms, when positive.
 */
export function retryAfterMsOf(e: unknown): number | undefined {
  if (!(e instanceof ApiError) || e.retryAfterSeconds === undefined) return undefined;
  const v = e.retryAfterSeconds * 1000;
  return v > 0 && Number.isFinite(v) ? v : undefined;
}

export class Controller {
  readonly name: string;
  readonly #workers: number;
  readonly #reconcile: (key: string) => Promise<ReconcileResult>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #queue: WorkQueue;
  readonly #metrics: ControllerMetrics | undefined;
  #running = false;
  #active = 0;
  #timeMsTotal = 0;
  readonly #byOutcome: Record<ReconcileOutcome, number> = { success: 0, requeue_after: 0, error: 0, terminal_error: 0 };

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.#workers = Math.max(1, Math.floor(opts.workers));
    this.#reconcile = opts.reconcile;
    this.#clock = opts.clock;
    this.#logger = opts.logger.child({ controller: opts.name });
    this.#metrics = opts.metrics;
    this.#queue = new WorkQueue({
      clock: opts.clock,
      ...(opts.rateLimiter !== undefined ? { rateLimiter: opts.rateLimiter } : {}),
      ...(opts.metrics !== undefined ? { metrics: opts.metrics.queue } : {}),
    });
  }

  /** `progress`: the key's objects moved on work under way, and its pass goes before new work (workqueue.ts Priority). */
  enqueue(key: string, priority: Priority = 'normal'): void {
    this.#queue.add(key, priority);
  }

  enqueueAfter(key: string, ms: number, priority: Priority = 'normal'): void {
    this.#queue.addAfter(key, ms, priority);
  }

  numRequeues(key: string): number {
    return this.#queue.numRequeues(key);
  }

  stats(): ControllerStats {
    const o = this.#byOutcome;
    const unfinished = this.#queue.unfinishedWork();
    return {
      reconcilesTotal: o.success + o.requeue_after + o.error + o.terminal_error,
      reconcileErrorsTotal: o.error + o.terminal_error,
      reconcilesByOutcome: { ...o },
      reconcileTimeMsTotal: this.#timeMsTotal,
      activeWorkers: this.#active,
      queueDepth: this.#queue.len(),
      queueAddsTotal: this.#queue.addsTotal,
      queueRetriesTotal: this.#queue.retriesTotal,
      unfinishedWorkSeconds: unfinished.totalSeconds,
      longestRunningProcessorSeconds: unfinished.longestSeconds,
    };
  }

  /**
   * Start the workers (call after the caches have synced). On abort the queue shuts down without draining
   * (queued keys are dropped; the next leader re-lists); resolves once in-flight reconciles have finished.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`controller ${this.name} is already running`);
    this.#running = true;
    const stop = (): void => void this.#queue.shutDown();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    this.#logger.info({ workers: this.#workers }, 'starting workers');
    try {
      await Promise.all(Array.from({ length: this.#workers }, () => this.#worker()));
    } finally {
      signal.removeEventListener('abort', stop);
      this.#logger.info('all workers stopped');
    }
  }

  async #worker(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      this.#active++;
      const start = this.#clock.monotonicNow();
      try {
        await this.#reconcileOnce(key);
      } finally {
        this.#timeMsTotal += Math.max(0, this.#clock.monotonicNow() - start);
        this.#active--;
        this.#queue.done(key);
      }
    }
  }

  async #reconcileOnce(key: string): Promise<void> {
    const start = this.#clock.monotonicNow();
    const seconds = (): number => Math.max(0, this.#clock.monotonicNow() - start) / 1000;
    let result: ReconcileResult;
    try {
      result = await this.#reconcile(key);
    } catch (e: unknown) {
      this.#metrics?.reconciled('error', seconds(), e instanceof TerminalError ? 'terminal' : isProgrammingError(e) ? 'panic' : undefined);
      this.#handleError(key, e);
      return;
    }
    const after = result.requeueAfterMs;
    this.#queue.forget(key);
    if (after !== undefined && after > 0 && Number.isFinite(after)) {
      this.#byOutcome.requeue_after++;
      this.#metrics?.reconciled('requeue_after', seconds());
      this.#queue.addAfter(key, after);
    } else {
      this.#byOutcome.success++;
      this.#metrics?.reconciled('success', seconds());
    }
  }

  #handleError(key: string, e: unknown): void {
    if (e instanceof TerminalError) {
      this.#byOutcome.terminal_error++;
      this.#queue.forget(key);
      this.#logger.error({ key, error: errorText(e) }, 'reconciler error (terminal, not requeued)');
      return;
    }
    this.#byOutcome.error++;
    const retryAfterMs = retryAfterMsOf(e);
    this.#queue.addRateLimited(key, retryAfterMs ?? 0);
    this.#logger.error({ key, error: errorText(e), requeues: this.#queue.numRequeues(key), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }, 'reconciler error');
  }
}
