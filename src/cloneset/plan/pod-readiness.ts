// markPodNotReady and the `KruisePodReady` condition (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go), pure.
//
// The condition's message is a JSON list of `{"userAgent","key"}` entries: every entry is a reason for the pod
// to be not ready. The lifecycle hooks own two keys of user agent `Lifecycle`: `preDeleteHook` (while the pod
// waits in PreparingDelete) and `preUpdateHook` (from PreparingUpdate until Updated). Entries of other user
// agents are kept as they are. The condition is True exactly when the list is empty.
//
// Differences from Kruise, all deliberate:
// - Kruise relies on its pod webhook to inject the `KruisePodReady` readiness gate and on its podreadiness
//   controller to initialise the condition to True; we do both ourselves (newPod adds the gate when a hook uses
//   markPodNotReady, the refresh initialises the condition).
// - Kruise creates a missing condition with an empty status (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go); we write `False` (both mean "not True").
// - Kruise removes `preUpdateHook` only on entering Updated, so a pod that goes straight to Normal (Updating →
//   Normal or PreparingUpdate → Normal with the inPlaceUpdate hook all-hooked; docs/features.md#markpodnotready) keeps KruisePodReady
//   False and stays not Ready for good. Here the keys are level-triggered on the pod's state: a key is dropped
//   as soon as the pod is in a state that does not call for it, whichever path led there.
// - Writes are strategic-merge patches of pods/status keyed by condition type, computed from the cache (the
//   resource-version expectations guarantee the cache includes our own last write), never a read-modify-PUT.
import type { CloneSet } from '../../api/cloneset.ts';
import { compareUtf8, goQuote } from '../../api/go-json.ts';
import { CONDITION_KRUISE_POD_READY, type LifecycleState } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction, type PodConditionPatch } from './actions.ts';
import { hasReadinessGate, podCondition } from './pod-predicates.ts';

export const READINESS_USER_AGENT_LIFECYCLE = 'Lifecycle';
export const KEY_PRE_DELETE_HOOK = 'preDeleteHook';
export const KEY_PRE_UPDATE_HOOK = 'preUpdateHook';

export interface ReadinessEntry {
  readonly userAgent: string;
  readonly key: string;
}

export function hasKruisePodReadyGate(pod: Pod): boolean {
  return hasReadinessGate(pod, CONDITION_KRUISE_POD_READY);
}

/** A CloneSet whose hooks mark pods not ready: its new pods get the `KruisePodReady` readiness gate. */
export function usesMarkPodNotReady(cloneSet: CloneSet): boolean {
  const l = cloneSet.spec.lifecycle;
  return l?.preDelete?.markPodNotReady === true || l?.inPlaceUpdate?.markPodNotReady === true;
}

/** The message's entries; an unparsable or empty message is an empty list (as in Kruise). */
export function parseReadinessMessage(message: string | undefined): ReadinessEntry[] {
  if (message === undefined || message === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: ReadinessEntry[] = [];
  for (const item of raw as unknown[]) {
    if (item === null || typeof item !== 'object') return [];
    const rec = item as Record<string, unknown>;
    const userAgent = rec.userAgent ?? '';
    const key = rec.key ?? '';
    if (typeof userAgent !== 'string' || typeof key !== 'string') return [];
    out.push({ userAgent, key });
  }
  return out;
}

/** Go's `json.Marshal` of the sorted list: `[{"userAgent":"Lifecycle","key":"preDeleteHook"}]`, `[]` when empty. */
export function formatReadinessMessage(entries: readonly ReadinessEntry[]): string {
  const sorted = [...entries].sort((a, b) => compareUtf8(a.userAgent, b.userAgent) || compareUtf8(a.key, b.key));
  return `[${sorted.map((e) => `{"userAgent":${goQuote(e.userAgent)},"key":${goQuote(e.key)}}`).join(',')}]`;
}

/** The lifecycle keys a pod in `state` should carry, given the keys it has now. */
function wantedLifecycleKeys(cloneSet: CloneSet, state: LifecycleState | '', current: ReadonlySet<string>): Set<string> {
  const lifecycle = cloneSet.spec.lifecycle;
  const wanted = new Set<string>();
  // preDeleteHook: added on (and kept while) waiting in PreparingDelete.
  if (state === 'PreparingDelete' && (lifecycle?.preDelete?.markPodNotReady === true || current.has(KEY_PRE_DELETE_HOOK))) {
    wanted.add(KEY_PRE_DELETE_HOOK);
  }
  // preUpdateHook: added on entering PreparingUpdate, kept while Updating, dropped at Updated — and, unlike
  // Kruise (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go), also when the pod reaches any other state (Normal straight from Updating/PreparingUpdate).
  if (state === 'PreparingUpdate' && lifecycle?.inPlaceUpdate?.markPodNotReady === true) wanted.add(KEY_PRE_UPDATE_HOOK);
  if ((state === 'PreparingUpdate' || state === 'Updating') && current.has(KEY_PRE_UPDATE_HOOK)) wanted.add(KEY_PRE_UPDATE_HOOK);
  return wanted;
}

/**
 * The `KruisePodReady` write (if any) that makes the condition fit a pod that is, or is about to be, in
 * `state`: initialise a missing condition, add the key of a hook with markPodNotReady, drop keys the state no
 * longer calls for. Nothing for pods without the readiness gate (markPodNotReady has no effect on them, as in
 * Kruise). When a key is added and the pod is Ready with its containers ready, `Ready` is set False in the same
 * patch (as Kruise does: traffic stops at once, without waiting for the kubelet); removing keys leaves `Ready`
 * to the kubelet.
 */
export function kruisePodReadyAction(cloneSet: CloneSet, pod: Pod, state: LifecycleState | ''): PlanAction | undefined {
  if (!hasKruisePodReadyGate(pod)) return undefined;
  const cond = podCondition(pod, CONDITION_KRUISE_POD_READY);
  const entries = parseReadinessMessage(cond?.message);
  const others = entries.filter((e) => e.userAgent !== READINESS_USER_AGENT_LIFECYCLE);
  const current = new Set(entries.filter((e) => e.userAgent === READINESS_USER_AGENT_LIFECYCLE).map((e) => e.key));
  const wanted = wantedLifecycleKeys(cloneSet, state, current);
  const same = current.size === wanted.size && [...wanted].every((k) => current.has(k));
  if (cond !== undefined && same) return undefined;
  if (cond === undefined && wanted.size === 0 && others.length === 0) {
    // Kruise's podreadiness controller: a pod with the gate and no condition gets it True.
    return { kind: 'PatchPodConditions', pod: podRefOf(pod), conditions: [{ type: CONDITION_KRUISE_POD_READY, status: 'True' }] };
  }
  const list = [...others, ...[...wanted].map((key) => ({ userAgent: READINESS_USER_AGENT_LIFECYCLE, key }))];
  const status = list.length === 0 ? 'True' : 'False';
  const conditions: PodConditionPatch[] = [{ type: CONDITION_KRUISE_POD_READY, status, message: formatReadinessMessage(list) }];
  const adds = [...wanted].some((k) => !current.has(k));
  if (status === 'False' && adds) {
    const ready = podCondition(pod, 'Ready');
    if (ready?.status === 'True' && podCondition(pod, 'ContainersReady')?.status === 'True') {
      conditions.push({ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: notReadyGatesMessage(pod, CONDITION_KRUISE_POD_READY, status) });
    }
  }
  return { kind: 'PatchPodConditions', pod: podRefOf(pod), conditions };
}

/**
 * The kubelet's message for failing readiness gates ('' when all pass), with the condition `overrideType` taken
 * as `overrideStatus` (the value a patch is about to write).
 */
export function notReadyGatesMessage(pod: Pod, overrideType: string, overrideStatus: string): string {
  const phrases: string[] = [];
  for (const gate of pod.spec.readinessGates ?? []) {
    const t = gate.conditionType;
    const status = t === overrideType ? overrideStatus : podCondition(pod, t)?.status;
    if (status === undefined) phrases.push(`corresponding condition of pod readiness gate "${t}" does not exist.`);
    else if (status !== 'True') phrases.push(`the status of pod readiness gate "${t}" is not "True", but ${status}`);
  }
  return phrases.join(', ');
}
