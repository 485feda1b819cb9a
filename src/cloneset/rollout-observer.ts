// RolloutObserver: what each reconcile pass learned about a CloneSet's rollout, kept for the metrics endpoint and the
// log — why it is blocked and since when, how long rollouts and in-place updates took. Written to by the reconciler
// after it planned; read by the metrics collector (src/cloneset-metrics.ts) when scraped.
//
// Bounded: at most `maxCloneSets` CloneSets get per-CloneSet series (first come; a deleted CloneSet frees its slot),
// and everything about a CloneSet is dropped when the reconciler finds it gone.
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import { CONDITION_INPLACE_UPDATE_READY } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import type { Clock, TimerHandle } from '../runtime/clock.ts';
import { readState, stateAnnotationOf } from './inplace/state.ts';
import { DELIBERATE_HOLDS, isRolledOut, type Blocker, type BlockReason } from './plan/blockers.ts';
import { podCondition, revisionMatches, timestampMs } from './plan/pod-predicates.ts';

/** Where durations go (prom-client histograms in src/cloneset-metrics.ts). */
export interface RolloutMetricsSink {
  rolloutFinished(namespace: string, cloneSet: string, seconds: number): void;
  inPlaceUpdated(namespace: string, cloneSet: string, seconds: number): void;
  /** The CloneSet is gone (or lost its slot): drop its series. */
  forgotten(namespace: string, cloneSet: string): void;
}

export interface RolloutObserverOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sink: RolloutMetricsSink;
  /** --metrics-max-clonesets */
  readonly maxCloneSets: number;
  /** A rollout blocked (for another reason than a pause or a partition) this long is logged as a warning. */
  readonly warnBlockedAfterMs: number;
}

export interface BlockedRollout {
  readonly namespace: string;
  readonly cloneSet: string;
  readonly reason: BlockReason;
  readonly message: string;
  readonly sinceMs: number;
}

export interface PassObservation {
  readonly cloneSet: CloneSet;
  readonly pods: readonly Pod[];
  readonly updateRevision: string;
  /** When the update revision's ControllerRevision was created: a rollout starts then. */
  readonly updateRevisionCreatedMs: number | undefined;
  readonly blockers: readonly Blocker[];
}

interface Held {
  readonly message: string;
  readonly sinceMs: number;
  warned: boolean;
}

interface Tracked {
  readonly namespace: string;
  readonly name: string;
  blocked: Map<BlockReason, Held>;
  /** The update revision of a rollout seen in progress by this process, not yet finished. */
  rollingOut: string | undefined;
  /** uid → the revision whose in-place update was already timed. */
  readonly inPlaceTimed: Map<string, string>;
}

const SWEEP_MS = 30_000;

export class RolloutObserver {
  readonly #o: RolloutObserverOptions;
  readonly #tracked = new Map<string, Tracked>();
  /** Keys refused a slot by the cap (counted for cloneset_metrics_clonesets_omitted). */
  readonly #omitted = new Set<string>();
  /** In-place updates that became ready before this process started were timed by an earlier one. */
  readonly #startedMs: number;
  #sweep: TimerHandle | undefined;

  constructor(o: RolloutObserverOptions) {
    this.#o = o;
    this.#startedMs = o.clock.now();
  }

  /** Keys with per-CloneSet series, for the scrape-time gauges. */
  keys(): Iterable<string> {
    return this.#tracked.keys();
  }

  omitted(): number {
    return this.#omitted.size;
  }

  *blocked(): Iterable<BlockedRollout> {
    for (const t of this.#tracked.values()) {
      for (const [reason, h] of t.blocked) yield { namespace: t.namespace, cloneSet: t.name, reason, message: h.message, sinceMs: h.sinceMs };
    }
  }

  /** One full pass: its blockers replace the previous pass's. */
  observe(key: string, pass: PassObservation): void {
    const t = this.#admit(key, pass.cloneSet);
    if (t === undefined) return;
    const now = this.#o.clock.now();
    const next = new Map<BlockReason, Held>();
    for (const b of pass.blockers) {
      const held = t.blocked.get(b.reason);
      next.set(b.reason, { message: b.message, sinceMs: held?.sinceMs ?? now, warned: held?.warned ?? false });
    }
    this.#logCleared(t, next);
    t.blocked = next;
    this.#timeRollout(t, pass, now);
    this.#timeInPlaceUpdates(t, pass);
    this.#armSweep();
  }

  /** A pass that stopped early waiting for its own writes to show in the cache: the other findings stand. */
  waiting(key: string, reason: BlockReason, message: string): void {
    const t = this.#tracked.get(key);
    if (t === undefined || t.rollingOut === undefined || t.blocked.has(reason)) return;
    t.blocked.set(reason, { message, sinceMs: this.#o.clock.now(), warned: false });
    this.#armSweep();
  }

  /** The CloneSet is gone: its series go too. */
  forget(key: string): void {
    this.#omitted.delete(key);
    const t = this.#tracked.get(key);
    if (t === undefined) return;
    this.#tracked.delete(key);
    this.#o.sink.forgotten(t.namespace, t.name);
  }

  /** A new leadership term recomputes everything. */
  reset(): void {
    for (const key of [...this.#tracked.keys()]) this.forget(key);
    this.#omitted.clear();
    this.#sweep?.cancel();
    this.#sweep = undefined;
  }

  #admit(key: string, cs: CloneSet): Tracked | undefined {
    const known = this.#tracked.get(key);
    if (known !== undefined) return known;
    if (this.#tracked.size >= this.#o.maxCloneSets) {
      this.#omitted.add(key);
      return undefined;
    }
    const t: Tracked = { namespace: cs.metadata.namespace ?? '', name: cs.metadata.name ?? '', blocked: new Map(), rollingOut: undefined, inPlaceTimed: new Map() };
    this.#tracked.set(key, t);
    return t;
  }

  #timeRollout(t: Tracked, pass: PassObservation, now: number): void {
    const done = isRolledOut(pass.cloneSet, pass.pods, pass.updateRevision, now);
    if (!done) {
      t.rollingOut = pass.updateRevision;
      return;
    }
    // Only rollouts this process saw in progress: a restart must not time the finished ones again.
    if (t.rollingOut === pass.updateRevision && pass.updateRevisionCreatedMs !== undefined) {
      this.#o.sink.rolloutFinished(t.namespace, t.name, Math.max(0, now - pass.updateRevisionCreatedMs) / 1000);
    }
    t.rollingOut = undefined;
  }

  /** From the in-place update's start (its state annotation) to the pod being ready again at the new revision. */
  #timeInPlaceUpdates(t: Tracked, pass: PassObservation): void {
    // The pods no longer claimed are dropped from inPlaceTimed: a set of the claimed ones, built only when there is
    // something to drop (a scale-up of fresh pods times nothing and needs no set of every pod each pass).
    const seen = t.inPlaceTimed.size > 0 ? new Set<string>() : undefined;
    for (const pod of pass.pods) {
      const uid = pod.metadata.uid ?? '';
      seen?.add(uid);
      // A pod never updated in place (no state annotation: readState below is undefined), the commonest by far,
      // is passed over before any other lookup.
      if (stateAnnotationOf(pod) === undefined) continue;
      if (t.inPlaceTimed.get(uid) === pass.updateRevision || !revisionMatches(pod, pass.updateRevision)) continue;
      const ready = podCondition(pod, 'Ready');
      const gate = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
      if (ready?.status !== 'True' || (gate !== undefined && gate.status !== 'True')) continue;
      const state = readState(pod);
      if (state === undefined || !state.ok || !pass.updateRevision.endsWith(state.value.revision)) continue;
      t.inPlaceTimed.set(uid, pass.updateRevision);
      const start = timestampMs(state.value.updateTimestamp);
      const end = timestampMs(ready.lastTransitionTime);
      if (start === undefined || end === undefined || end < this.#startedMs || end < start) continue;
      this.#o.sink.inPlaceUpdated(t.namespace, t.name, (end - start) / 1000);
    }
    if (seen !== undefined) for (const uid of t.inPlaceTimed.keys()) if (!seen.has(uid)) t.inPlaceTimed.delete(uid);
  }

  #logCleared(t: Tracked, next: ReadonlyMap<BlockReason, Held>): void {
    for (const [reason, h] of t.blocked) {
      if (h.warned && !next.has(reason)) {
        this.#o.logger.info({ cloneset: `${t.namespace}/${t.name}`, reason, blockedForSeconds: Math.round((this.#o.clock.now() - h.sinceMs) / 1000) }, 'rollout no longer blocked');
      }
    }
  }

  /** Warns once per blocked episode; runs only while some rollout is blocked, so an idle controller has no timer. */
  #armSweep(): void {
    if (this.#sweep !== undefined) return;
    let any = false;
    for (const t of this.#tracked.values()) if (t.blocked.size > 0) any = true;
    if (!any) return;
    this.#sweep = this.#o.clock.setTimeout(
      () => {
        this.#sweep = undefined;
        this.warnLongBlocked();
        this.#armSweep();
      },
      Math.min(SWEEP_MS, this.#o.warnBlockedAfterMs),
    );
  }

  /** Logs a warning for each rollout blocked past the threshold (the sweep calls it; exported for tests). */
  warnLongBlocked(): void {
    const now = this.#o.clock.now();
    for (const t of this.#tracked.values()) {
      for (const [reason, h] of t.blocked) {
        if (h.warned || DELIBERATE_HOLDS.has(reason) || now - h.sinceMs < this.#o.warnBlockedAfterMs) continue;
        h.warned = true;
        this.#o.logger.warn({ cloneset: `${t.namespace}/${t.name}`, reason, blockedForSeconds: Math.round((now - h.sinceMs) / 1000) }, `rollout blocked: ${h.message}`);
      }
    }
  }
}
