// planScale: the Scale() step of a reconcile (spec §10.3) — create up to scaleUpLimit pods, or delete
// PreparingDelete / specified-delete pods, or scale in by the deletion order. At most one of these per pass.
import type { CloneSet } from '../../api/cloneset.ts';
import { LABEL_INSTANCE_ID, type FeatureGates } from '../../api/well-known.ts';
import type { Node, PersistentVolumeClaim, Pod, PodTemplateSpec } from '../../kube/types.ts';
import { podRefOf, type DeleteCause, type PlanAction, type PlannedEvent, type PodToCreate, type PodToDelete } from './actions.ts';
import { allocateInstanceIds, type InstanceIdSource } from './instance-ids.ts';
import { isReadyForDelete, isSpecifiedDelete, lifecycleStateOf } from './pod-predicates.ts';
import { newPod, pvcsFor } from './pod-template.ts';
import { choosePodsToDelete } from './pod-ranking.ts';
import { computeReplicaDiff, isUpdatedPod, replicaDiffInputFor, type ReplicaDiff } from './replica-diff.ts';

export interface RevisionTemplate {
  readonly name: string;
  readonly template: PodTemplateSpec;
}

export interface ScaleInput {
  readonly cloneSet: CloneSet;
  /** Claimed active pods. */
  readonly pods: readonly Pod[];
  /** Every pod owned by the CloneSet, inactive ones included (their ids and names stay taken). */
  readonly allPods: readonly Pod[];
  readonly pvcs: readonly PersistentVolumeClaim[];
  readonly nodes: ReadonlyMap<string, Node>;
  readonly current: RevisionTemplate;
  readonly update: RevisionTemplate;
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDeleteFlag: boolean;
  readonly ids: InstanceIdSource;
}

export interface ScaleResult {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  readonly diff: ReplicaDiff;
  readonly explain: readonly string[];
}

export function planScale(input: ScaleInput): ScaleResult {
  const { cloneSet, pods } = input;
  const podsToDelete = cloneSet.spec.scaleStrategy?.podsToDelete ?? [];
  const specified = pods.filter((p) => isSpecifiedDelete(p, podsToDelete));
  const preparingDelete = pods.filter((p) => lifecycleStateOf(p) === 'PreparingDelete');
  const numToDelete = new Set([...specified, ...preparingDelete].map((p) => p.metadata.name)).size;

  const diff = computeReplicaDiff(
    replicaDiffInputFor(cloneSet, pods, {
      currentRevision: input.current.name,
      updateRevision: input.update.name,
      gates: input.gates,
      excludePreparingDeleteFlag: input.excludePreparingDeleteFlag,
      nowMs: input.nowMs,
      flavour: 'scale',
    }),
  );
  const events: PlannedEvent[] = [];
  if (diff.scaleUpNum > diff.scaleUpLimit) {
    events.push({
      type: 'Warning',
      reason: 'ScaleUpLimited',
      message: `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${diff.scaleUpLimit}`,
    });
  }
  const result = (actions: PlanAction[], explain: string): ScaleResult => ({ actions, events, diff, explain: [explain] });

  if (diff.scaleUpNum > 0) {
    // A pass that needs more pods ends here, even when the limit allows none (spec §19.14).
    const creations = podsToCreate(input, diff);
    return result(
      creations.length > 0 ? [{ kind: 'CreatePods', pods: creations }] : [],
      `scale up: ${diff.scaleUpNum} missing, creating ${creations.length} (limit ${diff.scaleUpLimit})`,
    );
  }
  if (preparingDelete.length > 0) {
    return result([deletion(input, preparingDelete, 'SpecifiedDelete')], `deleting ${preparingDelete.length} PreparingDelete pods`);
  }
  let readyBudget = diff.deleteReadyLimit;
  const withinBudget = (pod: Pod): boolean => {
    if (!isReadyForDelete(pod, input.nowMs)) return true;
    if (readyBudget <= 0) return false;
    readyBudget--;
    return true;
  };
  const specifiedNow = specified.filter((p) => lifecycleStateOf(p) !== 'PreparingDelete').filter(withinBudget);
  if (specifiedNow.length > 0) {
    return result([deletion(input, specifiedNow, 'SpecifiedDelete')], `deleting ${specifiedNow.length} specified pods`);
  }
  if (diff.scaleDownNum > 0) {
    if (numToDelete > 0) return result([], 'scale in waits for the pods already being deleted');
    const isUpdated = (p: Pod): boolean => isUpdatedPod(p, input.update.name, 'scale', input.gates);
    const updated = pods.filter(isUpdated);
    const notUpdated = pods.filter((p) => !isUpdated(p));
    const victims = choosePodsToDelete(updated, notUpdated, diff.scaleDownNum, diff.scaleDownNumOldRevision, {
      minReadySeconds: cloneSet.spec.minReadySeconds ?? 0,
      nowMs: input.nowMs,
      nodes: input.nodes,
      topologySpreadConstraints: input.update.template.spec.topologySpreadConstraints ?? [],
    }).filter(withinBudget);
    return result(
      victims.length > 0 ? [deletion(input, victims, 'ScaleIn')] : [],
      `scale in: ${diff.scaleDownNum} too many, deleting ${victims.length}`,
    );
  }
  return result([], 'no scaling needed');
}

function podsToCreate(input: ScaleInput, diff: ReplicaDiff): PodToCreate[] {
  const ids = allocateInstanceIds(diff.scaleUpLimit, input.pods, input.allPods, input.pvcs, input.ids);
  const oldCount = Math.min(diff.scaleUpNumOldRevision, ids.length);
  return ids.map((id, i) => {
    const rev = i < oldCount ? input.current : input.update;
    const pod = newPod(input.cloneSet, rev.template, rev.name, id, {
      shortHashLabel: input.gates.CloneSetShortHash,
      nowMs: input.nowMs,
    });
    return { pod, pvcs: pvcsFor(input.cloneSet, id), revision: rev.name };
  });
}

function deletion(input: ScaleInput, pods: readonly Pod[], cause: DeleteCause): PlanAction {
  const list: PodToDelete[] = pods.map((pod) => {
    const id = pod.metadata.labels?.[LABEL_INSTANCE_ID] ?? '';
    const pvcNames = input.pvcs
      .filter((c) => (c.metadata.labels?.[LABEL_INSTANCE_ID] ?? '') === id)
      .map((c) => c.metadata.name ?? '');
    return { pod: podRefOf(pod), pvcNames, cause };
  });
  return { kind: 'DeletePods', pods: list };
}
