// The CustomResourceDefinition of clonesets.apps.kruise.io, written once, here, as TypeScript: v1alpha1
// (served) and v1beta1 (served and stored, as Kruise HEAD), converted by the webhook at /convert
// (src/api/conversion.ts). Each version's OpenAPI schema is typed against its interfaces (api/cloneset.ts,
// api/cloneset-v1beta1.ts):
// `SchemaFor<CloneSet>` demands a schema for every field of the interface (a field missing here is a
// compile error), rejects fields the interface does not have (excess property check), demands
// `required: true` on exactly the non-optional fields, and ties each schema kind to the field's type
// (string, integer, boolean, int-or-string, array, map, object, embedded object).
// `hack/gen-crd.ts` renders it to config/crd/apps.kruise.io_clonesets.yaml; a unit test fails when that
// file is stale.
//
// Compatibility with Kruise's CRD: same names, short name `clone`, no categories, same subresources and
// printer columns; `spec.template` and each volume claim template are schemaless objects with
// x-kubernetes-preserve-unknown-fields. Deliberate additions, so that the cheap checks and defaults hold even while
// no admission webhook answers (the webhook, src/webhook/, does Kruise's full defaulting and validation; CEL rules
// are added by hack/gen-crd.ts through src/admission/cel-rules.ts):
// * validation Kruise's webhook does (and nothing stricter): replicas >= 0, progressDeadlineSeconds >= 0
//   (v1alpha1), updateStrategy.type ∈ {ReCreate, InPlaceIfPossible, InPlaceOnly} (v1alpha1,
//   where Kruise's admission rejects OnDelete too) or {RollingUpdate, OnDelete, ""} (v1beta1), selector operators
//   ∈ {In, NotIn, Exists, DoesNotExist}, priority weight in [0, 100];
// * structural defaults for what Kruise's mutating webhook defaults unconditionally: replicas 1,
//   revisionHistoryLimit 10, v1alpha1 updateStrategy {type ReCreate, partition 0, maxUnavailable "20%",
//   maxSurge 0}. v1beta1 gets only replicas, revisionHistoryLimit and Kruise's own `enablePVCReuse: false`:
//   its rollingUpdate block must stay absent for OnDelete, which a structural default cannot express;
// * status.conditions[].lastUpdateTime (Kruise's types have it; its published CRD predates it, so the
//   status subresource would prune it).
import { stringify } from 'yaml';
import {
  GROUP,
  KIND,
  PLURAL,
  STORAGE_VERSION,
  VERSION,
  type CloneSet,
  type CloneSetStatus,
  type InPlaceUpdateStrategy,
  type IntOrString,
  type Lifecycle,
  type LifecycleHook,
  type UpdatePriorityStrategy,
  type UpdateScatterTerm,
} from './cloneset.ts';
import type { CloneSetV1beta1 } from './cloneset-v1beta1.ts';
import type { LabelSelector, ObjectMeta, PersistentVolumeClaim, PodTemplateSpec } from '../kube/types.ts';

// ---------------------------------------------------------------------------------------------------
// Schema types

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

interface Described {
  readonly description?: string;
}
export interface StringSchema<T extends string> extends Described {
  readonly type: 'string';
  readonly format?: 'date-time';
  readonly enum?: readonly T[];
  readonly default?: T;
}
export interface IntegerSchema extends Described {
  readonly type: 'integer';
  readonly format: 'int32' | 'int64';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}
export interface BooleanSchema extends Described {
  readonly type: 'boolean';
  readonly default?: boolean;
}
export interface IntOrStringSchema extends Described {
  readonly anyOf: readonly [{ readonly type: 'integer' }, { readonly type: 'string' }];
  readonly 'x-kubernetes-int-or-string': true;
  readonly default?: IntOrString;
}
export interface ArraySchema<E> extends Described {
  readonly type: 'array';
  readonly items: SchemaFor<E>;
}
export interface MapSchema<V> extends Described {
  readonly type: 'object';
  readonly additionalProperties: SchemaFor<V>;
}
export interface ObjectSchema<T> extends Described {
  readonly type: 'object';
  readonly properties: PropertiesFor<T>;
  readonly 'x-kubernetes-map-type'?: 'atomic';
  readonly default?: Readonly<Record<string, never>>;
}
/** An object kept as-is by the API server (Kruise's schemaless pod and claim templates). */
export interface EmbeddedObjectSchema extends Described {
  readonly type: 'object';
  readonly 'x-kubernetes-preserve-unknown-fields': true;
}
/** The root metadata: the API server validates it itself; a CRD may only say `type: object`. */
export interface MetadataSchema {
  readonly type: 'object';
}

/** On a property: the parent object lists it under `required` (exactly the interface's non-optional fields). */
export interface RequiredMark {
  readonly required: true;
}

/**
 * The schema of the property K of T: required properties carry the mark, optional ones must not. The empty object
 * type (`Record<never, never>`, i.e. `{}`) extends `Pick<T, K>` exactly when K is optional.
 */
type PropertySchema<T, K extends keyof T> =
  Record<never, never> extends Pick<T, K> ? SchemaFor<NonNullable<T[K]>> : Equals<T[K], ObjectMeta> extends true ? MetadataSchema : SchemaFor<NonNullable<T[K]>> & RequiredMark;

export type PropertiesFor<T> = { readonly [K in keyof T]-?: PropertySchema<T, K> };

/** The OpenAPI v3 schema kind a TypeScript type must be described with. */
export type SchemaFor<T> =
  Equals<T, ObjectMeta> extends true
    ? MetadataSchema
    : Equals<T, PodTemplateSpec> extends true
      ? EmbeddedObjectSchema
      : Equals<T, PersistentVolumeClaim> extends true
        ? EmbeddedObjectSchema
        : Equals<T, IntOrString> extends true
          ? IntOrStringSchema
          : [T] extends [string]
            ? StringSchema<T>
            : [T] extends [number]
              ? IntegerSchema
              : [T] extends [boolean]
                ? BooleanSchema
                : [T] extends [readonly (infer E)[]]
                  ? ArraySchema<E>
                  : string extends keyof T
                    ? MapSchema<T[string]>
                    : [T] extends [object]
                      ? ObjectSchema<T>
                      : never;

// ---------------------------------------------------------------------------------------------------
// The schema

const int32 = (description: string, extra: Omit<IntegerSchema, 'type' | 'format' | 'description'> = {}): IntegerSchema => ({
  type: 'integer',
  format: 'int32',
  description,
  ...extra,
});
const intOrString = (description: string, extra: { default?: IntOrString } = {}): IntOrStringSchema => ({
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
  description,
  ...extra,
});
const str = (description: string): StringSchema<string> => ({ type: 'string', description });
const bool = (description: string): BooleanSchema => ({ type: 'boolean', description });
const stringList = (description: string): ArraySchema<string> => ({ type: 'array', items: { type: 'string' }, description });
const stringMap = (description: string): MapSchema<string> => ({ type: 'object', additionalProperties: { type: 'string' }, description });

function labelSelector(description: string): ObjectSchema<LabelSelector> {
  return {
    type: 'object',
    description,
    'x-kubernetes-map-type': 'atomic',
    properties: {
      matchLabels: stringMap('Label key/value pairs; each pair is a requirement "key equals value". All requirements are ANDed.'),
      matchExpressions: {
        type: 'array',
        description: 'Set-based requirements, ANDed.',
        items: {
          type: 'object',
          description: 'A requirement on one label key.',
          properties: {
            key: { type: 'string', description: 'The label key.', required: true },
            operator: {
              type: 'string',
              description: 'How the key relates to the values.',
              enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
              required: true,
            },
            values: stringList('Values for In and NotIn (non-empty); must be empty for Exists and DoesNotExist.'),
          },
        },
      },
    },
  };
}

function lifecycleHook(description: string): ObjectSchema<LifecycleHook> {
  return {
    type: 'object',
    description,
    properties: {
      labelsHandler: stringMap('Labels whose presence (with these values) on a pod holds the pod in the hook state.'),
      finalizersHandler: stringList('Finalizers whose presence on a pod holds the pod in the hook state.'),
      markPodNotReady: bool('Set the pod condition KruisePodReady to False while in the hook state (preDelete and inPlaceUpdate only). Default false.'),
    },
  };
}

const priorityAndScatter: {
  readonly priorityStrategy: SchemaFor<UpdatePriorityStrategy>;
  readonly scatterStrategy: SchemaFor<readonly UpdateScatterTerm[]>;
} = {
  priorityStrategy: {
    type: 'object',
    description: 'Update order by pod labels; only one of weightPriority and orderPriority may be set.',
    properties: {
      weightPriority: {
        type: 'array',
        description: 'Pods are ordered by the sum of the weights of the terms they match (higher first).',
        items: {
          type: 'object',
          description: 'A weighted label selector.',
          properties: {
            weight: { ...int32('Weight of the term, 0 to 100.', { minimum: 0, maximum: 100 }), required: true },
            matchSelector: { ...labelSelector('Pods whose labels match get the weight.'), required: true },
          },
        },
      },
      orderPriority: {
        type: 'array',
        description: 'Pods are ordered by the integer in the value of the first of these label keys they carry.',
        items: {
          type: 'object',
          description: 'A label key to order by.',
          properties: {
            orderedKey: { type: 'string', description: 'Label key; its value is ordered by the last integer it contains.', required: true },
          },
        },
      },
    },
  },
  scatterStrategy: {
    type: 'array',
    description: 'Label key/value pairs whose pods are spread over the update order instead of updated together.',
    items: {
      type: 'object',
      description: 'A label key and value.',
      properties: {
        key: { type: 'string', description: 'Label key.', required: true },
        value: { type: 'string', description: 'Label value.', required: true },
      },
    },
  },
};

function inPlaceUpdateStrategy(): ObjectSchema<InPlaceUpdateStrategy> {
  return {
    type: 'object',
    description: 'Options of in-place update.',
    properties: {
      gracePeriodSeconds: int32('Seconds between marking a pod not ready and updating its containers in place.'),
      imagePreDownloadParallelism: intOrString('ImagePullJob parallelism for pre-downloading the new images (integer; default 1).'),
      imagePreDownloadTimeoutSeconds: int32('ImagePullJob timeout in seconds (default 300).'),
      imagePreDownloadMinUpdatedReadyPods: int32('Updated ready pods required before images are pre-downloaded (default 0).'),
    },
  };
}

const lifecycle: ObjectSchema<Lifecycle> = {
  type: 'object',
  description: 'Hooks that hold pods in intermediate states.',
  properties: {
    preDelete: lifecycleHook('Hook before a pod is deleted (state PreparingDelete).'),
    inPlaceUpdate: lifecycleHook('Hook around an in-place update (states PreparingUpdate, Updated).'),
    preNormal: lifecycleHook('Hook after a pod is created, before it becomes Normal (state PreparingNormal).'),
  },
};

const statusSchema: ObjectSchema<CloneSetStatus> = {
  type: 'object',
  description: 'The observed state of the CloneSet.',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', description: 'The generation the controller last acted on.' },
    replicas: { ...int32('Number of active pods.'), required: true },
    readyReplicas: { ...int32('Number of ready pods.'), required: true },
    availableReplicas: { ...int32('Number of pods ready for at least minReadySeconds and in lifecycle state Normal.'), required: true },
    updatedReplicas: { ...int32('Number of pods at the update revision.'), required: true },
    updatedReadyReplicas: { ...int32('Number of ready pods at the update revision.'), required: true },
    updatedAvailableReplicas: int32('Number of available pods at the update revision.'),
    expectedUpdatedReplicas: int32('Number of pods that should be at the update revision: replicas minus partition.'),
    updateRevision: str('Name of the ControllerRevision of the current template.'),
    currentRevision: str('Name of the ControllerRevision all pods were last fully updated to.'),
    collisionCount: int32('Count of hash collisions, used to name new ControllerRevisions.'),
    conditions: {
      type: 'array',
      description: 'Observations of the CloneSet state.',
      items: {
        type: 'object',
        description: 'A condition of the CloneSet.',
        properties: {
          type: { type: 'string', description: 'FailedScale, FailedUpdate or Progressing.', required: true },
          status: { type: 'string', description: 'True, False or Unknown.', required: true },
          lastUpdateTime: { type: 'string', format: 'date-time', description: 'Last time the condition was updated.' },
          lastTransitionTime: { type: 'string', format: 'date-time', description: 'Last time the status changed.' },
          reason: str('Machine-readable reason of the last transition.'),
          message: str('Human-readable details.'),
        },
      },
    },
    labelSelector: str('The selector in string form (for the scale subresource / HPA).'),
  },
};

/** The fields both versions share, with the same schema. */
const commonSpec = {
  replicas: int32('Desired number of pods. Defaults to 1.', { minimum: 0, default: 1 }),
  selector: { ...labelSelector('Label query over the pods this CloneSet manages; must match the template labels. Immutable.'), required: true },
  template: {
    type: 'object',
    description: 'The pod template (a core/v1 PodTemplateSpec).',
    'x-kubernetes-preserve-unknown-fields': true,
    required: true,
  },
  volumeClaimTemplates: {
    type: 'array',
    description: 'PVC templates; each pod gets one claim per template, deleted together with the pod.',
    items: {
      type: 'object',
      description: 'A core/v1 PersistentVolumeClaim template.',
      'x-kubernetes-preserve-unknown-fields': true,
    },
  },
  revisionHistoryLimit: int32('Number of unused ControllerRevisions kept. Default 10.', { default: 10 }),
  minReadySeconds: int32('Seconds a pod must be ready before it counts as available. Default 0.'),
  lifecycle,
} as const;

const podsToDelete = stringList('Names of pods to delete; names that are not pods of this CloneSet are removed from the list.');
const scaleMaxUnavailable = intOrString('Upper limit of unavailable pods while scaling up (number or percent of replicas); unset means no limit.');
const excludePreparingDelete = bool('Do not count pods in lifecycle state PreparingDelete toward replicas. Default false.');

export const cloneSetSchema: SchemaFor<CloneSet> = {
  type: 'object',
  description: 'CloneSet manages a set of interchangeable pods, with in-place update, partitioned rollout and per-pod PVCs.',
  properties: {
    apiVersion: str('The versioned schema of this object (apps.kruise.io/v1alpha1).'),
    kind: str('The kind of this object (CloneSet).'),
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      description: 'The desired state of the CloneSet.',
      required: true,
      properties: {
        ...commonSpec,
        scaleStrategy: {
          type: 'object',
          description: 'How pods are created and deleted.',
          properties: {
            podsToDelete,
            maxUnavailable: scaleMaxUnavailable,
            disablePVCReuse: bool('When true, PVCs of pods that disappeared are deleted instead of reused by new pods. Default false.'),
            excludePreparingDelete,
          },
        },
        updateStrategy: {
          type: 'object',
          description: 'How pods are updated when the template changes.',
          default: {},
          properties: {
            type: {
              type: 'string',
              description:
                'ReCreate (default), InPlaceIfPossible or InPlaceOnly. OnDelete exists only in apps.kruise.io/v1beta1: a v1beta1 OnDelete CloneSet reads as OnDelete here but cannot be written through this version (as in Kruise).',
              enum: ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'],
              default: 'ReCreate',
            },
            partition: intOrString('Number or percent of pods to keep at old revisions. Default 0.', { default: 0 }),
            maxUnavailable: intOrString('Upper limit of unavailable pods during update or scale (number or percent; percent rounds up unless maxSurge > 0). Default 20%.', {
              default: '20%',
            }),
            maxSurge: intOrString('Pods that may be created above the desired replicas during update (number or percent, rounded up). Default 0.', {
              default: 0,
            }),
            paused: bool('Stop updating pods (scaling goes on). Default false.'),
            ...priorityAndScatter,
            inPlaceUpdateStrategy: inPlaceUpdateStrategy(),
          },
        },
        progressDeadlineSeconds: int32('Seconds a rollout may take before the Progressing condition reports ProgressDeadlineExceeded.', { minimum: 0 }),
      },
    },
    status: statusSchema,
  },
};

export const cloneSetV1beta1Schema: SchemaFor<CloneSetV1beta1> = {
  type: 'object',
  description: 'CloneSet manages a set of interchangeable pods, with in-place update, partitioned rollout and per-pod PVCs.',
  properties: {
    apiVersion: str('The versioned schema of this object (apps.kruise.io/v1beta1).'),
    kind: str('The kind of this object (CloneSet).'),
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      description: 'The desired state of the CloneSet.',
      required: true,
      properties: {
        ...commonSpec,
        scaleStrategy: {
          type: 'object',
          description: 'How pods are created and deleted.',
          properties: {
            podsToDelete,
            maxUnavailable: scaleMaxUnavailable,
            enablePVCReuse: { ...bool('When true, new pods reuse the PVCs of pods that disappeared (same instance id). Default false.'), default: false },
            excludePreparingDelete,
          },
        },
        updateStrategy: {
          type: 'object',
          description: 'How pods are updated when the template changes.',
          properties: {
            type: {
              type: 'string',
              description: 'RollingUpdate (default): the controller updates pods as rollingUpdate says; OnDelete: pods move to the new revision only when deleted.',
              enum: ['RollingUpdate', 'OnDelete', ''],
            },
            rollingUpdate: {
              type: 'object',
              description: 'How a RollingUpdate proceeds.',
              properties: {
                partition: intOrString('Number or percent of pods to keep at old revisions. Default 0.'),
                maxUnavailable: intOrString('Upper limit of unavailable pods during update or scale (number or percent; percent rounds up unless maxSurge > 0). Default 20%.'),
                maxSurge: intOrString('Pods that may be created above the desired replicas during update (number or percent, rounded up). Default 0.'),
                podUpdatePolicy: {
                  type: 'string',
                  description: 'ReCreate (default), InPlaceIfPossible or InPlaceOnly.',
                  enum: ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'],
                },
                paused: bool('Stop updating pods (scaling goes on). Default false.'),
                ...priorityAndScatter,
                inPlaceUpdateStrategy: inPlaceUpdateStrategy(),
              },
            },
          },
        },
        progressDeadlineSeconds: int32('Seconds a rollout may take before the Progressing condition reports ProgressDeadlineExceeded.'),
      },
    },
    status: statusSchema,
  },
};

// ---------------------------------------------------------------------------------------------------
// The CRD

const printerColumns = [
  { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired number of pods.' },
  { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'Pods at the update revision.' },
  { name: 'UPDATED_READY', type: 'integer', jsonPath: '.status.updatedReadyReplicas', description: 'Ready pods at the update revision.' },
  {
    name: 'UPDATED_AVAILABLE',
    type: 'integer',
    jsonPath: '.status.updatedAvailableReplicas',
    description: 'Available pods at the update revision.',
  },
  { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods.' },
  { name: 'TOTAL', type: 'integer', jsonPath: '.status.replicas', description: 'All active pods.' },
  { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation.' },
  { name: 'CONTAINERS', type: 'string', priority: 1, jsonPath: '.spec.template.spec.containers[*].name', description: 'Container names.' },
  { name: 'IMAGES', type: 'string', priority: 1, jsonPath: '.spec.template.spec.containers[*].image', description: 'Container images.' },
  { name: 'SELECTOR', type: 'string', priority: 1, jsonPath: '.status.labelSelector', description: 'Label selector of the pods.' },
] as const;

type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };

/** The schema as plain OpenAPI: `required: true` marks turned into the parent's sorted `required` list. */
export function toOpenApi(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map((s: unknown) => toOpenApi(s));
  if (typeof schema !== 'object' || schema === null) return schema as Json;
  const src = schema as Readonly<Record<string, unknown>>;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'required' && v === true) continue;
    if (k === 'properties' && typeof v === 'object' && v !== null) {
      const props: Record<string, Json> = {};
      const required: string[] = [];
      for (const [name, p] of Object.entries(v as Readonly<Record<string, unknown>>)) {
        if (typeof p === 'object' && p !== null && (p as { required?: unknown }).required === true) required.push(name);
        props[name] = toOpenApi(p);
      }
      out['properties'] = props;
      if (required.length > 0) out['required'] = required.sort();
      continue;
    }
    out[k] = toOpenApi(v);
  }
  return out;
}

export const WEBHOOK_SERVICE = 'cloneset-controller-webhook-service';
export const WEBHOOK_NAMESPACE = 'cloneset-system';

const versionCommon = {
  additionalPrinterColumns: printerColumns,
  subresources: {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
  },
} as const;

/** The full CustomResourceDefinition object. */
export function cloneSetCrd(): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: `${KIND}List`, plural: PLURAL, singular: 'cloneset', shortNames: ['clone'] },
      scope: 'Namespaced',
      versions: [
        { name: VERSION, served: true, storage: false, ...versionCommon, schema: { openAPIV3Schema: toOpenApi(cloneSetSchema) } },
        { name: STORAGE_VERSION, served: true, storage: true, ...versionCommon, schema: { openAPIV3Schema: toOpenApi(cloneSetV1beta1Schema) } },
      ],
      // The API server sends ConversionReviews to the webhook process; it writes caBundle (and, on the local
      // control plane, a URL instead of the Service) when it starts (src/webhook/).
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { service: { name: WEBHOOK_SERVICE, namespace: WEBHOOK_NAMESPACE, path: '/convert', port: 443 } },
        },
      },
    },
  };
}

export const CRD_HEADER = '# Generated by `node hack/gen-crd.ts` from src/api/crd-schema.ts. Do not edit.\n';

/** The YAML written to config/crd/apps.kruise.io_clonesets.yaml (keys sorted, as controller-gen does). */
export function renderCrdYaml(): string {
  return CRD_HEADER + stringify(cloneSetCrd(), { sortMapEntries: true, lineWidth: 120 });
}
