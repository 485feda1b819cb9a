// Label, annotation, condition and gate strings shared with OpenKruise (Kruise apis/apps/v1beta1/well_known_labels.go). Exact values: a CloneSet
// written for Kruise must work unchanged, so these never change.

export const LABEL_REVISION_HASH = 'controller-revision-hash';
export const LABEL_POD_TEMPLATE_HASH = 'pod-template-hash';
export const LABEL_INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';
export const LABEL_LIFECYCLE_STATE = 'lifecycle.apps.kruise.io/state';
export const ANNOTATION_LIFECYCLE_TIMESTAMP = 'lifecycle.apps.kruise.io/timestamp';
export const LABEL_SPECIFIED_DELETE = 'apps.kruise.io/specified-delete';
export const ANNOTATION_INPLACE_UPDATE_STATE = 'apps.kruise.io/inplace-update-state';
export const ANNOTATION_INPLACE_UPDATE_GRACE = 'apps.kruise.io/inplace-update-grace';
export const ANNOTATION_POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
/** On the CloneSet: v1alpha1 switch for excluding PreparingDelete pods from the replica count. */
export const LABEL_SCALING_EXCLUDE_PREPARING_DELETE = 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';

/** ControllerRevision label holding the hash, and the annotation for the volume claim templates hash. */
export const LABEL_CONTROLLER_REVISION_HASH = 'controller.kubernetes.io/hash';
export const ANNOTATION_VCT_HASH = 'kruise.io/cloneset-volumeclaimtemplate-hash';

export const CONDITION_INPLACE_UPDATE_READY = 'InPlaceUpdateReady';
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';

export type LifecycleState = 'PreparingNormal' | 'Normal' | 'PreparingUpdate' | 'Updating' | 'Updated' | 'PreparingDelete';

export const DEFAULT_MAX_UNAVAILABLE = '20%';
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

/** Kruise feature gates that change CloneSet behaviour, with Kruise's defaults (docs/features.md#feature-gates; Kruise pkg/features/kruise_features.go). */
export const FEATURE_GATE_DEFAULTS = {
  CloneSetShortHash: false,
  CloneSetPartitionRollback: false,
  PreparingUpdateAsUpdate: false,
  CloneSetEventHandlerOptimization: false,
  RecreatePodWhenChangeVCTInCloneSetGate: false,
  InPlaceWorkloadVerticalScaling: false,
  InPlaceUpdateEnvFromMetadata: true,
  PreDownloadImageForInPlaceUpdate: false,
  KruiseDaemon: true,
  PodUnavailableBudgetUpdateGate: false,
  ForceDeleteTimeoutExpectationGate: false,
  TemplateNoDefaults: false,
  DefaultHostNetworkHostPortsInPodTemplates: false,
  ResourcesDeletionProtection: false,
  PodWebhook: true,
  KruisePodReadinessGate: false,
} as const;

export type FeatureGateName = keyof typeof FEATURE_GATE_DEFAULTS;
export type FeatureGates = Readonly<Record<FeatureGateName, boolean>>;
