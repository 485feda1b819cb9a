// Pod predicates shared by scaling, updating and status (docs/features.md#short-hash, #scaling, #lifecycle-hooks; Kruise pkg/controller/cloneset/utils/cloneset_utils.go). Pure: the current time is
// always passed in as `nowMs` (epoch milliseconds), never read from the clock; the one costly read of a frozen
// (cached) pod, its Ready time, is remembered per pod object (READY_SINCE), which never changes an answer.
import type { Pod, PodCondition } from '../../kube/types.ts';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH, LABEL_SPECIFIED_DELETE, type LifecycleState } from '../../api/well-known.ts';

const LIFECYCLE_STATES: ReadonlySet<string> = new Set<LifecycleState>(['PreparingNormal', 'Normal', 'PreparingUpdate', 'Updating', 'Updated', 'PreparingDelete']);

/** 0001-01-01T00:00:00Z, Go's zero `time.Time`. */
const GO_ZERO_TIME_MS = -62135596800000;

/**
 * Parses a Kubernetes timestamp to epoch ms; `undefined` for Go's zero time (null, missing, empty, year 1) and
 * for anything unparsable — Go would have decoded those to the zero time as well (or rejected the object).
 */
export function timestampMs(t: string | null | undefined): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const ms = Date.parse(t);
  if (Number.isNaN(ms) || ms === GO_ZERO_TIME_MS) return undefined;
  return ms;
}

/** Kubernetes `IsPodActive`: not Succeeded, not Failed, and not being deleted. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.metadata.deletionTimestamp === undefined;
}

/** The first condition of the given type (Kubernetes looks at the first match only), if any. */
export function podCondition(pod: Pod, type: string): PodCondition | undefined {
  // An indexed loop, not for…of: every pass asks this several times of every pod (readiness, availability,
  // status, refresh), and a cached pod's arrays are frozen (runtime/store.ts), which V8 does not iterate on its
  // fast path: for…of over a frozen array allocates an iterator result per element, half of what a pass over
  // 10 000 pods allocated, and took 1.7× the time of this loop (bench/frozen-iteration.ts; docs/performance.md,
  // "Frozen arrays").
  const conditions = pod.status?.conditions;
  if (conditions === undefined) return undefined;
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    if (c !== undefined && c.type === type) return c;
  }
  return undefined;
}

/** The pod's spec lists a readiness gate of this condition type. */
export function hasReadinessGate(pod: Pod, conditionType: string): boolean {
  // Indexed over a frozen array: see podCondition.
  const gates = pod.spec.readinessGates;
  if (gates === undefined) return false;
  for (let i = 0; i < gates.length; i++) if (gates[i]?.conditionType === conditionType) return true;
  return false;
}

/**
 * The parsed `Ready` lastTransitionTime of frozen pods, by pod object (NaN: none, or Go's zero time). Every pass
 * asks it of every pod several times (replica diff, status, blockers) when minReadySeconds is set, and parsing
 * the date was the largest single cost of a steady pass. Cached pods are deep-frozen and replaced on every
 * change (runtime/store.ts `ingest`), so what is derived from one stays true for as long as the object lives,
 * and the WeakMap lets it go with the object: the planner's only module state, a memo of immutable inputs that
 * never changes an answer. A pod that is not frozen (a test's, one being built) may still change and is read
 * afresh. Only the time is remembered, never whether it is far enough in the past: that depends on `nowMs`.
 */
// biome-ignore lint/plugin: a memo of immutable inputs (frozen pods) by weak keys, see above; never changes an answer
const READY_SINCE = new WeakMap<Pod, number>();

/** When the `Ready` condition last changed (epoch ms); undefined when unknown (see {@link timestampMs}). */
export function readySinceMs(pod: Pod): number | undefined {
  const known = READY_SINCE.get(pod);
  if (known !== undefined) return Number.isNaN(known) ? undefined : known;
  const since = timestampMs(podCondition(pod, 'Ready')?.lastTransitionTime);
  if (Object.isFrozen(pod)) READY_SINCE.set(pod, since ?? Number.NaN);
  return since;
}

/** Kubernetes `IsPodReady`: the `Ready` condition is True (phase is not looked at). */
export function isPodReady(pod: Pod): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/**
 * docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go) `ready(pod, minReady)` (Kruise `IsPodUpdateReady`): phase Running, `Ready` True and — unless
 * minReadySeconds is 0 — Ready since a known time strictly more than minReadySeconds ago, and the
 * `InPlaceUpdateReady` condition absent or True (so a pod being updated in place never counts as ready).
 */
export function isPodReadyFor(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (pod.status?.phase !== 'Running') return false;
  const ready = podCondition(pod, 'Ready');
  if (ready?.status !== 'True') return false;
  if (minReadySeconds !== 0) {
    const since = readySinceMs(pod);
    if (since === undefined || !(since + minReadySeconds * 1000 < nowMs)) return false;
  }
  const inPlace = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return inPlace === undefined || inPlace.status === 'True';
}

/** The raw lifecycle label ('' when missing). */
function lifecycleLabel(pod: Pod): string {
  return pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '';
}

/**
 * True when the lifecycle label is missing, empty or `Normal` — the only states in which a pod may count as
 * available. An unrecognised label value is NOT Normal here (as in Kruise).
 */
export function isLifecycleNormalOrUnset(pod: Pod): boolean {
  const s = lifecycleLabel(pod);
  return s === '' || s === 'Normal';
}

/**
 * The pod's lifecycle state (label `lifecycle.apps.kruise.io/state`), '' when unset. A value that is none of
 * Kruise's six states is also reported as '' — use {@link isLifecycleNormalOrUnset} to decide availability,
 * which (like Kruise) treats such a value as not Normal.
 */
export function lifecycleStateOf(pod: Pod): LifecycleState | '' {
  const s = lifecycleLabel(pod);
  return LIFECYCLE_STATES.has(s) ? (s as LifecycleState) : '';
}

/** docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go) `available(pod)`: lifecycle unset/Normal and ready for minReadySeconds. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  return isLifecycleNormalOrUnset(pod) && isPodReadyFor(pod, minReadySeconds, nowMs);
}

/**
 * docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go) `readyForDelete(pod)`: available with minReadySeconds 0. Deleting such a pod consumes the
 * `deleteReadyLimit` budget; deleting any other pod is free.
 */
export function isReadyForDelete(pod: Pod, nowMs: number): boolean {
  return isPodAvailable(pod, 0, nowMs);
}

/** docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go): label `apps.kruise.io/specified-delete` present (any value) or the name is in podsToDelete. */
export function isSpecifiedDelete(pod: Pod, podsToDelete: readonly string[] | undefined): boolean {
  if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined) return true;
  const name = pod.metadata.name;
  return name !== undefined && (podsToDelete?.includes(name) ?? false);
}

/** The part of a revision name after its last '-' (the whole string when there is none), docs/features.md#short-hash; Kruise pkg/controller/cloneset/utils/cloneset_utils.go. */
export function shortHash(revisionName: string): string {
  return revisionName.slice(revisionName.lastIndexOf('-') + 1);
}

/**
 * docs/features.md#short-hash (Kruise pkg/controller/cloneset/utils/cloneset_utils.go): the pod's `controller-revision-hash` label equals the revision name, or both short hashes are
 * equal — so pods labelled with the full name and with the short hash (gate CloneSetShortHash) match alike.
 */
export function revisionMatches(pod: Pod, revisionName: string): boolean {
  const label = pod.metadata.labels?.[LABEL_REVISION_HASH] ?? '';
  return label === revisionName || sameShortHash(label, revisionName);
}

/** `shortHash(a) === shortHash(b)` without cutting either string (every pass asks it of every outdated pod). */
function sameShortHash(a: string, b: string): boolean {
  const i = a.lastIndexOf('-') + 1;
  const j = b.lastIndexOf('-') + 1;
  const length = a.length - i;
  if (length !== b.length - j) return false;
  for (let k = 0; k < length; k++) if (a.charCodeAt(i + k) !== b.charCodeAt(j + k)) return false;
  return true;
}
