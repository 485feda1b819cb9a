// Lifecycle hook predicates (docs/features.md#lifecycle-hooks; Kruise pkg/util/lifecycle/lifecycle_utils.go). A hook is "present" on a pod through its finalizers or labels.
import type { LifecycleHook } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';

/** Any finalizer or label of the hook is on the pod ("IsPodHooked"). */
export function isHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (hook === undefined) return false;
  const finalizers = new Set(pod.metadata.finalizers ?? []);
  const labels = pod.metadata.labels ?? {};
  return (hook.finalizersHandler ?? []).some((f) => finalizers.has(f)) || Object.entries(hook.labelsHandler ?? {}).some(([k, v]) => labels[k] === v);
}

/** Every finalizer and label of the hook is on the pod ("IsPodAllHooked"); vacuously true for an empty hook. */
export function isAllHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (hook === undefined) return false;
  const finalizers = new Set(pod.metadata.finalizers ?? []);
  const labels = pod.metadata.labels ?? {};
  return (hook.finalizersHandler ?? []).every((f) => finalizers.has(f)) && Object.entries(hook.labelsHandler ?? {}).every(([k, v]) => labels[k] === v);
}
