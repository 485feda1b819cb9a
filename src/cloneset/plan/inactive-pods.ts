// Clean-up of inactive pods beyond a limit (docs/features.md#inactive-pod-clean-up; kruise#947, kruise#925): Kruise
// replaces a Failed or Succeeded pod (an evicted pod is Failed) but never removes it, so evictions pile up.
// Opt-in with `cloneset-controller.io/inactive-pods-limit: "N"`: at most N inactive pods are kept, the oldest
// beyond it are deleted — each only once a replacement is Ready, so the evidence of a failure stays until the
// CloneSet has recovered from it. The clean-up never holds a replacement back: it only looks at pods that were
// already replaced, and its deletes come after every scale or update write of the pass (plan/index.ts).
import { inactivePodsLimitOf } from '../../api/extensions.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import { controllerRefOf } from '../../kube/owner-refs.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction } from './actions.ts';
import { isPodActive, isPodReady, timestampMs } from './pod-predicates.ts';

export interface InactivePodsResult {
  readonly actions: readonly PlanAction[];
  readonly explain: readonly string[];
}

const NONE: InactivePodsResult = { actions: [], explain: [] };

/** Failed or Succeeded, not being deleted, controlled by this CloneSet. */
export function inactivePodsOf(cloneSet: CloneSet, pods: readonly Pod[]): Pod[] {
  const uid = cloneSet.metadata.uid ?? '';
  return pods.filter((p) => !isPodActive(p) && p.metadata.deletionTimestamp === undefined && controllerRefOf(p)?.uid === uid);
}

/** Oldest first: creation time, then name (a stable order for pods created in the same second). */
function byAge(a: Pod, b: Pod): number {
  const d = (timestampMs(a.metadata.creationTimestamp) ?? 0) - (timestampMs(b.metadata.creationTimestamp) ?? 0);
  return d !== 0 ? d : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/**
 * `pods`: every pod with the CloneSet's UID in an owner reference; `claimed`: the claimed active pods.
 * An inactive pod counts as replaced when the CloneSet has as many Ready pods as `spec.replicas`, or else when a
 * Ready pod created no earlier than it is not yet the replacement of an older one (each Ready pod replaces at
 * most one inactive pod).
 */
export function planInactivePodCleanup(cloneSet: CloneSet, pods: readonly Pod[], claimed: readonly Pod[]): InactivePodsResult {
  const limit = inactivePodsLimitOf(cloneSet);
  if (limit === undefined || cloneSet.metadata.deletionTimestamp !== undefined) return NONE;
  const inactive = inactivePodsOf(cloneSet, pods).sort(byAge);
  const excess = inactive.length - limit;
  if (excess <= 0) return NONE;
  const ready = claimed.filter(isPodReady).sort(byAge);
  const whole = ready.length >= (cloneSet.spec.replicas ?? 1);
  const actions: PlanAction[] = [];
  const waiting: string[] = [];
  let next = 0;
  for (const pod of inactive.slice(0, excess)) {
    const name = pod.metadata.name ?? '';
    const phase = pod.status?.phase === 'Succeeded' ? 'Succeeded' : 'Failed';
    let replacement: string | undefined;
    if (!whole) {
      const born = timestampMs(pod.metadata.creationTimestamp) ?? 0;
      while (next < ready.length && (timestampMs(ready[next]?.metadata.creationTimestamp) ?? 0) < born) next++;
      const match = ready[next];
      if (match === undefined) {
        waiting.push(name);
        continue;
      }
      next++;
      replacement = match.metadata.name ?? '';
    }
    actions.push({ kind: 'DeleteInactivePod', pod: podRefOf(pod), phase, limit, ...(replacement !== undefined ? { replacement } : {}) });
  }
  const explain = [
    ...(actions.length > 0 ? [`inactive pods: ${inactive.length} > limit ${limit}, deleting the ${actions.length} oldest that were replaced`] : []),
    ...(waiting.length > 0 ? [`inactive pods over the limit waiting for a Ready replacement: ${waiting.join(', ')}`] : []),
  ];
  return { actions, explain };
}
