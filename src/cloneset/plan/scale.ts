// planScale: the Scale() step of a reconcile (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go) — create up to scaleUpLimit pods, or delete
// PreparingDelete / specified-delete pods, or scale in by the deletion order. At most one of these per pass.
import type { CloneSet } from '../../api/cloneset.ts';
import type { FeatureGates } from '../../api/well-known.ts';
import type { Node, PersistentVolumeClaim, Pod, PodTemplateSpec } from '../../kube/types.ts';
import { podRefOf, type DeleteCause, type PlanAction, type PlannedEvent, type PodToCreate, type PodToDelete } from './actions.ts';
import { allocateInstanceIds, instanceIdOf, type InstanceIdSource } from './instance-ids.ts';
import { isHooked } from './lifecycle.ts';
import { setStateActions } from './lifecycle-state.ts';
import { isReadyForDelete, isSpecifiedDelete, lifecycleStateOf } from './pod-predicates.ts';
import { newPod, pvcsFor } from './pod-template.ts';
import { usesMarkPodNotReady } from './pod-readiness.ts';
import { choosePodsToDelete } from './pod-ranking.ts';
import { isUpdatedPod, passReplicaDiffs, type PassReplicaDiffs, type ReplicaDiff, type SurgeRule } from './replica-diff.ts';

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
  /** Owned PVCs left out of `pvcs` by the cleanup (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): not reusable, and their ids are not drawn again. */
  readonly retiredPvcs?: readonly PersistentVolumeClaim[];
  readonly nodes: ReadonlyMap<string, Node>;
  readonly current: RevisionTemplate;
  readonly update: RevisionTemplate;
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDeleteFlag: boolean;
  readonly ids: InstanceIdSource;
  /** undefined → 'kruise' (see SurgeRule). */
  readonly surgeRule?: SurgeRule;
  /** The pass's replica diffs of these pods and inputs (planPass shares them with Update); made here without. */
  readonly diffs?: PassReplicaDiffs;
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
  // One walk over the pods for both lists (every pass of a large CloneSet runs this over all of them).
  const specified: Pod[] = [];
  const preparingDelete: Pod[] = [];
  for (const p of pods) {
    if (isSpecifiedDelete(p, podsToDelete)) specified.push(p);
    if (lifecycleStateOf(p) === 'PreparingDelete') preparingDelete.push(p);
  }
  const numToDelete = new Set([...specified, ...preparingDelete].map((p) => p.metadata.name)).size;

  const diffs =
    input.diffs ??
    passReplicaDiffs(cloneSet, pods, {
      currentRevision: input.current.name,
      updateRevision: input.update.name,
      gates: input.gates,
      excludePreparingDeleteFlag: input.excludePreparingDeleteFlag,
      nowMs: input.nowMs,
      ...(input.surgeRule !== undefined ? { surgeRule: input.surgeRule } : {}),
    });
  const diff = diffs.scale();
  const events: PlannedEvent[] = [];
  const result = (actions: PlanAction[], explain: string): ScaleResult => ({ actions, events, diff, explain: [explain] });

  // Kruise's managePreparingDelete (docs/features.md#scaling-with-preparingdelete; pkg/controller/cloneset/sync/cloneset_scale.go; was missing: a scale-in victim waiting in PreparingDelete was deleted even after the
  // replicas grew back, instead of returning to PreparingNormal as in Kruise).
  const cancelled = cancelPreparingDelete(input, preparingDelete, numToDelete);
  if (cancelled.length > 0) return result(cancelled, `${cancelled.length} PreparingDelete pods are wanted again`);

  if (diff.scaleUpNum > diff.scaleUpLimit) {
    events.push({
      type: 'Warning',
      reason: 'ScaleUpLimited',
      message: `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${diff.scaleUpLimit}`,
    });
  }

  if (diff.scaleUpNum > 0) {
    // A pass that needs more pods ends here, even when the limit allows none (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go)...
    const creations = podsToCreate(input, diff);
    const explain = `scale up: ${diff.scaleUpNum} missing, creating ${creations.length} (limit ${diff.scaleUpLimit})`;
    if (creations.length > 0) return result([{ kind: 'CreatePods', pods: creations }], explain);
    // ...but beyond Kruise, a blocked scale-up still lets released PreparingDelete pods go: they count as
    // unavailable, so with scaleStrategy.maxUnavailable they would otherwise keep the limit at 0 forever.
    const releasedWhileBlocked = deletion(input, preparingDelete, 'SpecifiedDelete');
    return result(releasedWhileBlocked, explain);
  }
  // Step 6: pods whose preDelete hook is still present stay in PreparingDelete; if none can go, carry on.
  const released = deletion(input, preparingDelete, 'SpecifiedDelete');
  if (released.length > 0) return result(released, `deleting ${preparingDelete.length} PreparingDelete pods`);
  let readyBudget = diff.deleteReadyLimit;
  const withinBudget = (pod: Pod): boolean => {
    if (!isReadyForDelete(pod, input.nowMs)) return true;
    if (readyBudget <= 0) return false;
    readyBudget--;
    return true;
  };
  const specifiedNow = specified.filter((p) => lifecycleStateOf(p) !== 'PreparingDelete').filter(withinBudget);
  if (specifiedNow.length > 0) {
    return result(deletion(input, specifiedNow, 'SpecifiedDelete'), `deleting ${specifiedNow.length} specified pods`);
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
    return result(deletion(input, victims, 'ScaleIn'), `scale in: ${diff.scaleDownNum} too many, deleting ${victims.length}`);
  }
  return result([], 'no scaling needed');
}

function podsToCreate(input: ScaleInput, diff: ReplicaDiff): PodToCreate[] {
  const ids = allocateInstanceIds(diff.scaleUpLimit, input.pods, input.allPods, input.pvcs, input.ids, input.retiredPvcs);
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

/**
 * deletePods (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go): a pod hooked by `lifecycle.preDelete` is moved to PreparingDelete and waits for its
 * hook instead of being deleted (this was missing: hooked pods were deleted at once); the others are deleted
 * with their PVCs. With `preDelete.markPodNotReady` the KruisePodReady condition turns False first (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go),
 * also for a pod already waiting in PreparingDelete (setState applies the not-ready policy every time).
 */
function deletion(input: ScaleInput, pods: readonly Pod[], cause: DeleteCause): PlanAction[] {
  const hook = input.cloneSet.spec.lifecycle?.preDelete;
  const actions: PlanAction[] = [];
  const list: PodToDelete[] = [];
  for (const pod of pods) {
    if (isHooked(hook, pod)) {
      actions.push(...setStateActions(input.cloneSet, pod, 'PreparingDelete'));
      continue;
    }
    const id = instanceIdOf(pod);
    const pvcNames = input.pvcs.filter((c) => instanceIdOf(c) === id).map((c) => c.metadata.name ?? '');
    list.push({ pod: podRefOf(pod), pvcNames, cause });
  }
  return list.length > 0 ? [...actions, { kind: 'DeletePods', pods: list }] : actions;
}

/**
 * managePreparingDelete (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go): while fewer pods are wanted to stay than replicas, PreparingDelete
 * pods that are not specified for deletion go back to PreparingNormal — unless a hook marks pods not ready.
 */
function cancelPreparingDelete(input: ScaleInput, preparingDelete: readonly Pod[], numToDelete: number): PlanAction[] {
  if (usesMarkPodNotReady(input.cloneSet)) return [];
  const podsToDelete = input.cloneSet.spec.scaleStrategy?.podsToDelete ?? [];
  let wanted = (input.cloneSet.spec.replicas ?? 1) - input.pods.length + numToDelete;
  const actions: PlanAction[] = [];
  for (const pod of preparingDelete) {
    if (wanted <= 0) break;
    if (isSpecifiedDelete(pod, podsToDelete)) continue;
    actions.push(...setStateActions(input.cloneSet, pod, 'PreparingNormal'));
    wanted--;
  }
  return actions;
}
