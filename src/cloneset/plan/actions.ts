// The plan a pure planner returns: what to write, in order. Only the executor performs it.
import type { CloneSetStatus } from '../../api/cloneset.ts';
import type { LifecycleState } from '../../api/well-known.ts';
import type { ControllerRevision, OwnerReference, PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import type { ImagePullJob } from '../inplace/image-pull-job.ts';

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

/** A PVC incarnation: writes carry the uid so a PVC re-created under the same name is left alone. */
export interface PvcRef {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion?: string;
}

/** One condition of a pods/status patch (see PatchPodConditions). */
export interface PodConditionPatch {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason?: string;
  readonly message?: string;
}

export type DeleteCause = 'ScaleIn' | 'SpecifiedDelete';

/** Which in-place write: the update itself, the end of its grace period, a later container batch, a stale grace. */
export type InPlaceStep = 'update' | 'finishGrace' | 'nextBatch' | 'dropGrace';

export interface PodToDelete {
  readonly pod: PodRef;
  /** PVCs with the pod's instance id: the controller deletes them with the pod (docs/features.md#pvcs; Kruise pkg/controller/cloneset/sync/cloneset_scale.go). */
  readonly pvcNames: readonly string[];
  readonly cause: DeleteCause;
}

/** A lifecycle state change carried by another pod write: the state label, the timestamp, hook labels. */
export interface LifecycleWrite {
  readonly state: LifecycleState;
  readonly addLabels?: Readonly<Record<string, string>>;
}

export type PlanAction =
  | { readonly kind: 'ReleasePod'; readonly pod: PodRef; readonly ownerRefIndex: number; readonly ownerUid: string }
  /** Adoption (docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/cloneset_controller.go): `ownerRef` replaces the reference at `replaceIndex`, or is appended without one. */
  | { readonly kind: 'AdoptPod'; readonly pod: PodRef; readonly ownerRef: OwnerReference; readonly replaceIndex?: number }
  | { readonly kind: 'CreatePods'; readonly pods: readonly PodToCreate[] }
  | { readonly kind: 'DeletePods'; readonly pods: readonly PodToDelete[] }
  /**
   * Lifecycle label + timestamp (docs/features.md#lifecycle-states; Kruise pkg/util/lifecycle/lifecycle_utils.go). `addLabels`/`addFinalizers`: the inPlaceUpdate hook's handlers,
   * put back on Updated → PreparingUpdate (setStateWithHandler; strategic merge merges finalizers).
   */
  | {
      readonly kind: 'PatchPodLifecycle';
      readonly pod: PodRef;
      readonly state: LifecycleState;
      readonly addLabels?: Readonly<Record<string, string>>;
      readonly addFinalizers?: readonly string[];
    }
  /** Pod conditions merged into pods/status by type (strategic merge); the executor stamps lastTransitionTime. */
  | { readonly kind: 'PatchPodConditions'; readonly pod: PodRef; readonly conditions: readonly PodConditionPatch[] }
  | { readonly kind: 'PatchPodTemplateHash'; readonly pod: PodRef; readonly hash: string }
  /**
   * InPlaceUpdateReady=True (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go). `guardResourceVersion`: sent with the cached pod's
   * resourceVersion, so it only applies to the pod version it was decided on (409 otherwise, ignored).
   * `lifecycle`: the lifecycle transition of the same refresh (docs/features.md#lifecycle-states: label + timestamp), written in the same
   * pods/status request instead of a second one (refresh.ts, docs/performance.md).
   */
  | { readonly kind: 'SetInPlaceUpdateReady'; readonly pod: PodRef; readonly guardResourceVersion?: boolean; readonly lifecycle?: LifecycleWrite }
  /** In-place update, step 1 (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go): pods/status patch InPlaceUpdateReady=False (+ Ready=False). */
  | { readonly kind: 'MarkPodNotReadyForInPlaceUpdate'; readonly pod: PodRef; readonly revision: string; readonly patch: Readonly<Record<string, unknown>> }
  /**
   * In-place update writes to the pod (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go): a strategic merge patch sent with the
   * cached pod's resourceVersion (409 when the cache is stale: nothing applied, re-planned). `resize`: first
   * patched into `pods/<name>/resize` (gate InPlaceWorkloadVerticalScaling, servers ≥ 1.32).
   */
  | {
      readonly kind: 'UpdatePodInPlace';
      readonly pod: PodRef;
      readonly step: InPlaceStep;
      readonly revision: string;
      readonly patch: Readonly<Record<string, unknown>>;
      readonly resize?: Readonly<Record<string, unknown>>;
      /** Step `update`: `inPlaceGuardOf` the cached pod; on a 409 a live pod with the same guard is patched again. */
      readonly guard?: string;
    }
  /** The update pass fails with this message (FailedUpdate condition, error requeue), e.g. InPlaceOnly refused. */
  | { readonly kind: 'FailUpdate'; readonly message: string }
  | { readonly kind: 'MarkSpecifiedDelete'; readonly pod: PodRef; readonly revision: string }
  /** PVC reuse disabled (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): drop the CloneSet reference at ownerRefIndex, add `podRef` when given. */
  | { readonly kind: 'ReownPvc'; readonly pvc: PvcRef; readonly ownerRefIndex: number; readonly ownerUid: string; readonly podRef?: OwnerReference }
  /** PVC reuse disabled (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): a PVC whose instance id matches no owned pod. */
  | { readonly kind: 'DeletePvc'; readonly pvc: PvcRef }
  /**
   * POST a new ControllerRevision (docs/features.md#revisions). The rest of the plan was made with it as the update
   * revision. AlreadyExists with the same data bytes is our own earlier create; with different bytes it is a hash
   * collision: `collisionStatus` (status.collisionCount + 1) is written instead and the pass ends with a requeue.
   */
  | { readonly kind: 'CreateRevision'; readonly revision: ControllerRevision; readonly collisionStatus: CloneSetStatus }
  /** PUT of an existing revision under a new revision number (a rollback), guarded by its resourceVersion. */
  | { readonly kind: 'UpdateRevision'; readonly revision: ControllerRevision }
  /** The oldest revisions no pod uses, beyond revisionHistoryLimit (housekeeping: a failure is only logged). */
  | { readonly kind: 'TruncateHistory'; readonly revisions: readonly RevisionRef[] }
  /** PUT of the status subresource, guarded by the cached CloneSet's resourceVersion. */
  | { readonly kind: 'UpdateStatus'; readonly status: CloneSetStatus }
  /** JSON patch of spec.scaleStrategy.podsToDelete: `test` the list still is `expected`, then `replace` it by `kept`. */
  | { readonly kind: 'TruncatePodsToDelete'; readonly expected: readonly string[]; readonly kept: readonly string[] }
  /** Image pre-download (docs/features.md#image-pre-download): one ImagePullJob; AlreadyExists counts as done. */
  | { readonly kind: 'CreateImagePullJob'; readonly job: ImagePullJob }
  /** Image pre-download: mark the update revision as handled (created or ignored). */
  | { readonly kind: 'LabelRevision'; readonly revision: string; readonly label: string }
  /** Image pre-download: revisions equal again, delete the CloneSet's ImagePullJobs (once per revision and process). */
  | { readonly kind: 'DeleteImagePullJobs'; readonly revision: string }
  | ExtensionAction;

/** The writes of our opt-in extensions (docs/features.md#beyond-kruise); the executor is src/cloneset/execute-extensions.ts. */
export type ExtensionAction =
  /** An inactive pod beyond `cloneset-controller.io/inactive-pods-limit` (docs/features.md#inactive-pod-clean-up): deleted, its PVCs kept. */
  | { readonly kind: 'DeleteInactivePod'; readonly pod: PodRef; readonly phase: 'Failed' | 'Succeeded'; readonly limit: number; readonly replacement?: string }
  /**
   * A missed progress deadline (docs/features.md#progress-deadline-action): a JSON patch of the CloneSet that tests
   * the cached resourceVersion (a stale cache gets a 422 and the next pass re-decides), pausing or rolling back.
   */
  | { readonly kind: 'PatchCloneSetForProgressDeadline'; readonly decision: 'pause' | 'rollback'; readonly patch: readonly unknown[]; readonly message: string }
  /**
   * A retained PVC (docs/features.md#pvc-retention-policy): a JSON patch testing the uid (and the CloneSet reference at
   * `ownerRefIndex`, removed), adding the label cloneset-controller.io/retained-by=<cloneSetName>.
   */
  | { readonly kind: 'ReleasePvc'; readonly pvc: PvcRef; readonly ownerRefIndex?: number; readonly ownerUid: string; readonly cloneSetName: string; readonly why: string }
  /** A retained PVC whose instance id has a pod again: the CloneSet's controller reference back, the label gone. */
  | { readonly kind: 'AdoptPvc'; readonly pvc: PvcRef; readonly ownerRef: OwnerReference; readonly cloneSetName: string; readonly hasOwnerRefs: boolean }
  /** docs/features.md#pvc-resize-in-place: the claim's storage request `from` → `to` (a JSON patch testing the uid and `from`). */
  | { readonly kind: 'ResizePvc'; readonly pvc: PvcRef; readonly from: string; readonly to: string }
  /** Annotations merged into a ControllerRevision (the change-cause of a rollback). */
  | { readonly kind: 'AnnotateRevision'; readonly revision: string; readonly annotations: Readonly<Record<string, string>> };

/** A ControllerRevision incarnation. */
export interface RevisionRef {
  readonly name: string;
  readonly uid: string;
  /** Its controller is this CloneSet: the revision informer observes its deletion for this CloneSet's key. */
  readonly controlled: boolean;
}

/** Writes that are housekeeping or an optimisation: their failure is logged and never fails the pass. */
export const BEST_EFFORT_KINDS: ReadonlySet<PlanAction['kind']> = new Set<PlanAction['kind']>([
  'TruncateHistory',
  'TruncatePodsToDelete',
  'CreateImagePullJob',
  'LabelRevision',
  'DeleteImagePullJobs',
  'AnnotateRevision',
]);

export type PlanPhase = 'claim' | 'scale' | 'update' | 'idle';

export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface Plan {
  /** Which phase produced the writes: scaling and updating never happen in the same pass (docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go). */
  readonly phase: PlanPhase;
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  /** Smallest positive delay after which the world must be looked at again, if any. */
  readonly requeueAfterMs?: number;
  /** Human-readable reasons, logged at debug level and asserted in tests. */
  readonly explain: readonly string[];
}

function incarnationOf(obj: Pod | PersistentVolumeClaim): PodRef & PvcRef {
  const { name, uid, resourceVersion } = obj.metadata;
  return { name: name ?? '', uid: uid ?? '', ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
}

export const podRefOf: (pod: Pod) => PodRef = incarnationOf;
export const pvcRefOf: (pvc: PersistentVolumeClaim) => PvcRef = incarnationOf;

export function minDelay(...delays: readonly (number | undefined)[]): number | undefined {
  let best: number | undefined;
  for (const d of delays) if (d !== undefined && d > 0 && (best === undefined || d < best)) best = d;
  return best;
}
