// The plan a pure planner returns: what to write, in order. Only the executor performs it.
import type { LifecycleState } from '../../api/well-known.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';

/** Enough to address a pod and to refuse a write to a different incarnation with the same name. */
export interface PodRef {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion?: string;
}

export interface PodToCreate {
  readonly pod: Pod;
  /** Claims to create first, skipping any that already exist (reused PVCs are never rewritten). */
  readonly pvcs: readonly PersistentVolumeClaim[];
  readonly revision: string;
}

export type DeleteCause = 'ScaleIn' | 'SpecifiedDelete';

export interface PodToDelete {
  readonly pod: PodRef;
  /** PVCs with the pod's instance id: the controller deletes them with the pod (spec §8.4). */
  readonly pvcNames: readonly string[];
  readonly cause: DeleteCause;
}

export type PlanAction =
  | { readonly kind: 'ReleasePod'; readonly pod: PodRef; readonly ownerRefIndex: number; readonly ownerUid: string }
  | { readonly kind: 'CreatePods'; readonly pods: readonly PodToCreate[] }
  | { readonly kind: 'DeletePods'; readonly pods: readonly PodToDelete[] }
  | { readonly kind: 'PatchPodLifecycle'; readonly pod: PodRef; readonly state: LifecycleState }
  | { readonly kind: 'PatchPodTemplateHash'; readonly pod: PodRef; readonly hash: string }
  | { readonly kind: 'SetInPlaceUpdateReady'; readonly pod: PodRef }
  | { readonly kind: 'MarkSpecifiedDelete'; readonly pod: PodRef; readonly revision: string };

export type PlanPhase = 'claim' | 'scale' | 'update' | 'idle';

export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface Plan {
  /** Which phase produced the writes: scaling and updating never happen in the same pass (spec §6). */
  readonly phase: PlanPhase;
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  /** Smallest positive delay after which the world must be looked at again, if any. */
  readonly requeueAfterMs?: number;
  /** Human-readable reasons, logged at debug level and asserted in tests. */
  readonly explain: readonly string[];
}

export function podRefOf(pod: Pod): PodRef {
  const { name, uid, resourceVersion } = pod.metadata;
  return { name: name ?? '', uid: uid ?? '', ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
}

export function minDelay(...delays: readonly (number | undefined)[]): number | undefined {
  let best: number | undefined;
  for (const d of delays) if (d !== undefined && d > 0 && (best === undefined || d < best)) best = d;
  return best;
}
