// The CloneSet API, apps.kruise.io/v1beta1 (served and stored, the "hub" as in Kruise HEAD): types only.
// Shape of apis/apps/v1beta1/cloneset_types.go in openkruise/kruise (docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1beta1/cloneset_types.go): the update strategy is
// `type` (RollingUpdate | OnDelete) plus a `rollingUpdate` block, PVC reuse is opt-in (`enablePVCReuse`),
// excludePreparingDelete and the image pre-download tuning are fields. Sub-types and the status are shared
// with v1alpha1 (cloneset.ts). The v1beta1 CRD schema (crd-schema.ts) is typed against these interfaces.
import type { LabelSelector, ObjectMeta, PersistentVolumeClaim, PodTemplateSpec } from '../kube/types.ts';
import type { CloneSetStatus, InPlaceUpdateStrategy, IntOrString, Lifecycle, UpdatePriorityStrategy, UpdateScatterTerm } from './cloneset.ts';

/** "" is accepted by Kruise's admission and means RollingUpdate. */
export type CloneSetUpdateStrategyTypeV1beta1 = 'RollingUpdate' | 'OnDelete' | '';
export type CloneSetPodUpdatePolicy = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';

export interface CloneSetScaleStrategyV1beta1 {
  readonly podsToDelete?: readonly string[];
  /** Limits unavailable pods while scaling up (nil = unlimited). */
  readonly maxUnavailable?: IntOrString;
  /** v1beta1: PVCs of vanished pods are reused only when true (default false). */
  readonly enablePVCReuse?: boolean;
  readonly excludePreparingDelete?: boolean;
}

export interface RollingUpdateCloneSetStrategy {
  readonly partition?: IntOrString;
  readonly maxUnavailable?: IntOrString;
  readonly maxSurge?: IntOrString;
  readonly podUpdatePolicy?: CloneSetPodUpdatePolicy;
  readonly paused?: boolean;
  readonly priorityStrategy?: UpdatePriorityStrategy;
  readonly scatterStrategy?: readonly UpdateScatterTerm[];
  readonly inPlaceUpdateStrategy?: InPlaceUpdateStrategy;
}

export interface CloneSetUpdateStrategyV1beta1 {
  readonly type?: CloneSetUpdateStrategyTypeV1beta1;
  /** Absent for OnDelete (Kruise's conversion drops it); present for RollingUpdate (the webhook creates it). */
  readonly rollingUpdate?: RollingUpdateCloneSetStrategy;
}

export interface CloneSetSpecV1beta1 {
  readonly replicas?: number;
  readonly selector: LabelSelector;
  readonly template: PodTemplateSpec;
  readonly volumeClaimTemplates?: readonly PersistentVolumeClaim[];
  readonly scaleStrategy?: CloneSetScaleStrategyV1beta1;
  readonly updateStrategy?: CloneSetUpdateStrategyV1beta1;
  readonly revisionHistoryLimit?: number;
  readonly minReadySeconds?: number;
  readonly lifecycle?: Lifecycle;
  readonly progressDeadlineSeconds?: number;
}

export interface CloneSetV1beta1 {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec: CloneSetSpecV1beta1;
  readonly status?: CloneSetStatus;
}
