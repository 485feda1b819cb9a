// Instance ids (docs/features.md#pvcs; Kruise pkg/controller/cloneset/sync/cloneset_scale.go): reuse the ids of PVCs that lost their pod, otherwise draw fresh random ids.
import { LABEL_INSTANCE_ID } from '../../api/well-known.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';

/** The alphabet Kubernetes uses for random name suffixes (no vowels, no confusable characters); revision hashes too. */
export const INSTANCE_ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Randomness is an input of the planner, so tests can pin it. */
export interface InstanceIdSource {
  /** A fresh 5-character id; the caller checks uniqueness. */
  random(): string;
}

export function randomInstanceIdSource(randomInt: (n: number) => number): InstanceIdSource {
  return {
    random: () => Array.from({ length: 5 }, () => INSTANCE_ID_ALPHABET[randomInt(INSTANCE_ID_ALPHABET.length)]).join(''),
  };
}

/** The instance id label of a pod or PVC ('' when missing). */
export function instanceIdOf(obj: Pod | PersistentVolumeClaim): string {
  return obj.metadata.labels?.[LABEL_INSTANCE_ID] ?? '';
}

/**
 * Up to `count` ids for new pods, sorted ascending. Ids of PVCs whose pod is terminating are awaited (fewer ids
 * this pass), then ids of PVCs without any pod come first (their PVCs are reused); fresh ids never collide with
 * any id in use by a pod (active or not) or a PVC.
 */
export function allocateInstanceIds(
  count: number,
  activePods: readonly Pod[],
  allPods: readonly Pod[],
  pvcs: readonly PersistentVolumeClaim[],
  source: InstanceIdSource,
  /** PVCs still present but not offered for reuse (being cleaned up, docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): their ids are never drawn. */
  retired: readonly PersistentVolumeClaim[] = [],
): string[] {
  // Every pass of a scale-up comes here with all the pods: one walk over each list, no copies of them.
  const used = new Set<string>();
  for (const list of [allPods, pvcs, retired, activePods]) {
    for (const obj of list) {
      const id = instanceIdOf(obj);
      if (id !== '') used.add(id);
    }
  }
  // Kruise takes an arbitrary element; we take them in sorted order so a plan is reproducible.
  const pvcIds = [...new Set(pvcs.map(instanceIdOf))].filter((id) => id !== '').sort();
  let reusable: string[] = [];
  let awaited: string[] = [];
  // Only the ids of PVCs are reused or awaited: without claims there is nothing more to look at.
  if (pvcIds.length > 0) {
    // An id whose pod still exists (e.g. a Failed pod) is not reusable: the pod name would collide.
    const allPodIds = new Set(allPods.map(instanceIdOf));
    reusable = pvcIds.filter((id) => !allPodIds.has(id));
    // An id whose PVC belongs to a pod that is going away (deletionTimestamp, e.g. deleted by hand) is awaited: its
    // replacement is created under the same id, with the same PVC, once the old pod is gone (its delete event brings
    // us back) — as the manual promises. Kruise would reuse the id at once and fail with AlreadyExists until then;
    // drawing a fresh id instead would strand the PVC. Each awaited id takes one of the `count` slots.
    const staying = new Set(allPods.filter((p) => p.metadata.deletionTimestamp === undefined).map(instanceIdOf));
    const going = new Set(allPods.filter((p) => p.metadata.deletionTimestamp !== undefined).map(instanceIdOf));
    awaited = pvcIds.filter((id) => going.has(id) && !staying.has(id));
  }
  const result = new Set<string>();
  for (let i = awaited.length; i < count; i++) {
    const reused = reusable.shift();
    if (reused !== undefined) {
      result.add(reused);
      continue;
    }
    let id = source.random();
    while (used.has(id) || result.has(id)) id = source.random();
    result.add(id);
  }
  return [...result].sort();
}
