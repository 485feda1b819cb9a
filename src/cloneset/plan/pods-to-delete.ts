// scaleStrategy.podsToDelete keeps only names of pods that still exist (docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go).
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';

/** The shortened list, or undefined when every listed name is still a claimed pod. */
export function truncatedPodsToDelete(cloneSet: CloneSet, claimed: readonly Pod[]): readonly string[] | undefined {
  const list = cloneSet.spec.scaleStrategy?.podsToDelete ?? [];
  if (list.length === 0) return undefined;
  const live = new Set(claimed.map((p) => p.metadata.name));
  const kept = list.filter((name) => live.has(name));
  return kept.length === list.length ? undefined : kept;
}
