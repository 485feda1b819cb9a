/**
 * Expectations: what this process has written but its informer cache has not shown yet (docs/features.md#expectations; Kruise pkg/util/expectations/scale_expectations.go).
 *
 * Why: the cache lags behind our own writes. Without expectations the next reconcile would see too few pods
 * (after creates) or too many (after deletes) and create duplicates or delete too much; after a patch it
 * would act on the stale cached copy again.
 *
 * - `ScaleExpectations` (docs/features.md#expectations; Kruise pkg/util/expectations/scale_expectations.go) — name-based, per CloneSet key: the names of pods/PVCs we are creating or
 *   deleting. Register with `expect` BEFORE the write; `observe` when the informer shows the create/delete,
 *   or at once when the write failed or was never attempted. The entry disappears when every set is empty.
 * - `ResourceVersionExpectations` (docs/features.md#expectations; Kruise pkg/util/expectations/resource_version_expectation.go) — per object uid: the resourceVersion our last write returned.
 *
 * "Unsatisfied since" is set by the first check that finds an entry unsatisfied (not by `expect`), and lives as
 * long as the entry. It is monotonic time (Kruise's `time.Since` is monotonic too): a wall-clock step (NTP, a VM
 * resumed) never expires every pending expectation at once.
 *
 * GUARANTEE BEYOND KRUISE (kruise#1765): Kruise can wedge a CloneSet forever when an expectation leaks (a
 * create whose watch event never arrives, a name observed under a different action…): without the
 * ForceDeleteTimeoutExpectation gate it stops reconciling that CloneSet until some unrelated event clears the
 * expectation. Here every expectation has a TTL (default 5 min, Kruise's `--expectation-timeout`): once an
 * entry has been unsatisfied for at least the TTL, `check`/`isSatisfied` report `timedOut: true` and the
 * CALLER drops it (`forget`) and re-plans from the cache. The worst case after a leak is one decision made on
 * a cache that is TTL-old — far better than a CloneSet that never converges. The modules never drop an entry
 * on their own, so the caller can count the leak (metric `cloneset_scale_expectation_leakage`) and log it.
 *
 * Process-local and in-memory: lost on restart. Nothing depends on them surviving: a new process registers none
 * before its first write, and its first reconcile of each CloneSet plans from the freshly listed cache, which
 * already holds every pod the old process created (docs/features.md#reconcile-pass).
 */
import type { Clock } from './clock.ts';

export const DEFAULT_EXPECTATION_TTL_MS = 5 * 60_000;

export type ScaleAction = 'create' | 'delete';
export type ScaleKind = 'pod' | 'pvc' | 'revision';

export type ExpectationCheck =
  | { readonly satisfied: true }
  | {
      readonly satisfied: false;
      /** Time since the first check that found it unsatisfied. */
      readonly pendingForMs: number;
      /** `max(0, ttl − pendingForMs)`: how long to wait before re-checking (Kruise requeues after T − d). */
      readonly remainingMs: number;
      /** Unsatisfied for at least the TTL: the caller should `forget` it and re-plan from the cache. */
      readonly timedOut: boolean;
    };

const SATISFIED: ExpectationCheck = { satisfied: true };

function unsatisfied(since: number, now: number, ttlMs: number): ExpectationCheck {
  const pendingForMs = Math.max(0, now - since);
  return { satisfied: false, pendingForMs, remainingMs: Math.max(0, ttlMs - pendingForMs), timedOut: pendingForMs >= ttlMs };
}

interface ScaleEntry {
  /** Members are `${kind}/${name}` so that a pod and a PVC of the same name never cancel out. */
  readonly create: Set<string>;
  readonly delete: Set<string>;
  unsatisfiedSince: number | undefined;
}

export class ScaleExpectations {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, ScaleEntry>();

  constructor(clock: Clock, ttlMs: number = DEFAULT_EXPECTATION_TTL_MS) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  expect(key: string, action: ScaleAction, name: string, kind: ScaleKind = 'pod'): void {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { create: new Set(), delete: new Set(), unsatisfiedSince: undefined };
      this.#entries.set(key, entry);
    }
    entry[action].add(`${kind}/${name}`);
  }

  observe(key: string, action: ScaleAction, name: string, kind: ScaleKind = 'pod'): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry[action].delete(`${kind}/${name}`);
    if (entry.create.size === 0 && entry.delete.size === 0) this.#entries.delete(key);
  }

  check(key: string): ExpectationCheck {
    const entry = this.#entries.get(key);
    if (entry === undefined) return SATISFIED;
    if (entry.create.size === 0 && entry.delete.size === 0) {
      this.#entries.delete(key);
      return SATISFIED;
    }
    const now = this.#clock.monotonicNow();
    entry.unsatisfiedSince ??= now;
    return unsatisfied(entry.unsatisfiedSince, now, this.#ttlMs);
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** Pending `kind/name`s per action, for logs and tests. */
  pending(key: string): { readonly create: readonly string[]; readonly delete: readonly string[] } {
    const entry = this.#entries.get(key);
    return { create: [...(entry?.create ?? [])].sort(), delete: [...(entry?.delete ?? [])].sort() };
  }
}

/**
 * THE resourceVersion comparison (Kruise `isResourceVersionNewer(reference, candidate)`), kept in one place
 * because Kubernetes documents resourceVersions as opaque strings. Assumption, as in Kruise: the API server is
 * backed by etcd, whose resourceVersions are decimal unsigned 64-bit revision numbers (compared exactly with
 * BigInt, not as doubles). Rules:
 * - `reference` empty or not a uint64 → true (nothing comparable to wait for; a stored non-numeric
 *   expectation is always replaced);
 * - `candidate` not a uint64 (while `reference` is) → false (never counts as newer);
 * - otherwise `candidate >= reference` numerically.
 */
export function isResourceVersionAtLeast(candidate: string, reference: string): boolean {
  const ref = parseUint64(reference);
  if (ref === undefined) return true;
  const cand = parseUint64(candidate);
  if (cand === undefined) return false;
  return cand >= ref;
}

const UINT64_MAX = (1n << 64n) - 1n;

/** Go `strconv.ParseUint(s, 10, 64)`: decimal digits only, no sign, at most 2^64 − 1. */
function parseUint64(s: string): bigint | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v <= UINT64_MAX ? v : undefined;
}

interface RvEntry {
  rv: string;
  /** Monotonic time of the write the entry waits for: the timeout counts from it. */
  writtenAt: number;
}

export class ResourceVersionExpectations {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, RvEntry>();

  constructor(clock: Clock, ttlMs: number = DEFAULT_EXPECTATION_TTL_MS) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /**
   * Remember `max(expected, rv)` for `uid` (after a successful write, with the RV the server returned). The
   * timeout counts from the write, not from the first check that finds it unmet (Kruise's way): a pass that the
   * scale expectations hold back checks no resourceVersion, so after an etcd restore undid both kinds of writes
   * the resourceVersion ones only began to time out once the scale ones had — 5 min, then 5 min more (simulation
   * seed 5325).
   */
  expect(uid: string, rv: string): void {
    const now = this.#clock.monotonicNow();
    const entry = this.#entries.get(uid);
    if (entry === undefined) this.#entries.set(uid, { rv, writtenAt: now });
    else if (isResourceVersionAtLeast(rv, entry.rv)) {
      entry.rv = rv;
      entry.writtenAt = now;
    }
  }

  /** The cache shows `rv` for `uid`: drop the expectation if it is reached. */
  observe(uid: string, rv: string): void {
    const entry = this.#entries.get(uid);
    if (entry !== undefined && isResourceVersionAtLeast(rv, entry.rv)) this.#entries.delete(uid);
  }

  /** Whether the cached `rv` for `uid` is at least what we wrote; no entry → satisfied. */
  isSatisfied(uid: string, rv: string): ExpectationCheck {
    const entry = this.#entries.get(uid);
    if (entry === undefined) return SATISFIED;
    if (isResourceVersionAtLeast(rv, entry.rv)) {
      this.#entries.delete(uid);
      return SATISFIED;
    }
    return unsatisfied(entry.writtenAt, this.#clock.monotonicNow(), this.#ttlMs);
  }

  forget(uid: string): void {
    this.#entries.delete(uid);
  }
}
