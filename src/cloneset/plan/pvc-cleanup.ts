// PVC cleanup when reuse is disabled (docs/features.md#pvcs, #reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go; kruise#1099): a PVC never outlives the pod whose
// instance id it carries, so a new pod never mounts the volume of a pod that vanished (e.g. with its node).
// Runs before claiming, every pass. With reuse enabled (the v1alpha1 default) it changes nothing.
import type { CloneSet } from '../../api/cloneset.ts';
import type { OwnerReference, PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import { pvcRefOf, type PlanAction } from './actions.ts';
import { instanceIdOf } from './instance-ids.ts';
import { isPodActive } from './pod-predicates.ts';

export interface PvcCleanupResult {
  /** ReownPvc actions (list order), then DeletePvc actions (list order). */
  readonly actions: readonly PlanAction[];
  /**
   * The PVCs scaling may use: with reuse disabled only those whose instance id belongs to an active pod, so their
   * ids are never offered to new pods; with reuse enabled the input list unchanged.
   */
  readonly pvcs: readonly PersistentVolumeClaim[];
  readonly explain: readonly string[];
}

export function isPvcReuseEnabled(cloneSet: CloneSet): boolean {
  return cloneSet.spec.scaleStrategy?.disablePVCReuse !== true;
}

/** The owner reference a PVC gets when it is handed to its pod (docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/core/cloneset_core.go). */
export function podControllerRef(pod: Pod): OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/**
 * `pods`: every pod carrying the CloneSet's UID in an owner reference (active or not); `pvcs`: the owned PVCs
 * without a deletionTimestamp.
 * - id of an active pod → kept;
 * - id of an inactive pod (Failed, Succeeded, terminating) → handed to that pod: the CloneSet reference is
 *   replaced by a controller reference to the pod, and the garbage collector deletes the PVC with the pod;
 * - any other PVC (id of no owned pod, or no id at all) → deleted.
 */
export function planPvcCleanup(cloneSet: CloneSet, pods: readonly Pod[], pvcs: readonly PersistentVolumeClaim[]): PvcCleanupResult {
  if (isPvcReuseEnabled(cloneSet)) return { actions: [], pvcs, explain: [] };
  const csUid = cloneSet.metadata.uid ?? '';
  const activeIds = new Set<string>();
  const inactiveById = new Map<string, Pod>();
  for (const pod of pods) {
    const id = instanceIdOf(pod);
    if (id === '') continue;
    if (isPodActive(pod)) activeIds.add(id);
    else inactiveById.set(id, pod);
  }
  const kept: PersistentVolumeClaim[] = [];
  const reown: PlanAction[] = [];
  const remove: PlanAction[] = [];
  for (const pvc of pvcs) {
    const id = instanceIdOf(pvc);
    if (id !== '' && activeIds.has(id)) {
      kept.push(pvc);
      continue;
    }
    const pod = id === '' ? undefined : inactiveById.get(id);
    if (pod === undefined) {
      remove.push({ kind: 'DeletePvc', pvc: pvcRefOf(pvc) });
      continue;
    }
    const refs = pvc.metadata.ownerReferences ?? [];
    const ownerRefIndex = refs.findIndex((r) => r.uid === csUid);
    if (ownerRefIndex < 0) continue; // not ours after all (the cache index said otherwise): leave it alone
    const podRef = podControllerRef(pod);
    reown.push({
      kind: 'ReownPvc',
      pvc: pvcRefOf(pvc),
      ownerRefIndex,
      ownerUid: csUid,
      // Already referencing the pod (e.g. set by hand): only the CloneSet reference goes.
      ...(refs.some((r) => r.uid === podRef.uid) ? {} : { podRef }),
    });
  }
  const actions = [...reown, ...remove];
  const explain = actions.length === 0 ? [] : [`PVC reuse disabled: handing ${reown.length} PVCs to their inactive pods, deleting ${remove.length} PVCs without a pod`];
  return { actions, pvcs: kept, explain };
}
