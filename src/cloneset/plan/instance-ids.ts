// Instance ids (spec §8.3): reuse the ids of PVCs that lost their pod, otherwise draw fresh random ids.
import { LABEL_INSTANCE_ID } from '../../api/well-known.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';

/** The alphabet Kubernetes uses for random name suffixes (no vowels, no confusable characters). */
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

function idOf(obj: Pod | PersistentVolumeClaim): string {
  return obj.metadata.labels?.[LABEL_INSTANCE_ID] ?? '';
}

/**
 * `count` ids for new pods, sorted ascending. Ids of PVCs without a live pod come first (their PVCs are
 * reused); fresh ids never collide with any id in use by a pod (active or not) or a PVC.
 */
export function allocateInstanceIds(
  count: number,
  activePods: readonly Pod[],
  allPods: readonly Pod[],
  pvcs: readonly PersistentVolumeClaim[],
  source: InstanceIdSource,
): string[] {
  const podIds = new Set(activePods.map(idOf).filter((id) => id !== ''));
  const used = new Set([...allPods.map(idOf), ...pvcs.map(idOf), ...podIds].filter((id) => id !== ''));
  // Kruise takes an arbitrary element; we take them in sorted order so a plan is reproducible.
  // An id whose pod still exists (e.g. a Failed pod) is not reusable: the pod name would collide.
  const allPodIds = new Set(allPods.map(idOf));
  const reusable = [...new Set(pvcs.map(idOf))].filter((id) => id !== '' && !allPodIds.has(id)).sort();
  const result = new Set<string>();
  for (let i = 0; i < count; i++) {
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
