// Which pods a CloneSet counts (spec §8.6). Only pods that already carry this CloneSet's UID in an owner
// reference are considered; true orphans with matching labels are never adopted (as in Kruise).
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { matchesLabelSelector } from '../../kube/selectors.ts';
import { podRefOf, type PlanAction } from './actions.ts';
import { isPodActive } from './pod-predicates.ts';

export interface ClaimResult {
  /** Active pods controlled by this CloneSet whose labels still match its selector. */
  readonly claimed: readonly Pod[];
  /** Pods whose labels stopped matching: their controller reference is removed, a replacement follows. */
  readonly release: readonly PlanAction[];
}

export function controllerRefIndex(pod: Pod): number {
  return (pod.metadata.ownerReferences ?? []).findIndex((r) => r.controller === true);
}

export function claimPods(cloneSet: CloneSet, pods: readonly Pod[]): ClaimResult {
  const uid = cloneSet.metadata.uid ?? '';
  const deleting = cloneSet.metadata.deletionTimestamp !== undefined;
  const claimed: Pod[] = [];
  const release: PlanAction[] = [];
  for (const pod of pods) {
    if (!isPodActive(pod)) continue;
    const index = controllerRefIndex(pod);
    const ref = pod.metadata.ownerReferences?.[index];
    if (ref === undefined || ref.uid !== uid) continue;
    if (matchesLabelSelector(cloneSet.spec.selector, pod.metadata.labels ?? {})) {
      claimed.push(pod);
    } else if (!deleting) {
      release.push({ kind: 'ReleasePod', pod: podRefOf(pod), ownerRefIndex: index, ownerUid: uid });
    }
  }
  return { claimed, release };
}
