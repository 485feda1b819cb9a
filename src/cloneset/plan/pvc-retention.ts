// A PVC retention policy for CloneSets (docs/features.md#pvc-retention-policy; kruise#1876), modelled on
// StatefulSet's persistentVolumeClaimRetentionPolicy (GA in Kubernetes 1.32). Opt-in with
// `cloneset-controller.io/pvc-retention-when-scaled` and `…-when-deleted` (`Retain` or `Delete`, default `Delete`:
// Kruise's behaviour).
// - A *retained* PVC is released: no owner reference to the CloneSet (the garbage collector leaves it alone when
//   the CloneSet goes) and labelled `cloneset-controller.io/retained-by: <cloneset>` so that it can be found.
// - whenScaled=Retain: scale-in releases the PVCs of the pods it deletes instead of deleting them (release first,
//   then the pod delete); any owned PVC whose instance id has no pod is released too, so a restart between the two
//   writes ends the same way.
// - whenDeleted=Retain: no PVC is owned by the CloneSet at all (as StatefulSet does it): new PVCs are created
//   released, owned ones are released.
// - Retained PVCs are offered again: a scale-up reuses their instance ids (with PVC reuse enabled), so the pod with
//   the same instance id mounts the same claim; with whenDeleted=Delete the CloneSet re-adopts it (owner reference
//   back, label gone). A CloneSet re-created under the same name finds its retained PVCs the same way.
// Nothing is ever deleted here: the only deletes stay those of Kruise's rules, and those are turned into releases
// when the policy says Retain.
import type { CloneSet } from '../../api/cloneset.ts';
import { LABEL_RETAINED_BY, pvcRetentionWhenDeletedOf, pvcRetentionWhenScaledOf } from '../../api/extensions.ts';
import { labelSelectorMatcher } from '../../kube/selectors.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import { pvcRefOf, type PlanAction } from './actions.ts';
import { instanceIdOf } from './instance-ids.ts';
import { controllerRefTo } from './pod-template.ts';
import { isPvcReuseEnabled } from './pvc-cleanup.ts';

/** Released PVCs of this CloneSet: labelled retained-by its name, matching its selector, owned by nobody's CloneSet UID. */
export function retainedPvcsOf(cloneSet: CloneSet, candidates: readonly PersistentVolumeClaim[]): PersistentVolumeClaim[] {
  const name = cloneSet.metadata.name ?? '';
  const uid = cloneSet.metadata.uid ?? '';
  const selects = labelSelectorMatcher(cloneSet.spec.selector);
  return candidates.filter(
    (c) =>
      c.metadata.labels?.[LABEL_RETAINED_BY] === name &&
      c.metadata.deletionTimestamp === undefined &&
      !(c.metadata.ownerReferences ?? []).some((r) => r.uid === uid) &&
      selects(c.metadata.labels),
  );
}

/** The PVCs scaling works with: the owned ones, plus the retained ones when ids are reused (docs/features.md#pvcs). */
export function pvcsForScaling(cloneSet: CloneSet, owned: readonly PersistentVolumeClaim[], retained: readonly PersistentVolumeClaim[]): readonly PersistentVolumeClaim[] {
  return retained.length === 0 || !isPvcReuseEnabled(cloneSet) ? owned : [...owned, ...retained];
}

function releaseOf(cloneSet: CloneSet, pvc: PersistentVolumeClaim, why: string): PlanAction {
  const uid = cloneSet.metadata.uid ?? '';
  const index = (pvc.metadata.ownerReferences ?? []).findIndex((r) => r.uid === uid);
  return {
    kind: 'ReleasePvc',
    pvc: pvcRefOf(pvc),
    cloneSetName: cloneSet.metadata.name ?? '',
    ownerUid: uid,
    why,
    ...(index >= 0 ? { ownerRefIndex: index } : {}),
  };
}

export interface PvcRetentionResult {
  readonly actions: readonly PlanAction[];
  readonly explain: readonly string[];
}

/**
 * Level-triggered releases and adoptions. `pods`: every pod with the CloneSet's UID in an owner reference;
 * `owned`: the owned PVCs; `retained`: retainedPvcsOf.
 */
export function planPvcRetention(
  cloneSet: CloneSet,
  pods: readonly Pod[],
  owned: readonly PersistentVolumeClaim[],
  retained: readonly PersistentVolumeClaim[],
): PvcRetentionResult {
  // Nothing to release or re-adopt (most CloneSets have no claims): no need to index every pod.
  if (owned.length === 0 && retained.length === 0) return { actions: [], explain: [] };
  const whenScaled = pvcRetentionWhenScaledOf(cloneSet);
  const whenDeleted = pvcRetentionWhenDeletedOf(cloneSet);
  const podIds = new Set(pods.map(instanceIdOf).filter((id) => id !== ''));
  const activeIds = new Set(
    pods
      .filter((p) => p.metadata.deletionTimestamp === undefined)
      .map(instanceIdOf)
      .filter((id) => id !== ''),
  );
  const actions: PlanAction[] = [];
  for (const pvc of owned) {
    const id = instanceIdOf(pvc);
    if (whenDeleted === 'Retain') actions.push(releaseOf(cloneSet, pvc, 'cloneset-controller.io/pvc-retention-when-deleted=Retain'));
    else if (whenScaled === 'Retain' && id !== '' && !podIds.has(id))
      actions.push(releaseOf(cloneSet, pvc, 'cloneset-controller.io/pvc-retention-when-scaled=Retain: its pod is gone'));
  }
  if (whenDeleted === 'Delete' && cloneSet.metadata.deletionTimestamp === undefined) {
    for (const pvc of retained) {
      if (!activeIds.has(instanceIdOf(pvc))) continue;
      actions.push({
        kind: 'AdoptPvc',
        pvc: pvcRefOf(pvc),
        ownerRef: controllerRefTo(cloneSet),
        cloneSetName: cloneSet.metadata.name ?? '',
        hasOwnerRefs: (pvc.metadata.ownerReferences ?? []).length > 0,
      });
    }
  }
  const released = actions.filter((a) => a.kind === 'ReleasePvc').length;
  const adopted = actions.length - released;
  const explain = actions.length === 0 ? [] : [`PVC retention: releasing ${released} PVCs, re-adopting ${adopted} retained PVCs whose instance id has a pod again`];
  return { actions, explain };
}

/**
 * Rewrites the Kruise writes of a pass by the policy (identity without the annotations):
 * - whenDeleted=Retain: new PVCs are created released (no CloneSet owner reference, labelled);
 * - whenScaled=Retain: a scale-in releases the deleted pods' PVCs first and deletes only the pods; the PVC
 *   clean-up of disablePVCReuse releases instead of deleting, and hands nothing to inactive pods (whose deletion
 *   would take the PVC with it).
 */
export function applyPvcRetention(cloneSet: CloneSet, actions: readonly PlanAction[], pvcs: readonly PersistentVolumeClaim[], pods: readonly Pod[]): PlanAction[] {
  const whenScaled = pvcRetentionWhenScaledOf(cloneSet);
  const whenDeleted = pvcRetentionWhenDeletedOf(cloneSet);
  if (whenScaled === 'Delete' && whenDeleted === 'Delete') return [...actions];
  const uid = cloneSet.metadata.uid ?? '';
  const name = cloneSet.metadata.name ?? '';
  const byName = new Map(pvcs.map((c) => [c.metadata.name ?? '', c]));
  const out: PlanAction[] = [];
  for (const a of actions) {
    if (a.kind === 'CreatePods' && whenDeleted === 'Retain') {
      out.push({
        ...a,
        pods: a.pods.map((p) => ({
          ...p,
          pvcs: p.pvcs.map((c) => ({
            ...c,
            metadata: {
              ...c.metadata,
              labels: { ...c.metadata.labels, [LABEL_RETAINED_BY]: name },
              ownerReferences: (c.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid),
            },
          })),
        })),
      });
      continue;
    }
    if (a.kind === 'DeletePods' && whenScaled === 'Retain') {
      for (const d of a.pods) {
        for (const pvcName of d.pvcNames) {
          const pvc = byName.get(pvcName);
          // With whenDeleted=Retain no PVC stays owned: planPvcRetention releases them all.
          if (pvc === undefined || whenDeleted === 'Retain' || !(pvc.metadata.ownerReferences ?? []).some((r) => r.uid === uid)) continue;
          out.push(releaseOf(cloneSet, pvc, 'cloneset-controller.io/pvc-retention-when-scaled=Retain: its pod is scaled in'));
        }
      }
      out.push({ ...a, pods: a.pods.map((d) => ({ ...d, pvcNames: [] })) });
      continue;
    }
    if (a.kind === 'DeletePods') {
      // whenScaled=Delete, whenDeleted=Retain: the pod's released PVCs go with it too (scaling may not list them
      // when PVC reuse is disabled).
      const idOf = new Map(pods.map((p) => [p.metadata.name ?? '', instanceIdOf(p)]));
      out.push({
        ...a,
        pods: a.pods.map((d) => {
          const id = idOf.get(d.pod.name) ?? '';
          const extra = pvcs.filter((c) => id !== '' && instanceIdOf(c) === id && !d.pvcNames.includes(c.metadata.name ?? '')).map((c) => c.metadata.name ?? '');
          return extra.length === 0 ? d : { ...d, pvcNames: [...d.pvcNames, ...extra] };
        }),
      });
      continue;
    }
    if (a.kind === 'DeletePvc' && whenScaled === 'Retain') {
      // A PVC with an instance id of no pod is released by planPvcRetention already; one without an id here.
      const pvc = byName.get(a.pvc.name);
      if (pvc !== undefined && instanceIdOf(pvc) === '') out.push(releaseOf(cloneSet, pvc, 'cloneset-controller.io/pvc-retention-when-scaled=Retain: it has no instance id'));
      continue;
    }
    if (a.kind === 'ReownPvc' && whenScaled === 'Retain') continue;
    out.push(a);
  }
  return out;
}
