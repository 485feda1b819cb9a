// Kubernetes object shapes as they travel over the wire (JSON): timestamps are RFC 3339 strings, never Date.
// Only the fields the controller reads or writes are named; everything else is kept as unknown so that
// objects round-trip without loss. Cached objects are deep-frozen: treat every type here as read-only.

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string | null;
  readonly deletionTimestamp?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly finalizers?: readonly string[];
  readonly managedFields?: readonly unknown[];
  readonly [key: string]: unknown;
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface Container {
  readonly name: string;
  readonly image?: string;
  readonly imagePullPolicy?: string;
  readonly resources?: {
    readonly limits?: Readonly<Record<string, string>>;
    readonly requests?: Readonly<Record<string, string>>;
    readonly [key: string]: unknown;
  };
  readonly [key: string]: unknown;
}

export interface Volume {
  readonly name: string;
  readonly persistentVolumeClaim?: { readonly claimName: string; readonly readOnly?: boolean };
  readonly [key: string]: unknown;
}

export interface TopologySpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: string;
  readonly labelSelector?: LabelSelector;
  readonly [key: string]: unknown;
}

export interface PodSpec {
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly volumes?: readonly Volume[];
  readonly nodeName?: string;
  readonly readinessGates?: readonly { readonly conditionType: string }[];
  readonly restartPolicy?: string;
  readonly topologySpreadConstraints?: readonly TopologySpreadConstraint[];
  readonly [key: string]: unknown;
}

export interface PodCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string | null;
  readonly lastProbeTime?: string | null;
}

export interface ContainerStatus {
  readonly name: string;
  readonly image?: string;
  readonly imageID?: string;
  readonly containerID?: string;
  readonly ready?: boolean;
  readonly started?: boolean;
  readonly restartCount?: number;
  readonly [key: string]: unknown;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  readonly phase?: PodPhase;
  readonly conditions?: readonly PodCondition[];
  readonly containerStatuses?: readonly ContainerStatus[];
  readonly podIP?: string;
  readonly hostIP?: string;
  readonly startTime?: string;
  readonly [key: string]: unknown;
}

export interface PodTemplateSpec {
  readonly metadata?: ObjectMeta;
  readonly spec: PodSpec;
}

export interface Pod extends KubeObject {
  readonly metadata: ObjectMeta;
  readonly spec: PodSpec;
  readonly status?: PodStatus;
}

export interface PersistentVolumeClaim extends KubeObject {
  readonly metadata: ObjectMeta;
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
}

/** storage.k8s.io/v1 StorageClass: only what PVC expansion needs. */
export interface StorageClass extends KubeObject {
  readonly metadata: ObjectMeta;
  readonly provisioner?: string;
  readonly allowVolumeExpansion?: boolean;
}

export interface ControllerRevision extends KubeObject {
  readonly metadata: ObjectMeta;
  /** Kruise stores `{"spec":{"template":{...,"$patch":"replace"}}}` here (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go). */
  readonly data?: unknown;
  readonly revision: number;
}

export interface Node extends KubeObject {
  readonly metadata: ObjectMeta;
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
}

/** A list response of any kind. */
export interface KubeList<T> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string; readonly remainingItemCount?: number };
  readonly items: readonly T[];
}
