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
 * - Acquire: retry every `retryPeriodMs` (+ jitter up to 1.2×) until acquired or aborted. When the port can
 *   watch, a standby also WATCHES the Lease while it campaigns: every event is an observation like a GET (one
 *   rule, `#observe`), so the local observation time follows each renewal within the watch latency instead of
 *   up to 2.2 retry periods late, and the sleep between attempts ends when the observed record expires (plus
 *   a few ms) or at once when the watch shows the lease released or deleted. Takeover after a leader died thus
 *   happens ≈ lease duration after its last renewal; client-go only polls, so its standbys take over up to
 *   2 × 2.2 retry periods later (one late observation, one late poll). Without a watch (port without one, or
 *   the watch failing) the polling alone still works as before.
 * - Requests: the leader renews with one PUT from the resourceVersion it wrote last and reads only after that
 *   fails (client-go's fast path); a standby whose watch shows another holder's record, not yet expired, sends
 *   nothing at all (a GET would read the same record); it polls again when that record expires or once a GET
 *   shows a record the watch did not (a quiet, half-open watch), until the watch delivers again.
 * - Renew: every `retryPeriodMs`; if no renewal succeeds within `renewDeadlineMs` of the start of the last
 *   successful one, or the Lease names another holder, leadership is lost —
 *   the leading signal aborts (fencing the controller's client) and `onStoppedLeading('lost')` runs (the
 *   caller then exits at once, like controller-runtime).
 * - On abort of `run` while leading: `drain()` runs while renewals CONTINUE (in-flight work finishes as the
 *   leader), then the leading signal aborts and the Lease is released (holder "", duration 1 s) so a
 *   successor takes over at once (its watch wakes it; a polling one at its next retry) instead of waiting for
 *   expiry.
 * Defaults follow controller-runtime: lease 15 s, renew deadline 10 s, retry 2 s.
 */
import type { Logger } from 'pino';
import { ApiError } from '../kube/api-error.ts';
import { rfc3339Micro } from '../kube/time.ts';
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

export type LeaseGetResult = { readonly kind: 'found'; readonly lease: Lease } | { readonly kind: 'notFound' } | { readonly kind: 'error'; readonly error: unknown };

/** `conflict`: stale resourceVersion on update, or AlreadyExists on create — someone else wrote first. */
export type LeaseWriteResult = { readonly kind: 'ok'; readonly lease: Lease } | { readonly kind: 'conflict' } | { readonly kind: 'error'; readonly error: unknown };

/** What a Lease watch reports: the record as now stored, its deletion, or a bookmark (no change). */
export type LeaseWatchEvent =
  | { readonly kind: 'changed'; readonly lease: Lease }
  | { readonly kind: 'deleted'; readonly resourceVersion?: string }
  | { readonly kind: 'bookmark'; readonly resourceVersion: string };

/** `signal` aborts the call (its timeout); the port then answers `error`. */
export interface LeasePort {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<LeaseGetResult>;
  create(namespace: string, lease: Lease, signal?: AbortSignal): Promise<LeaseWriteResult>;
  update(namespace: string, name: string, lease: Lease, signal?: AbortSignal): Promise<LeaseWriteResult>;
  /**
   * Optional: stream the changes of the Lease `name` after `resourceVersion` to `onEvent`. Resolves when the
   * stream ends normally or `signal` aborts (the caller resumes from the last resourceVersion); rejects on any
   * error (410 Gone included; an ERROR event is one), after which the caller GETs the Lease again.
   */
  watch?(namespace: string, name: string, resourceVersion: string, onEvent: (e: LeaseWatchEvent) => void, signal: AbortSignal): Promise<void>;
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
/** Woken at the observed expiry, a standby waits this much more so that the check `observedAt + duration > now` is past. */
const EXPIRY_MARGIN_MS = 5;
/** The Lease watch is re-established after a failure with a backoff doubling from this, capped at the retry period. */
const WATCH_BACKOFF_MS = 250;

function sameSpec(a: LeaseSpec, b: LeaseSpec): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'port' | 'clock' | 'logger'>>;
  readonly #port: LeasePort;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger;
  #observed: LeaseSpec | undefined;
  /** Monotonic time at which `#observed` was first seen unchanged. */
  #observedAt = 0;
  /** resourceVersion of the Lease as the last attempt's GET read it (where the standby's watch starts). */
  #readVersion: string | undefined;
  /** Set by the Lease watch when the lease was released or deleted: the standby's next sleep is skipped. */
  #woken = false;
  /** The standby's Lease watch is open and has delivered an event: the observed record follows every write. */
  #watchLive = false;
  /** Ends the standby's current sleep (set while it sleeps between attempts). */
  #wake: (() => void) | undefined;
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
      namespace: opts.namespace,
      name: opts.name,
      identity: opts.identity,
      leaseDurationMs: opts.leaseDurationMs ?? 15_000,
      renewDeadlineMs: opts.renewDeadlineMs ?? 10_000,
      retryPeriodMs: opts.retryPeriodMs ?? 2_000,
      releaseOnCancel: opts.releaseOnCancel ?? true,
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
   * How long (monotonic ms) a request of ours may still reach the API server: the fence deadline
   * `last renewal + lease duration − safety margin − now`, where the last renewal is the START of the last
   * successful acquire/renew and the safety margin is `lease duration − renew deadline` (5 s with the defaults).
   * A standby cannot take over before it has seen our last record unchanged for a lease duration by its own
   * clock, which started after our renewal did; the margin covers the two clocks running at different rates
   * and the network delay between a request leaving us and reaching the server. ≤ 0 when not leading.
   * Every request of the controller carries it (kube/client.ts `fenced` fence): one that has not been
   * answered by then is aborted, and one not yet sent is never sent.
   */
  fenceRemainingMs(): number {
    if (!this.#leading) return 0;
    return this.#renewedAt + this.#o.renewDeadlineMs - this.#clock.monotonicNow();
  }

  /** The fence deadline has not passed (see fenceRemainingMs): after a long pause it turns false at once. */
  leaseValid(): boolean {
    return this.fenceRemainingMs() > 0;
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
      drained.then(
        () => renewing.abort(),
        () => renewing.abort(),
      );
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
      if (outcome === 'lost')
        this.#logger.error({ renewDeadlineMs: this.#o.renewDeadlineMs }, 'lost leadership: the lease was not renewed within the renew deadline, or another replica holds it');
      else this.#logger.info('released leadership');
      callbacks.onStoppedLeading(outcome === 'lost' ? 'lost' : 'released');
    }
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    const acquiring = new AbortController();
    const onAbort = (): void => acquiring.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let watching = false;
    try {
      let lastHolder: string | undefined;
      while (!signal.aborted) {
        this.#woken = false;
        // A standby whose watch shows another holder's record, not yet expired by its own observation, would only
        // read that record again: it sends nothing until the record expires, is released, or is deleted.
        const needless = this.#watchLive && (this.#untilExpiry() ?? 0) > 0;
        if (!needless && (await this.#tryAcquireOrRenew(this.#o.renewDeadlineMs, signal))) return true;
        const holder = this.#observed?.holderIdentity;
        if (holder !== undefined && holder !== lastHolder && holder !== '') {
          this.#logger.info({ leader: holder }, 'another replica leads; standing by');
          callbacks.onNewLeader?.(holder);
        }
        lastHolder = holder;
        if (!watching) {
          // Only a candidate that has to wait watches (a leader at once costs no extra request), starting from
          // the resourceVersion the attempt read. Not awaited when acquiring ends: a port whose stream ignores
          // the signal (a hung connection) must not hold up leading; late events are dropped.
          watching = true;
          void this.#watchLease(acquiring.signal, this.#readVersion);
        }
        if (this.#woken) continue;
        await this.#standBy(signal);
      }
      return false;
    } finally {
      signal.removeEventListener('abort', onAbort);
      acquiring.abort();
    }
  }

  /**
   * The sleep between two attempts: the jittered retry period (client-go), cut short to the moment the
   * observed record of another holder expires, and ended at once by `#wake` (the watch saw a release or a
   * deletion). Only a FUTURE expiry shortens it: once expired, a failed attempt (API error, lost race) waits the
   * full period, so a failing API server is not polled in a tight loop.
   */
  async #standBy(signal: AbortSignal): Promise<void> {
    const period = this.#o.retryPeriodMs;
    let ms = period + this.#o.random() * JITTER_FACTOR * period;
    const untilExpiry = this.#untilExpiry();
    if (untilExpiry !== undefined && untilExpiry > 0) ms = Math.min(ms, untilExpiry + EXPIRY_MARGIN_MS);
    const woken = new AbortController();
    const onAbort = (): void => woken.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.#wake = () => woken.abort();
    try {
      await sleep(this.#clock, ms, woken.signal);
    } finally {
      this.#wake = undefined;
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Monotonic ms until the observed record of ANOTHER holder counts as expired; undefined if there is none. */
  #untilExpiry(): number | undefined {
    const observed = this.#observed;
    const holder = observed?.holderIdentity ?? '';
    if (observed === undefined || holder === '' || holder === this.#o.identity) return undefined;
    return this.#observedAt + this.#durationMs(observed) - this.#clock.monotonicNow();
  }

  #durationMs(spec: LeaseSpec): number {
    const seconds = spec.leaseDurationSeconds ?? 0;
    return seconds > 0 ? seconds * 1000 : this.#o.leaseDurationMs;
  }

  /**
   * THE observation rule, for GETs and watch events alike (client-go's observedRecord/observedTime): a record
   * that differs from the last one seen restarts the observation clock; the same record seen again does not.
   */
  #observe(spec: LeaseSpec): void {
    const now = this.#clock.monotonicNow();
    this.#lastContact = now;
    if (this.#observed === undefined || !sameSpec(this.#observed, spec)) {
      this.#observed = spec;
      this.#observedAt = now;
    }
  }

  #wakeUp(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /**
   * While campaigning: watch the Lease from the resourceVersion last read (or GET it first), resuming from the
   * last one seen when the stream ends; after an error (410 Gone, a cut connection) GET again after a short
   * backoff; after a 403 stop (polling goes on). Never throws; ends when `stop` aborts. Does nothing if the port
   * cannot watch.
   */
  async #watchLease(stop: AbortSignal, from: string | undefined): Promise<void> {
    const port = this.#port;
    if (port.watch === undefined) return;
    const { namespace, name } = this.#o;
    let resourceVersion = from;
    let failures = 0;
    const backoff = (): Promise<void> => {
      failures++;
      return sleep(this.#clock, Math.min(this.#o.retryPeriodMs, WATCH_BACKOFF_MS * 2 ** (failures - 1)), stop);
    };
    while (!stop.aborted) {
      if (resourceVersion === undefined) {
        const got = await this.#timedGet(stop);
        if (stop.aborted) return;
        if (got.kind !== 'found') {
          // notFound: the acquire loop creates the lease; error: the polls go on meanwhile.
          if (got.kind === 'notFound') this.#lastContact = this.#clock.monotonicNow();
          await backoff();
          continue;
        }
        this.#observe(got.lease.spec);
        resourceVersion = got.lease.metadata.resourceVersion ?? '';
      }
      let events = 0;
      try {
        await port.watch(
          namespace,
          name,
          resourceVersion,
          (e) => {
            if (stop.aborted) return;
            events++;
            failures = 0;
            this.#watchLive = true;
            if (e.kind === 'changed') {
              resourceVersion = e.lease.metadata.resourceVersion ?? resourceVersion;
              this.#observe(e.lease.spec);
              if ((e.lease.spec.holderIdentity ?? '') === '') this.#wakeUp();
            } else if (e.kind === 'deleted') {
              this.#lastContact = this.#clock.monotonicNow();
              // Nobody holds a deleted lease: the next attempt reads and creates it.
              this.#observed = undefined;
              if (e.resourceVersion !== undefined) resourceVersion = e.resourceVersion;
              this.#wakeUp();
            } else {
              this.#lastContact = this.#clock.monotonicNow();
              resourceVersion = e.resourceVersion;
            }
          },
          stop,
        );
        this.#watchLive = false;
        // Ended by the server (its timeout): resume at once, unless it ended without a word (then back off,
        // so a server that closes every watch at once is not hammered).
        if (events === 0 && !stop.aborted) await backoff();
      } catch (e: unknown) {
        this.#watchLive = false;
        if (stop.aborted) return;
        if (e instanceof ApiError && e.reason === 'Forbidden') {
          // A Role from before the watch (get/create/update only): retrying cannot help, polling still works.
          this.#logger.warn(
            { err: e },
            'not allowed to watch the leader Lease, so this standby only polls it and takes over up to ' +
              `${String(Math.round(2 * (1 + JITTER_FACTOR) * this.#o.retryPeriodMs))} ms after it expires; ` +
              'grant "watch" on leases (re-apply config/rbac/leader-election-role.yaml or upgrade the chart)',
          );
          return;
        }
        this.#logger.debug({ err: e }, 'lease watch failed; getting the lease again');
        resourceVersion = undefined;
        await backoff();
      }
    }
  }

  /** A GET for the watch, given up after the renew deadline like every other Lease call. */
  async #timedGet(stop: AbortSignal): Promise<LeaseGetResult> {
    const call = new AbortController();
    const timer = this.#clock.setTimeout(() => call.abort(), this.#o.renewDeadlineMs);
    const onStop = (): void => call.abort();
    stop.addEventListener('abort', onStop, { once: true });
    try {
      const got = this.#port.get(this.#o.namespace, this.#o.name, call.signal);
      return await new Promise<LeaseGetResult>((resolve) => {
        const aborted: LeaseGetResult = { kind: 'error', error: new Error('lease GET timed out') };
        if (call.signal.aborted) return resolve(aborted);
        call.signal.addEventListener('abort', () => resolve(aborted), { once: true });
        got.then(resolve, (error: unknown) => resolve({ kind: 'error', error }));
      });
    } finally {
      timer.cancel();
      stop.removeEventListener('abort', onStop);
    }
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

  /**
   * client-go's `IsLeader() && isLeaseValid(now)`: the record observed last is ours, written by us (so its
   * resourceVersion is the one to renew from), and not older than its duration by our clock.
   */
  #holdsValidLease(last: Lease): boolean {
    const observed = this.#observed;
    const identity = this.#o.identity;
    return (
      observed !== undefined &&
      observed.holderIdentity === identity &&
      last.spec.holderIdentity === identity &&
      last.metadata.resourceVersion !== undefined &&
      this.#observedAt + this.#durationMs(observed) > this.#clock.monotonicNow()
    );
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
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(signal.aborted ? false : v);
        },
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve(false);
        },
      );
    });
  }

  async #attempt(signal: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.monotonicNow();
    try {
      const { namespace, name, identity } = this.#o;
      // client-go's fast path: the leader renews with the record it wrote last, without reading it first; a
      // conflict (someone else wrote) or an error falls back to the GET below. Half the requests of a renewal.
      const last = this.#lastLease;
      if (last !== undefined && this.#holdsValidLease(last)) {
        const spec = this.#spec(this.#clock.now(), undefined, last.spec.leaseTransitions ?? 0, last.spec.acquireTime);
        const renewed = await this.#port.update(namespace, name, this.#lease(spec, last.metadata.resourceVersion), signal);
        if (renewed.kind === 'ok') return this.#record(renewed, signal, startedAt);
        if (renewed.kind === 'conflict') this.#lastContact = this.#clock.monotonicNow();
        else this.#logger.debug({ err: renewed.error }, 'error renewing the lease optimistically; reading it');
        if (signal.aborted) return false;
      }
      const got = await this.#port.get(namespace, name, signal);
      if (got.kind === 'error') {
        this.#logger.debug({ err: got.error }, 'error getting lease');
        return false;
      }
      const wall = this.#clock.now();
      if (got.kind === 'notFound') {
        this.#readVersion = undefined;
        this.#lastContact = this.#clock.monotonicNow();
        const spec = this.#spec(wall, wall, 0);
        return this.#record(await this.#port.create(namespace, this.#lease(spec, undefined), signal), signal, startedAt);
      }
      const old = got.lease.spec;
      // A record the watch did not show: the watch is stalled (a half-open connection); poll until it speaks again.
      if (this.#observed !== undefined && !sameSpec(this.#observed, old)) this.#watchLive = false;
      this.#observe(old);
      this.#readVersion = got.lease.metadata.resourceVersion;
      const holder = old.holderIdentity ?? '';
      if (holder !== '' && holder !== identity && this.#observedAt + this.#durationMs(old) > this.#clock.monotonicNow()) return false;
      const spec = holder === identity ? this.#spec(wall, undefined, old.leaseTransitions ?? 0, old.acquireTime) : this.#spec(wall, wall, (old.leaseTransitions ?? 0) + 1);
      return this.#record(await this.#port.update(namespace, name, this.#lease(spec, got.lease.metadata.resourceVersion), signal), signal, startedAt);
    } catch (e: unknown) {
      this.#logger.debug({ err: e }, 'lease port threw');
      return false;
    }
  }

  #spec(now: number, acquiredAt: number | undefined, transitions: number, keptAcquireTime?: string): LeaseSpec {
    const acquireTime = acquiredAt === undefined ? keptAcquireTime : rfc3339Micro(acquiredAt);
    return {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      ...(acquireTime === undefined ? {} : { acquireTime }),
      renewTime: rfc3339Micro(now),
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
    const now = rfc3339Micro(this.#clock.now());
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
