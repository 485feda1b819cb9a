// Can this revision change be applied in place, and what exactly changes (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go, Kruise `CalculateSpec`)?
// Pure: the decision is made from the two revisions' pod templates (the `data` of the ControllerRevisions
// with the `/spec/template` prefix removed) and the volume-claim-template hash annotations.
import type { FeatureGates } from '../../api/well-known.ts';
import type { Container, PodSpec, PodTemplateSpec } from '../../kube/types.ts';
import { createJsonPatch, unescapePointerToken, type JsonPatchOp } from '../../api/json-diff.ts';
import { compareQuantities, tryParseQuantity } from './quantity.ts';

/** What the engine needs to know about a revision. */
export interface InPlaceRevision {
  readonly name: string;
  readonly template: PodTemplateSpec;
  /** Annotation `kruise.io/cloneset-volumeclaimtemplate-hash` of the revision; undefined when absent. */
  readonly vctHash?: string | undefined;
}

export interface ResourceChange {
  readonly limits?: Readonly<Record<string, string>>;
  readonly requests?: Readonly<Record<string, string>>;
}

export interface RefMetadata {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Strategic merge patch of the template metadata: `{"metadata":{"labels":{"a":"2","gone":null}}}`. */
export type MetadataPatch = { readonly metadata: Readonly<Record<string, unknown>> };

/** Kruise's UpdateSpec (the grace annotation serialises it, state.ts). */
export interface UpdateSpec {
  readonly revision: string;
  readonly containerImages: Readonly<Record<string, string>>;
  readonly containerRefMetadata: Readonly<Record<string, RefMetadata>>;
  readonly containerResources: Readonly<Record<string, ResourceChange>>;
  readonly metaDataPatch?: MetadataPatch;
  readonly updateEnvFromMetadata: boolean;
  readonly graceSeconds: number;
}

export interface SpecOptions {
  readonly gates: FeatureGates;
  /** `inPlaceUpdateStrategy.gracePeriodSeconds` (0 when unset). */
  readonly gracePeriodSeconds: number;
  /** True for InPlaceOnly: a volumeClaimTemplates change never forces a re-creation. */
  readonly ignoreVolumeClaimTemplatesHashDiff: boolean;
}

export type SpecDecision = { readonly inPlace: true; readonly spec: UpdateSpec } | { readonly inPlace: false; readonly reason: string };

const IMAGE_PATH = /^\/spec\/containers\/(\d+)\/image$/;
const RESOURCE_PATH = /^\/spec\/containers\/(\d+)\/resources\/(limits|requests)\/([^/]+)$/;
/** Env vars SidecarSet injects: never counted as taken from the pod's metadata. */
export const SIDECARSET_ENVS: ReadonlySet<string> = new Set(['SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);

/** InPlaceUpdateEnvFromMetadata is forced off when KruiseDaemon is off (docs/features.md#feature-gates; Kruise pkg/features/kruise_features.go). */
export function envFromMetadataEnabled(gates: FeatureGates): boolean {
  return gates.InPlaceUpdateEnvFromMetadata && gates.KruiseDaemon;
}

const no = (reason: string): SpecDecision => ({ inPlace: false, reason });

export function calculateUpdateSpec(oldRev: InPlaceRevision | undefined, newRev: InPlaceRevision | undefined, opts: SpecOptions): SpecDecision {
  if (oldRev === undefined) return no('the revision of the pod is not found');
  if (newRev === undefined) return no('the target revision is not found');
  if (opts.gates.RecreatePodWhenChangeVCTInCloneSetGate && !opts.ignoreVolumeClaimTemplatesHashDiff) {
    if (oldRev.vctHash !== undefined && newRev.vctHash !== undefined && oldRev.vctHash !== newRev.vctHash) {
      return no('volumeClaimTemplates changed (RecreatePodWhenChangeVCTInCloneSetGate)');
    }
  }
  const ops = createJsonPatch(oldRev.template, newRev.template);
  const oldContainers = oldRev.template.spec.containers;
  const images: Record<string, string> = {};
  const resources: Record<string, { limits?: Record<string, string>; requests?: Record<string, string> }> = {};
  const metadataOps: JsonPatchOp[] = [];
  for (const op of ops) {
    if (op.path.startsWith('/metadata/')) {
      metadataOps.push(op);
      continue;
    }
    if (!op.path.startsWith('/spec/')) return no(`${op.op} of ${op.path} cannot be applied in place`);
    if (op.op !== 'replace') return no(`${op.op} of ${op.path} cannot be applied in place`);
    const image = IMAGE_PATH.exec(op.path);
    if (image !== null) {
      const c = oldContainers[Number(image[1])];
      if (c === undefined || typeof op.value !== 'string') return no(`${op.path} cannot be applied in place`);
      images[c.name] = op.value;
      continue;
    }
    const res = opts.gates.InPlaceWorkloadVerticalScaling ? RESOURCE_PATH.exec(op.path) : null;
    if (res !== null) {
      const c = oldContainers[Number(res[1])];
      const kind = res[2] === 'limits' ? 'limits' : 'requests';
      const name = unescapePointerToken(res[3] ?? '');
      if (c === undefined || (name !== 'cpu' && name !== 'memory')) return no(`${op.path} cannot be applied in place (only cpu and memory)`);
      if (tryParseQuantity(op.value) === undefined) return no(`${op.path}: ${String(op.value)} is not a quantity`);
      const entry = resources[c.name] ?? {};
      resources[c.name] = entry;
      entry[kind] = { ...entry[kind], [name]: String(op.value) };
      continue;
    }
    return no(`the change of ${op.path} cannot be applied in place`);
  }
  if (Object.keys(resources).length > 0) {
    const before = podQosClass(oldRev.template.spec);
    const after = podQosClass(newRev.template.spec);
    if (before !== after) return no(`the resource change would move the QoS class from ${before} to ${after}`);
  }

  const refMetadata: Record<string, { labels?: Record<string, string>; annotations?: Record<string, string> }> = {};
  let updateEnvFromMetadata = false;
  let metaDataPatch: MetadataPatch | undefined;
  if (metadataOps.length > 0) {
    const oldMeta = { labels: { ...oldRev.template.metadata?.labels }, annotations: { ...oldRev.template.metadata?.annotations } };
    const newMeta = { labels: { ...newRev.template.metadata?.labels }, annotations: { ...newRev.template.metadata?.annotations } };
    if (envFromMetadataEnabled(opts.gates)) {
      for (const op of metadataOps) {
        if (op.op !== 'add' && op.op !== 'replace') continue;
        const words = op.path.split('/');
        if (words.length !== 4) continue;
        const field = words[2];
        if (field !== 'labels' && field !== 'annotations') continue;
        const key = unescapePointerToken(words[3] ?? '');
        if (typeof op.value !== 'string') continue;
        for (const c of newRev.template.spec.containers) {
          if (!containerReferencesMetadata(c, `metadata.${field}`, key)) continue;
          const entry = refMetadata[c.name] ?? {};
          refMetadata[c.name] = entry;
          entry[field] = { ...entry[field], [key]: op.value };
          delete oldMeta[field][key];
          delete newMeta[field][key];
          updateEnvFromMetadata = true;
        }
      }
    }
    metaDataPatch = twoWayMetadataPatch(oldRev.template, newRev.template, oldMeta, newMeta);
  }
  return {
    inPlace: true,
    spec: {
      revision: newRev.name,
      containerImages: images,
      containerRefMetadata: refMetadata,
      containerResources: resources,
      ...(metaDataPatch !== undefined ? { metaDataPatch } : {}),
      updateEnvFromMetadata,
      graceSeconds: opts.gracePeriodSeconds,
    },
  };
}

/** A vertical-only update: resources change, no image and no env-from-metadata (Kruise `VerticalUpdateOnly`). */
export function isVerticalUpdateOnly(spec: UpdateSpec): boolean {
  return Object.keys(spec.containerResources).length > 0 && Object.keys(spec.containerImages).length === 0 && !spec.updateEnvFromMetadata;
}

/** The container has an env var taking its value from `metadata.labels['key']` (or annotations). */
export function containerReferencesMetadata(c: Container, prefix: string, key: string): boolean {
  const env = c['env'];
  if (!Array.isArray(env)) return false;
  const want = `${prefix}['${key}']`;
  return env.some((e: unknown) => {
    if (typeof e !== 'object' || e === null) return false;
    const v = e as { name?: unknown; value?: unknown; valueFrom?: { fieldRef?: { fieldPath?: unknown } } };
    if (typeof v.name === 'string' && SIDECARSET_ENVS.has(v.name)) return false;
    if (v.value !== undefined && v.value !== '') return false;
    return v.valueFrom?.fieldRef?.fieldPath === want;
  });
}

/**
 * The two-way strategic merge patch from `Pod{metadata: old}` to `Pod{metadata: new}` for the template
 * metadata: labels and annotations key by key (removed keys → null); any other metadata field replaced whole.
 * Undefined when nothing differs.
 */
function twoWayMetadataPatch(
  oldTpl: PodTemplateSpec,
  newTpl: PodTemplateSpec,
  oldMaps: { labels: Record<string, string>; annotations: Record<string, string> },
  newMaps: { labels: Record<string, string>; annotations: Record<string, string> },
): MetadataPatch | undefined {
  const metadata: Record<string, unknown> = {};
  for (const field of ['labels', 'annotations'] as const) {
    const diff: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(newMaps[field])) if (oldMaps[field][k] !== v) diff[k] = v;
    for (const k of Object.keys(oldMaps[field])) if (!(k in newMaps[field])) diff[k] = null;
    if (Object.keys(diff).length > 0) metadata[field] = diff;
  }
  const oldRest: Record<string, unknown> = { ...oldTpl.metadata };
  const newRest: Record<string, unknown> = { ...newTpl.metadata };
  Object.assign(metadata, finalizersPatch(oldRest['finalizers'], newRest['finalizers']));
  for (const key of new Set([...Object.keys(oldRest), ...Object.keys(newRest)])) {
    if (key === 'labels' || key === 'annotations' || key === 'creationTimestamp' || key === 'finalizers') continue;
    if (JSON.stringify(oldRest[key]) !== JSON.stringify(newRest[key])) metadata[key] = newRest[key] ?? null;
  }
  return Object.keys(metadata).length > 0 ? { metadata } : undefined;
}

export const DELETE_FROM_FINALIZERS = '$deleteFromPrimitiveList/finalizers';
export const SET_ORDER_OF_FINALIZERS = '$setElementOrder/finalizers';

/**
 * `metadata.finalizers` as Kubernetes' two-way strategic merge patch writes it (the field has patchStrategy
 * merge, a list of scalars): the list dropped whole → `finalizers: null`; otherwise the added values (sorted),
 * the removed ones under `$deleteFromPrimitiveList/finalizers` (sorted) and the new order under
 * `$setElementOrder/finalizers`. A plain `finalizers: [...]` would only ever add: the API server merges it.
 */
export function finalizersPatch(oldValue: unknown, newValue: unknown): Record<string, unknown> {
  const oldList = stringList(oldValue);
  const newList = stringList(newValue);
  if (oldList.length === 0 && newList.length === 0) return {};
  // Go omits an empty list (omitempty), so `[]` and absent both drop the field.
  if (newList.length === 0) return { finalizers: null };
  const added = [...new Set(newList.filter((f) => !oldList.includes(f)))].sort();
  const removed = [...new Set(oldList.filter((f) => !newList.includes(f)))].sort();
  if (added.length === 0 && removed.length === 0) return {};
  return {
    ...(removed.length > 0 ? { [DELETE_FROM_FINALIZERS]: removed } : {}),
    [SET_ORDER_OF_FINALIZERS]: [...newList],
    ...(added.length > 0 ? { finalizers: added } : {}),
  };
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

// ---------------------------------------------------------------------------------------------------------------
// QoS class (Kubernetes GetPodQOS, container and init-container resources; cpu and memory only)

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export function podQosClass(spec: PodSpec): QosClass {
  const requests = new Map<string, ReturnType<typeof tryParseQuantity>>();
  const limits = new Map<string, ReturnType<typeof tryParseQuantity>>();
  let guaranteed = true;
  const add = (m: Map<string, ReturnType<typeof tryParseQuantity>>, name: string, q: NonNullable<ReturnType<typeof tryParseQuantity>>): void => {
    const prev = m.get(name);
    if (prev === undefined) {
      m.set(name, q);
      return;
    }
    const scale = Math.min(prev.scale, q.scale);
    m.set(name, {
      unscaled: prev.unscaled * 10n ** BigInt(prev.scale - scale) + q.unscaled * 10n ** BigInt(q.scale - scale),
      scale,
      format: q.format,
    });
  };
  const zero = { unscaled: 0n, scale: 0, format: 'DecimalSI' as const };
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const found = new Set<string>();
    for (const [name, value] of Object.entries(c.resources?.requests ?? {})) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const q = tryParseQuantity(value);
      if (q !== undefined && compareQuantities(q, zero) > 0) add(requests, name, q);
    }
    for (const [name, value] of Object.entries(c.resources?.limits ?? {})) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const q = tryParseQuantity(value);
      if (q !== undefined && compareQuantities(q, zero) > 0) {
        found.add(name);
        add(limits, name, q);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (lim === undefined || req === undefined || compareQuantities(lim, req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
