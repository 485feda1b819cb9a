/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go `tools/leaderelection`).
 *
 * - tryAcquireOrRenew: GET the Lease (create it when missing). Another holder's lease counts as expired only
 *   when THIS process has seen the same record unchanged for `leaseDurationSeconds` (local observation
 *   clock, so clock skew between candidates does not matter). The PUT carries the resourceVersion read,
 *   so a concurrent writer makes it fail with a conflict: at most one candidate wins a race.
 * - Acquire: retry every `retryPeriodMs` (+ jitter up to 1.2×) until acquired or aborted.
 * - Renew: every `retryPeriodMs`; if no renewal succeeds within `renewDeadlineMs` leadership is lost —
 *   the leading signal aborts and `onStoppedLeading` runs (the caller should then exit: controllers may
 *   still be writing while another replica leads).
 * - On abort while leading the Lease is released (holder "", duration 1 s) so a successor need not wait.
 * Defaults follow controller-runtime: lease 15 s, renew deadline 10 s, retry 2 s.
 */
import type { Logger } from 'pino';
import { sleep, type Clock } from './clock.ts';

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

export interface LeasePort {
  get(namespace: string, name: string): Promise<LeaseGetResult>;
  create(namespace: string, lease: Lease): Promise<LeaseWriteResult>;
  update(namespace: string, name: string, lease: Lease): Promise<LeaseWriteResult>;
}

export interface LeaderElectorOptions {
  readonly port: LeasePort;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process: `${os.hostname()}_${randomUUID()}`. */
  readonly identity: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly releaseOnCancel?: boolean;
  /** Source of jitter in [0, 1); inject for deterministic tests. */
  readonly random?: () => number;
}

export interface LeaderCallbacks {
  /** Called once leadership is acquired; `leading` aborts when it is lost or `run` is aborted. */
  onStartedLeading(leading: AbortSignal): void;
  /** Called once after leadership ends (lost or released); not called if it was never acquired. */
  onStoppedLeading(): void;
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
  readonly #clock: Clock;
  readonly #logger: Logger;
  #observed: LeaseSpec | undefined;
  #observedAt = 0;
  #lastLease: Lease | undefined;
  #leading = false;

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
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** Campaign until aborted; resolves when not (or no longer) leading and `signal` is aborted or leadership lost. */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    const acquired = await this.#acquire(signal, callbacks);
    if (!acquired) return;
    const leading = new AbortController();
    this.#leading = true;
    this.#logger.info('acquired leadership');
    callbacks.onStartedLeading(leading.signal);
    try {
      await this.#renewLoop(signal);
    } finally {
      this.#leading = false;
      leading.abort();
      if (signal.aborted && this.#o.releaseOnCancel) await this.#release();
      this.#logger.info(signal.aborted ? 'released leadership' : 'lost leadership');
      callbacks.onStoppedLeading();
    }
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    let lastHolder: string | undefined;
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew()) return true;
      const holder = this.#observed?.holderIdentity;
      if (holder !== undefined && holder !== lastHolder && holder !== '') callbacks.onNewLeader?.(holder);
      lastHolder = holder;
      const period = this.#o.retryPeriodMs;
      await sleep(this.#clock, period + this.#o.random() * JITTER_FACTOR * period, signal);
    }
    return false;
  }

  async #renewLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const deadline = this.#clock.now() + this.#o.renewDeadlineMs;
      let renewed = false;
      while (!signal.aborted && !renewed) {
        const left = deadline - this.#clock.now();
        if (left <= 0) return;
        renewed = (await this.#withTimeout(this.#tryAcquireOrRenew(), left)) ?? false;
        if (!renewed) {
          if (this.#clock.now() >= deadline) return;
          await sleep(this.#clock, Math.min(this.#o.retryPeriodMs, deadline - this.#clock.now()), signal);
        }
      }
      await sleep(this.#clock, this.#o.retryPeriodMs, signal);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    try {
      const { namespace, name, identity } = this.#o;
      const now = this.#clock.now();
      const got = await this.#port.get(namespace, name);
      if (got.kind === 'error') {
        this.#logger.debug({ err: got.error }, 'error getting lease');
        return false;
      }
      if (got.kind === 'notFound') {
        const spec = this.#spec(now, now, 0);
        return this.#record(await this.#port.create(namespace, this.#lease(spec, undefined)), now);
      }
      const old = got.lease.spec;
      if (this.#observed === undefined || !sameSpec(this.#observed, old)) {
        this.#observed = old;
        this.#observedAt = now;
      }
      const holder = old.holderIdentity ?? '';
      const durationMs = (old.leaseDurationSeconds ?? 0) > 0 ? (old.leaseDurationSeconds ?? 0) * 1000 : this.#o.leaseDurationMs;
      if (holder !== '' && holder !== identity && this.#observedAt + durationMs > now) return false;
      const spec = holder === identity
        ? this.#spec(now, undefined, old.leaseTransitions ?? 0, old.acquireTime)
        : this.#spec(now, now, (old.leaseTransitions ?? 0) + 1);
      return this.#record(await this.#port.update(namespace, name, this.#lease(spec, got.lease.metadata.resourceVersion)), now);
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

  #record(result: LeaseWriteResult, now: number): boolean {
    if (result.kind !== 'ok') {
      if (result.kind === 'error') this.#logger.debug({ err: result.error }, 'error writing lease');
      return false;
    }
    this.#lastLease = result.lease;
    this.#observed = result.lease.spec;
    this.#observedAt = now;
    return true;
  }

  /** client-go `release()`: clear the holder so a successor can take over without waiting for expiry. */
  async #release(): Promise<void> {
    const last = this.#lastLease;
    if (last === undefined || last.spec.holderIdentity !== this.#o.identity) return;
    const now = microTime(this.#clock.now());
    const spec: LeaseSpec = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: last.spec.leaseTransitions ?? 0 };
    try {
      const r = await this.#withTimeout(this.#port.update(this.#o.namespace, this.#o.name, this.#lease(spec, last.metadata.resourceVersion)), this.#o.renewDeadlineMs);
      if (r?.kind === 'ok') this.#lastLease = r.lease;
      else this.#logger.debug({ result: r?.kind ?? 'timeout' }, 'failed to release lease');
    } catch (e: unknown) {
      this.#logger.debug({ err: e }, 'failed to release lease');
    }
  }

  #withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => resolve(undefined), ms);
      p.then(
        (v) => { timer.cancel(); resolve(v); },
        (e: unknown) => { timer.cancel(); reject(e instanceof Error ? e : new Error(String(e))); },
      );
    });
  }
}
