// Which pods a CloneSet counts (docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/cloneset_controller.go; Kruise `ClaimPods` of pkg/controller/cloneset/sync/api.go over
// controller-runtime's ref manager). Only pods that already carry this CloneSet's UID in an owner reference are
// considered (the controller lists pods by owner UID); true orphans with matching labels are never adopted.
//   controller ref to this CloneSet, selector matches      → claimed
//   controller ref to this CloneSet, selector stops matching → released (unless the CloneSet is being deleted)
//   controller ref to anything else                          → ignored
//   no controller ref (only a non-controller ref to us), selector matches, neither pod nor CloneSet being
//   deleted                                                  → adopted: the reference becomes the controller ref,
//                                                              and the pod is counted in this pass (as Kruise)
import type { CloneSet } from '../../api/cloneset.ts';
import type { OwnerReference, Pod } from '../../kube/types.ts';
import { controllerRefIndex } from '../../kube/owner-refs.ts';
import { labelSelectorMatcher } from '../../kube/selectors.ts';
import { podRefOf, type PlanAction } from './actions.ts';
import { isPodActive } from './pod-predicates.ts';
import { controllerRefTo } from './pod-template.ts';

export interface ClaimResult {
  /** Active pods controlled by this CloneSet (or adopted in this pass) whose labels match its selector. */
  readonly claimed: readonly Pod[];
  /** Release (labels stopped matching) and adoption writes; they lead the plan. */
  readonly release: readonly PlanAction[];
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/**
 * The adoption write (Kruise `AdoptPod`): the controller ref replaces, at its position, the first owner reference
 * with the same API group, kind and name (any version), else it is appended. The executor sends it as a JSON patch
 * that first tests the pod's uid and resourceVersion, so a pod changed since the cache saw it is left alone.
 */
export function adoptAction(cloneSet: CloneSet, pod: Pod): PlanAction {
  const ref: OwnerReference = controllerRefTo(cloneSet);
  const refs = pod.metadata.ownerReferences ?? [];
  const index = refs.findIndex((r) => groupOf(r.apiVersion) === groupOf(ref.apiVersion) && r.kind === ref.kind && r.name === ref.name);
  return { kind: 'AdoptPod', pod: podRefOf(pod), ownerRef: ref, ...(index >= 0 ? { replaceIndex: index } : {}) };
}

export function claimPods(cloneSet: CloneSet, pods: readonly Pod[]): ClaimResult {
  const uid = cloneSet.metadata.uid ?? '';
  const deleting = cloneSet.metadata.deletionTimestamp !== undefined;
  const claimed: Pod[] = [];
  const release: PlanAction[] = [];
  const selects = labelSelectorMatcher(cloneSet.spec.selector);
  for (const pod of pods) {
    if (!isPodActive(pod)) continue;
    const matches = selects(pod.metadata.labels ?? {});
    const index = controllerRefIndex(pod);
    const ref = pod.metadata.ownerReferences?.[index];
    if (ref === undefined) {
      // Only reachable for pods that reference our UID without being controlled (the snapshot is by owner UID).
      const refersToUs = (pod.metadata.ownerReferences ?? []).some((r) => r.uid === uid);
      if (refersToUs && matches && !deleting) {
        release.push(adoptAction(cloneSet, pod));
        claimed.push(pod);
      }
      continue;
    }
    if (ref.uid !== uid) continue;
    if (matches) {
      claimed.push(pod);
    } else if (!deleting) {
      release.push({ kind: 'ReleasePod', pod: podRefOf(pod), ownerRefIndex: index, ownerUid: uid });
    }
  }
  return { claimed, release };
}
