// One-line descriptions of plans and pod sets for step tables and assertion messages: "create sample-x7k2p@r2",
// "4 old + 1 new(not ready)". They describe what a test built or a plan returned; they compute no expectation.
import type { CloneSet } from '../../../api/cloneset.ts';
import type { Pod } from '../../../kube/types.ts';
import type { PlanAction } from '../actions.ts';
import { describeExtensionAction, isExtensionAction } from '../extensions.ts';
import { isPodActive, isPodAvailable, isSpecifiedDelete, revisionMatches } from '../pod-predicates.ts';

/** "5 old + 1 new(not ready)": active pods by revision and condition, in a fixed category order. */
export function describePods(cloneSet: CloneSet, pods: readonly Pod[], updateRevision: string, nowMs: number): string {
  const minReady = cloneSet.spec.minReadySeconds ?? 0;
  const podsToDelete = cloneSet.spec.scaleStrategy?.podsToDelete;
  const categories = ['old', 'old(specified-delete)', 'old(not ready)', 'new', 'new(specified-delete)', 'new(not ready)'];
  const counts = new Map<string, number>();
  for (const p of pods.filter(isPodActive)) {
    const rev = revisionMatches(p, updateRevision) ? 'new' : 'old';
    const flag = isSpecifiedDelete(p, podsToDelete) ? '(specified-delete)' : isPodAvailable(p, minReady, nowMs) ? '' : '(not ready)';
    counts.set(rev + flag, (counts.get(rev + flag) ?? 0) + 1);
  }
  const parts = categories.filter((c) => counts.has(c)).map((c) => `${counts.get(c) ?? 0} ${c}`);
  return parts.length > 0 ? parts.join(' + ') : 'no pods';
}

export function describeAction(a: PlanAction): string {
  switch (a.kind) {
    case 'CreatePods':
      return `create ${a.pods.map((c) => `${c.pod.metadata.name ?? ''}@${shortRev(c.revision)}`).join(' ')}`;
    case 'DeletePods':
      return `delete ${a.pods.map((d) => d.pod.name + (d.pvcNames.length > 0 ? `(+${d.pvcNames.join(',')})` : '')).join(' ')}`;
    case 'MarkSpecifiedDelete':
      return `mark ${a.pod.name}`;
    case 'PatchPodLifecycle':
      return `lifecycle ${a.pod.name}=${a.state}`;
    case 'PatchPodTemplateHash':
      return `template-hash ${a.pod.name}=${a.hash}`;
    case 'SetInPlaceUpdateReady':
      return `gate ${a.pod.name}${a.lifecycle !== undefined ? ` lifecycle=${a.lifecycle.state}` : ''}`;
    case 'PatchPodConditions':
      return `conditions ${a.pod.name} ${a.conditions.map((c) => `${c.type}=${c.status}`).join(',')}`;
    case 'ReleasePod':
      return `release ${a.pod.name}`;
    case 'AdoptPod':
      return `adopt ${a.pod.name}`;
    case 'ReownPvc':
      return `reown ${a.pvc.name}${a.podRef !== undefined ? `→${a.podRef.name}` : ''}`;
    case 'DeletePvc':
      return `delete-pvc ${a.pvc.name}`;
    case 'MarkPodNotReadyForInPlaceUpdate':
      return `not-ready ${a.pod.name}`;
    case 'UpdatePodInPlace':
      return `in-place(${a.step}) ${a.pod.name}@${shortRev(a.revision)}`;
    case 'FailUpdate':
      return `fail: ${a.message}`;
    default:
      return isExtensionAction(a) ? describeExtensionAction(a) : a.kind;
  }
}

function shortRev(name: string): string {
  return name.slice(name.lastIndexOf('-') + 1);
}
