// The controller of an object: its owner reference with `controller: true` (metav1.GetControllerOf; the API
// server allows at most one).
import type { KubeObject, OwnerReference } from './types.ts';

/** Index of the controller reference in metadata.ownerReferences, -1 when there is none (JSON patches need it). */
export function controllerRefIndex(obj: KubeObject): number {
  return (obj.metadata?.ownerReferences ?? []).findIndex((r) => r.controller === true);
}

export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}
