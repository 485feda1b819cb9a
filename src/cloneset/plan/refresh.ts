// The refresh at the start of Update (spec §11.1 step 1, §12.6 step 3, §13.2): per pod, the writes that
// move it along its lifecycle and make it Ready, before any pod is updated.
import type { CloneSet } from '../../api/cloneset.ts';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_POD_TEMPLATE_HASH, LABEL_REVISION_HASH } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction } from './actions.ts';
import { isAllHooked } from './lifecycle.ts';
import { lifecycleStateOf, podCondition, shortHash } from './pod-predicates.ts';

export interface RefreshResult {
  readonly actions: readonly PlanAction[];
  /** A lifecycle or pod-template-hash write happened: no pod is updated in this pass. */
  readonly blocksUpdate: boolean;
}

export function planRefresh(cloneSet: CloneSet, pods: readonly Pod[]): RefreshResult {
  const actions: PlanAction[] = [];
  let blocksUpdate = false;
  for (const pod of pods) {
    const ref = podRefOf(pod);
    // The controller is the only writer of InPlaceUpdateReady; without it a new pod never becomes Ready.
    const hasGate = (pod.spec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);
    if (hasGate && podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status !== 'True') {
      actions.push({ kind: 'SetInPlaceUpdateReady', pod: ref });
    }
    if (shouldBecomeNormal(cloneSet, pod)) {
      actions.push({ kind: 'PatchPodLifecycle', pod: ref, state: 'Normal' });
      blocksUpdate = true;
    }
    const revisionLabel = pod.metadata.labels?.[LABEL_REVISION_HASH];
    if (pod.metadata.labels?.[LABEL_POD_TEMPLATE_HASH] === undefined && revisionLabel !== undefined) {
      actions.push({ kind: 'PatchPodTemplateHash', pod: ref, hash: shortHash(revisionLabel) });
      blocksUpdate = true;
    }
  }
  return { actions, blocksUpdate };
}

/**
 * PreparingNormal → Normal: without a preNormal hook, once the pod is scheduled (Kruise waits for
 * nodeName to work around an old kube-scheduler bug); with a hook, once every handler is present.
 */
function shouldBecomeNormal(cloneSet: CloneSet, pod: Pod): boolean {
  if (lifecycleStateOf(pod) !== 'PreparingNormal') return false;
  const hook = cloneSet.spec.lifecycle?.preNormal;
  if (hook === undefined) return (pod.spec.nodeName ?? '') !== '';
  return isAllHooked(hook, pod);
}
