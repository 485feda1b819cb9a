// The controller of an object: its owner reference with `controller: true` (metav1.GetControllerOf; the API
// server allows at most one).
import type { KubeObject, OwnerReference } from './types.ts';

/** Index of the controller reference in metadata.ownerReferences, -1 when there is none (JSON patches need it). */
export function controllerRefIndex(obj: KubeObject): number {
  // Plain loops: every reconcile pass asks this of every pod it claims.
  const refs = obj.metadata?.ownerReferences;
  if (refs === undefined) return -1;
  for (let i = 0; i < refs.length; i++) if (refs[i]?.controller === true) return i;
  return -1;
}

export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  const i = controllerRefIndex(obj);
  return i < 0 ? undefined : obj.metadata?.ownerReferences?.[i];
}
