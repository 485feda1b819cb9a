/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go `tools/leaderelection`).
 *
 * - tryAcquireOrRenew: GET the Lease (create it when missing). Another holder's lease counts as expired only
 *   when THIS process has seen the same record unchanged for `leaseDurationSeconds` (local observation
 *   clock, so clock skew between candidates does not matter). The PUT carries the resourceVersion read,
 *   so a concurrent writer makes it fail with a conflict: at most one candidate wins a race.
 * - Every duration (observation age, renew deadline, retry period, call timeouts) is measured on MONOTONIC
 *   time; the wall clock only writes the Lease's acquireTime/renewTime. client-go measures the observation
 *   age with the wall clock, so a step forward on a standby can make it take a lease that is still held.
 * - Each Lease call carries a signal that aborts it at its timeout, so a hung connection cannot outlive the
 *   renew deadline (the port should use its own client and rate limiter: see leadership.ts).
 * - Acquire: retry every `retryPeriodMs` (+ jitter up to 1.2×) until acquired or aborted.
 * - Renew: every `retryPeriodMs`; if no renewal succeeds within `renewDeadlineMs` of the start of the last
 *   successful one, or the Lease names another holder, leadership is lost —
 *   the leading signal aborts (fencing the controller's client) and `onStoppedLeading('lost')` runs (the
 *   caller then exits at once, like controller-runtime).
 * - On abort of `run` while leading: `drain()` runs while renewals CONTINUE (in-flight work finishes as the
 *   leader), then the leading signal aborts and the Lease is released (holder "", duration 1 s) so a
 *   successor takes over at its next retry instead of waiting for expiry.
 * Defaults follow controller-runtime: lease 15 s, renew deadline 10 s, retry 2 s.
 */
import type { Logger } from 'pino';
import { sleep, type MonotonicClock } from './clock.ts';

export interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

export interface Lease {
  readonly apiVersion: 'coordination.k8s.io/v1';
  readonly kind: 'Lease';
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion?: string };
  readonly spec: LeaseSpec;
}

export type LeaseGetResult =
  | { readonly kind: 'found'; readonly lease: Lease }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'error'; readonly error: unknown };

/** `conflict`: stale resourceVersion on update, or AlreadyExists on create — someone else wrote first. */
export type LeaseWriteResult =
  | { readonly kind: 'ok'; readonly lease: Lease }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'error'; readonly error: unknown };

/** `signal` aborts the call (its timeout); the port then answers `error`. */
export interface LeasePort {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<LeaseGetResult>;
  create(namespace: string, lease: Lease, signal?: AbortSignal): Promise<LeaseWriteResult>;
  update(namespace: string, name: string, lease: Lease, signal?: AbortSignal): Promise<LeaseWriteResult>;
}

export interface LeaderElectorOptions {
  readonly port: LeasePort;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process: `${os.hostname()}_${randomUUID()}`. */
  readonly identity: string;
  readonly clock: MonotonicClock;
  readonly logger: Logger;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly releaseOnCancel?: boolean;
  /** Source of jitter in [0, 1); inject for deterministic tests. */
  readonly random?: () => number;
}

export interface LeaderCallbacks {
  /** Called once leadership is acquired; `leading` aborts when it is lost, or after `drain` on abort of `run`. */
  onStartedLeading(leading: AbortSignal): void;
  /**
   * `run` was aborted while leading: stop taking work and let in-flight work finish (bounded by the caller).
   * Renewals continue meanwhile; if one fails past the renew deadline leadership is lost all the same.
   */
  drain?(): Promise<void>;
  /** Called once after leadership ends; not called if it was never acquired. */
  onStoppedLeading(reason: 'lost' | 'released'): void;
  onNewLeader?(identity: string): void;
}

const JITTER_FACTOR = 1.2;

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function sameSpec(a: LeaseSpec, b: LeaseSpec): boolean {
  return a.holderIdentity === b.holderIdentity && a.leaseDurationSeconds === b.leaseDurationSeconds
    && a.acquireTime === b.acquireTime && a.renewTime === b.renewTime && a.leaseTransitions === b.leaseTransitions;
}

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'port' | 'clock' | 'logger'>>;
  readonly #port: LeasePort;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger;
  #observed: LeaseSpec | undefined;
  /** Monotonic time at which `#observed` was first seen unchanged. */
  #observedAt = 0;
  #lastLease: Lease | undefined;
  #leading = false;
  /** Monotonic time of the last answer from the API server (any answer, even a conflict). */
  #lastContact: number | undefined;
  /** Monotonic time at which the last successful acquire/renew attempt STARTED (what the server saw is newer). */
  #renewedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: LeaderElectorOptions) {
    this.#port = opts.port;
    this.#clock = opts.clock;
    this.#logger = opts.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
    this.#o = {
      namespace: opts.namespace, name: opts.name, identity: opts.identity,
      leaseDurationMs: opts.leaseDurationMs ?? 15_000, renewDeadlineMs: opts.renewDeadlineMs ?? 10_000,
      retryPeriodMs: opts.retryPeriodMs ?? 2_000, releaseOnCancel: opts.releaseOnCancel ?? true,
      random: opts.random ?? Math.random,
    };
    if (!(this.#o.leaseDurationMs > this.#o.renewDeadlineMs && this.#o.renewDeadlineMs > this.#o.retryPeriodMs * JITTER_FACTOR)) {
      // client-go's NewLeaderElector checks the same: otherwise a standby could take over while we still lead.
      throw new Error(
        `leader election: need lease duration (${this.#o.leaseDurationMs}ms) > renew deadline (${this.#o.renewDeadlineMs}ms) > ` +
          `${JITTER_FACTOR} × retry period (${this.#o.retryPeriodMs}ms); adjust --leader-election-lease-duration, ` +
          '--leader-election-renew-deadline or --leader-election-retry-period',
      );
    }
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Leading, and the last successful renewal started less than the renew deadline ago by the monotonic clock.
   * A standby cannot take over before it has seen our last record unchanged for the lease duration, which
   * started after that renewal did, so while this holds no other replica leads. Checked before every write
   * (leadership.ts): after a long pause it turns false at once, before the renew loop has had a chance to run.
   */
  leaseValid(): boolean {
    return this.#leading && this.#clock.monotonicNow() - this.#renewedAt < this.#o.renewDeadlineMs;
  }

  /** The API server answered a Lease call within the last lease duration (readiness of a standby). */
  apiReachable(): boolean {
    return this.#lastContact !== undefined && this.#clock.monotonicNow() - this.#lastContact <= this.#o.leaseDurationMs;
  }

  /** Campaign until aborted; resolves when not (or no longer) leading and `signal` is aborted or leadership lost. */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    const acquired = await this.#acquire(signal, callbacks);
    if (!acquired) return;
    const leading = new AbortController();
    this.#leading = true;
    this.#logger.info('acquired leadership');
    callbacks.onStartedLeading(leading.signal);
    const renewing = new AbortController();
    const onStop = (): void => {
      const drained = callbacks.drain?.() ?? Promise.resolve();
      drained.then(() => renewing.abort(), () => renewing.abort());
    };
    if (signal.aborted) onStop();
    else signal.addEventListener('abort', onStop, { once: true });
    let outcome: 'lost' | 'stopped' = 'lost';
    try {
      outcome = await this.#renewLoop(renewing.signal);
    } finally {
      signal.removeEventListener('abort', onStop);
      this.#leading = false;
      leading.abort();
      if (outcome === 'stopped' && this.#o.releaseOnCancel) await this.#release();
      if (outcome === 'lost') this.#logger.error({ renewDeadlineMs: this.#o.renewDeadlineMs }, 'lost leadership: the lease was not renewed within the renew deadline, or another replica holds it');
      else this.#logger.info('released leadership');
      callbacks.onStoppedLeading(outcome === 'lost' ? 'lost' : 'released');
    }
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    let lastHolder: string | undefined;
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(this.#o.renewDeadlineMs, signal)) return true;
      const holder = this.#observed?.holderIdentity;
      if (holder !== undefined && holder !== lastHolder && holder !== '') {
        this.#logger.info({ leader: holder }, 'another replica leads; standing by');
        callbacks.onNewLeader?.(holder);
      }
      lastHolder = holder;
      const period = this.#o.retryPeriodMs;
      await sleep(this.#clock, period + this.#o.random() * JITTER_FACTOR * period, signal);
    }
    return false;
  }

  /**
   * The deadline counts from the start of the last SUCCESSFUL renewal (client-go counts from the start of each
   * round): after a pause that spanned the sleep between two rounds, a fresh round would otherwise get a fresh
   * 10 s while a successor already leads. Seeing another holder ends leadership at once.
   */
  async #renewLoop(stop: AbortSignal): Promise<'lost' | 'stopped'> {
    const mono = (): number => this.#clock.monotonicNow();
    while (!stop.aborted) {
      const deadline = this.#renewedAt + this.#o.renewDeadlineMs;
      let renewed = false;
      while (!renewed) {
        if (stop.aborted) return 'stopped';
        const left = deadline - mono();
        if (left <= 0) return 'lost';
        renewed = await this.#tryAcquireOrRenew(left, stop);
        if (!renewed) {
          if (mono() >= deadline || this.#heldByOther()) return 'lost';
          await sleep(this.#clock, Math.min(this.#o.retryPeriodMs, deadline - mono()), stop);
        }
      }
      await sleep(this.#clock, this.#o.retryPeriodMs, stop);
    }
    return 'stopped';
  }

  /** One attempt, given up (and its HTTP request aborted) after `timeoutMs` of monotonic time. */
  async #tryAcquireOrRenew(timeoutMs: number, cancel: AbortSignal): Promise<boolean> {
    const call = new AbortController();
    const timer = this.#clock.setTimeout(() => call.abort(), timeoutMs);
    const onCancel = (): void => call.abort();
    cancel.addEventListener('abort', onCancel, { once: true });
    try {
      return await this.#race(this.#attempt(call.signal), call.signal);
    } finally {
      timer.cancel();
      cancel.removeEventListener('abort', onCancel);
    }
  }

  /** The last record read names another holder: someone took the lease over (we must have been paused). */
  #heldByOther(): boolean {
    const holder = this.#observed?.holderIdentity ?? '';
    return holder !== '' && holder !== this.#o.identity;
  }

  /** Resolves false as soon as `signal` aborts, even if the port ignores the signal. */
  #race(p: Promise<boolean>, signal: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => resolve(false);
      if (signal.aborted) return resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => { signal.removeEventListener('abort', onAbort); resolve(signal.aborted ? false : v); },
        () => { signal.removeEventListener('abort', onAbort); resolve(false); },
      );
    });
  }

  async #attempt(signal: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.monotonicNow();
    try {
      const { namespace, name, identity } = this.#o;
      const got = await this.#port.get(namespace, name, signal);
      if (got.kind === 'error') {
        this.#logger.debug({ err: got.error }, 'error getting lease');
        return false;
      }
      this.#lastContact = this.#clock.monotonicNow();
      const mono = this.#clock.monotonicNow();
      const wall = this.#clock.now();
      if (got.kind === 'notFound') {
        const spec = this.#spec(wall, wall, 0);
        return this.#record(await this.#port.create(namespace, this.#lease(spec, undefined), signal), signal, startedAt);
      }
      const old = got.lease.spec;
      if (this.#observed === undefined || !sameSpec(this.#observed, old)) {
        this.#observed = old;
        this.#observedAt = mono;
      }
      const holder = old.holderIdentity ?? '';
      const durationMs = (old.leaseDurationSeconds ?? 0) > 0 ? (old.leaseDurationSeconds ?? 0) * 1000 : this.#o.leaseDurationMs;
      if (holder !== '' && holder !== identity && this.#observedAt + durationMs > mono) return false;
      const spec = holder === identity
        ? this.#spec(wall, undefined, old.leaseTransitions ?? 0, old.acquireTime)
        : this.#spec(wall, wall, (old.leaseTransitions ?? 0) + 1);
      return this.#record(await this.#port.update(namespace, name, this.#lease(spec, got.lease.metadata.resourceVersion), signal), signal, startedAt);
    } catch (e: unknown) {
      this.#logger.debug({ err: e }, 'lease port threw');
      return false;
    }
  }

  #spec(now: number, acquiredAt: number | undefined, transitions: number, keptAcquireTime?: string): LeaseSpec {
    const acquireTime = acquiredAt === undefined ? keptAcquireTime : microTime(acquiredAt);
    return {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      ...(acquireTime === undefined ? {} : { acquireTime }),
      renewTime: microTime(now),
      leaseTransitions: transitions,
    };
  }

  #lease(spec: LeaseSpec, resourceVersion: string | undefined): Lease {
    const metadata = { name: this.#o.name, namespace: this.#o.namespace };
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: resourceVersion === undefined ? metadata : { ...metadata, resourceVersion },
      spec,
    };
  }

  #record(result: LeaseWriteResult, signal: AbortSignal, startedAt: number): boolean {
    if (result.kind !== 'error') this.#lastContact = this.#clock.monotonicNow();
    if (result.kind !== 'ok') {
      if (result.kind === 'error') this.#logger.debug({ err: result.error }, 'error writing lease');
      return false;
    }
    this.#lastLease = result.lease;
    this.#observed = result.lease.spec;
    this.#observedAt = this.#clock.monotonicNow();
    // Written, but past the attempt's timeout: the renew deadline may already have passed; do not count it.
    if (signal.aborted) return false;
    this.#renewedAt = startedAt;
    return true;
  }

  /** client-go `release()`: clear the holder so a successor can take over without waiting for expiry. */
  async #release(): Promise<void> {
    const last = this.#lastLease;
    if (last === undefined || last.spec.holderIdentity !== this.#o.identity) return;
    const now = microTime(this.#clock.now());
    const spec: LeaseSpec = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: last.spec.leaseTransitions ?? 0 };
    const call = new AbortController();
    const timer = this.#clock.setTimeout(() => call.abort(), this.#o.renewDeadlineMs);
    try {
      const attempt = this.#port.update(this.#o.namespace, this.#o.name, this.#lease(spec, last.metadata.resourceVersion), call.signal);
      const r = await new Promise<LeaseWriteResult | undefined>((resolve, reject) => {
        call.signal.addEventListener('abort', () => resolve(undefined), { once: true });
        attempt.then(resolve, reject);
      });
      if (r?.kind === 'ok') this.#lastLease = r.lease;
      else this.#logger.warn({ result: r?.kind ?? 'timeout' }, 'failed to release the lease; the standby takes over when it expires');
    } catch (e: unknown) {
      this.#logger.warn({ err: e }, 'failed to release the lease; the standby takes over when it expires');
    } finally {
      timer.cancel();
    }
  }
}
