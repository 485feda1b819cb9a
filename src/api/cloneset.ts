// The CloneSet API, apps.kruise.io/v1alpha1: types and constants only. These interfaces are also the
// controller's one internal model: the controller watches the storage version (v1beta1, see
// cloneset-v1beta1.ts) and maps each object to this shape with `cloneSetFromV1beta1` (conversion.ts), so the
// planner reads one shape whatever version a user wrote. The shape is Kruise HEAD's v1alpha1
// (apis/apps/v1alpha1/cloneset_types.go in openkruise/kruise): the update type includes OnDelete, the scale
// strategy has excludePreparingDelete and the in-place strategy (apis/apps/pub, shared by both versions) has
// the image pre-download fields. Field meanings: docs/features.md#v1beta1-and-conversion, #status-counters (Kruise apis/apps/v1alpha1/cloneset_types.go). The CRD schema in src/api/crd-schema.ts is
// typed against these interfaces, so the two cannot drift (see that file).
import type { LabelSelector, ObjectMeta, PersistentVolumeClaim, PodTemplateSpec } from '../kube/types.ts';

export const GROUP = 'apps.kruise.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The storage version, which the controller watches and writes status through (Kruise HEAD's hub). */
export const STORAGE_VERSION = 'v1beta1';
export const STORAGE_API_VERSION = `${GROUP}/${STORAGE_VERSION}`;
/** The apiVersion of the owner references the controller writes (Kruise HEAD writes v1beta1, docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/core/cloneset_core.go). */
export const OWNER_API_VERSION = STORAGE_API_VERSION;
export const KIND = 'CloneSet';
export const PLURAL = 'clonesets';

/** An integer, or a string such as "20%" (Kubernetes IntOrString). */
export type IntOrString = number | string;

/**
 * OnDelete: pods move to the new revision only when someone deletes them. In v1alpha1 Kruise's admission
 * rejects it (write it through v1beta1); internally it marks a v1beta1 `type: OnDelete` CloneSet.
 */
export type CloneSetUpdateStrategyType = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly' | 'OnDelete';

export interface LifecycleHook {
  readonly labelsHandler?: Readonly<Record<string, string>>;
  readonly finalizersHandler?: readonly string[];
  /** Only meaningful for preDelete and inPlaceUpdate. */
  readonly markPodNotReady?: boolean;
}

export interface Lifecycle {
  readonly preDelete?: LifecycleHook;
  readonly inPlaceUpdate?: LifecycleHook;
  readonly preNormal?: LifecycleHook;
}

export interface UpdatePriorityWeightTerm {
  readonly weight: number;
  readonly matchSelector: LabelSelector;
}

export interface UpdatePriorityOrderTerm {
  readonly orderedKey: string;
}

export interface UpdatePriorityStrategy {
  readonly weightPriority?: readonly UpdatePriorityWeightTerm[];
  readonly orderPriority?: readonly UpdatePriorityOrderTerm[];
}

export interface UpdateScatterTerm {
  readonly key: string;
  readonly value: string;
}

export interface InPlaceUpdateStrategy {
  readonly gracePeriodSeconds?: number;
  /** ImagePullJob parallelism (integer; nil = 1). v1alpha1 users write the parallelism annotation instead. */
  readonly imagePreDownloadParallelism?: IntOrString;
  /** ImagePullJob timeout (nil = 300). */
  readonly imagePreDownloadTimeoutSeconds?: number;
  /** Updated ready pods required before the jobs are created (nil = 0). */
  readonly imagePreDownloadMinUpdatedReadyPods?: number;
}

export interface CloneSetScaleStrategy {
  readonly podsToDelete?: readonly string[];
  /** Limits unavailable pods while scaling up (nil = unlimited). */
  readonly maxUnavailable?: IntOrString;
  /** v1alpha1: false (default) means PVCs of vanished pods are reused. */
  readonly disablePVCReuse?: boolean;
  /** PreparingDelete pods are not counted toward replicas (v1alpha1 also: the CloneSet label). */
  readonly excludePreparingDelete?: boolean;
}

export interface CloneSetUpdateStrategy {
  readonly type?: CloneSetUpdateStrategyType;
  readonly partition?: IntOrString;
  readonly maxUnavailable?: IntOrString;
  readonly maxSurge?: IntOrString;
  readonly paused?: boolean;
  readonly priorityStrategy?: UpdatePriorityStrategy;
  readonly scatterStrategy?: readonly UpdateScatterTerm[];
  readonly inPlaceUpdateStrategy?: InPlaceUpdateStrategy;
}

export interface CloneSetSpec {
  readonly replicas?: number;
  readonly selector: LabelSelector;
  readonly template: PodTemplateSpec;
  readonly volumeClaimTemplates?: readonly PersistentVolumeClaim[];
  readonly scaleStrategy?: CloneSetScaleStrategy;
  readonly updateStrategy?: CloneSetUpdateStrategy;
  readonly revisionHistoryLimit?: number;
  readonly minReadySeconds?: number;
  readonly lifecycle?: Lifecycle;
  readonly progressDeadlineSeconds?: number;
}

export type CloneSetConditionType = 'FailedScale' | 'FailedUpdate' | 'Progressing' | ExtensionConditionType;

/** Conditions only our opt-in extensions write (docs/features.md#beyond-kruise); a Kruise CloneSet never gets them. */
export type ExtensionConditionType = 'ProgressDeadlineActionTaken' | 'PVCResize';

export type ProgressingReason = 'CloneSetUpdated' | 'CloneSetAvailable' | 'CloneSetPaused' | 'ProgressPartitionAvailable' | 'ProgressDeadlineExceeded';

export interface CloneSetCondition {
  readonly type: CloneSetConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly lastUpdateTime?: string;
  readonly lastTransitionTime?: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface CloneSetStatus {
  readonly observedGeneration?: number;
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
  readonly updatedReplicas: number;
  readonly updatedReadyReplicas: number;
  readonly updatedAvailableReplicas?: number;
  readonly expectedUpdatedReplicas?: number;
  readonly updateRevision?: string;
  readonly currentRevision?: string;
  readonly collisionCount?: number;
  readonly conditions?: readonly CloneSetCondition[];
  readonly labelSelector?: string;
}

export interface CloneSet {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec: CloneSetSpec;
  readonly status?: CloneSetStatus;
}
