// The mutating admission of CloneSets (Kruise: pkg/webhook/cloneset/mutating/cloneset_create_update_handler.go
// with apis/apps/defaults/{v1alpha1,v1beta1,pod}.go): the object as Kruise stores it for the same input.
//
// Kruise decodes the request into its Go types, applies SetDefaults*, marshals the object back and answers
// with a JSON patch from the raw request to that marshalled form. So besides the defaults themselves the
// stored object shows the effects of the Go round-trip, which we reproduce:
// * the pod template and each volume claim template are rewritten as Go's json.Marshal prints them
//   (`metadata.creationTimestamp: null`, `resources: {}`, unknown fields dropped, quantities canonical; see
//   src/api/go-json.ts) — also when template defaults are not injected;
// * CloneSet fields tagged `omitempty` that hold their zero value (`paused: false`, `minReadySeconds: 0`,
//   `null` pointers, empty lists) disappear, and `scaleStrategy` is always present (a struct, never omitted).
// Pure: returns a new object, never mutates its input.
import { defaultPodTemplate, defaultVolumeClaimTemplate } from '../api/defaults.ts';
import { goTypedMarshal, GoJsonError } from '../api/go-json.ts';
import { DEFAULT_MAX_UNAVAILABLE, DEFAULT_REVISION_HISTORY_LIMIT } from '../api/well-known.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../kube/types.ts';

type Obj = Record<string, unknown>;

export type CloneSetVersion = 'v1alpha1' | 'v1beta1';

export interface CloneSetDefaultingOptions {
  /** Inject pod-template and volume-claim-template defaults (see shouldInjectTemplateDefaults). */
  readonly injectTemplateDefaults: boolean;
  /** Gate DefaultHostNetworkHostPortsInPodTemplates (default off). */
  readonly defaultHostNetworkHostPorts?: boolean;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nil = (v: unknown): boolean => v === undefined || v === null;

/** The object at o[k], created as {} when nil; undefined when o[k] holds something that is not an object. */
function ensureObj(o: Obj, k: string): Obj | undefined {
  if (nil(o[k])) o[k] = {};
  const v = o[k];
  return isObj(v) ? v : undefined;
}

/** Go's json.Marshal drops omitempty fields at their zero value; only values of the field's own type count. */
function dropZero(o: Obj, keys: readonly string[], zero: 'bool' | 'int' | 'string' | 'list' | 'map' | 'pointer'): void {
  for (const k of keys) {
    const v = o[k];
    const isZero =
      v === null ||
      (zero === 'bool' && v === false) ||
      (zero === 'int' && v === 0) ||
      (zero === 'string' && v === '') ||
      (zero === 'list' && Array.isArray(v) && v.length === 0) ||
      (zero === 'map' && isObj(v) && Object.keys(v).length === 0);
    if (isZero) delete o[k];
  }
}

/** A deep copy of a JSON value (plain objects, arrays, scalars); several times faster than structuredClone here. */
function copyJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map((e: unknown) => copyJson(e)) as T;
  if (isObj(v)) {
    const out: Obj = {};
    for (const [k, e] of Object.entries(v)) out[k] = copyJson(e);
    return out as T;
  }
  return v;
}

/** The typed round-trip of a template through Go's structs; the input as is when Go could not decode it. */
function goRoundTrip(value: unknown, struct: 'PodTemplateSpec' | 'PersistentVolumeClaim'): unknown {
  try {
    return JSON.parse(goTypedMarshal(value, struct)) as unknown;
  } catch (e) {
    if (e instanceof GoJsonError) return value; // validation reports it with its field path
    throw e;
  }
}

function defaultTemplates(spec: Obj, opts: CloneSetDefaultingOptions): void {
  const template = spec['template'];
  if (nil(template) || isObj(template)) {
    const t = opts.injectTemplateDefaults
      ? defaultPodTemplate((template ?? null) as PodTemplateSpec, { defaultHostNetworkHostPorts: opts.defaultHostNetworkHostPorts === true })
      : template;
    spec['template'] = goRoundTrip(t, 'PodTemplateSpec');
  }
  const vcts = spec['volumeClaimTemplates'];
  if (Array.isArray(vcts)) {
    spec['volumeClaimTemplates'] = vcts.map((p: unknown) => {
      if (!nil(p) && !isObj(p)) return p;
      const d = opts.injectTemplateDefaults ? defaultVolumeClaimTemplate((p ?? {}) as PersistentVolumeClaim) : p;
      return goRoundTrip(d, 'PersistentVolumeClaim');
    });
  }
}

/** Zero-valued omitempty fields of UpdatePriorityStrategy, InPlaceUpdateStrategy and friends. */
function pruneRollingFields(r: Obj): void {
  dropZero(r, ['paused'], 'bool');
  dropZero(r, ['partition', 'maxUnavailable', 'maxSurge', 'priorityStrategy', 'inPlaceUpdateStrategy'], 'pointer');
  dropZero(r, ['scatterStrategy'], 'list');
  dropZero(r, ['podUpdatePolicy'], 'string');
  const priority = r['priorityStrategy'];
  if (isObj(priority)) dropZero(priority, ['weightPriority', 'orderPriority'], 'list');
  const inPlace = r['inPlaceUpdateStrategy'];
  if (isObj(inPlace)) {
    dropZero(inPlace, ['gracePeriodSeconds'], 'int');
    dropZero(inPlace, ['imagePreDownloadParallelism', 'imagePreDownloadTimeoutSeconds', 'imagePreDownloadMinUpdatedReadyPods'], 'pointer');
  }
}

function pruneSpec(spec: Obj): void {
  dropZero(spec, ['minReadySeconds'], 'int');
  dropZero(spec, ['lifecycle', 'progressDeadlineSeconds'], 'pointer');
  dropZero(spec, ['volumeClaimTemplates'], 'list');
  const scale = ensureObj(spec, 'scaleStrategy');
  if (scale !== undefined) {
    dropZero(scale, ['disablePVCReuse', 'enablePVCReuse', 'excludePreparingDelete'], 'bool');
    dropZero(scale, ['podsToDelete'], 'list');
    dropZero(scale, ['maxUnavailable'], 'pointer');
  }
  const lifecycle = spec['lifecycle'];
  if (isObj(lifecycle)) {
    for (const hookName of ['preDelete', 'inPlaceUpdate', 'preNormal']) {
      dropZero(lifecycle, [hookName], 'pointer');
      const hook = lifecycle[hookName];
      if (!isObj(hook)) continue;
      dropZero(hook, ['labelsHandler'], 'map');
      dropZero(hook, ['finalizersHandler'], 'list');
      dropZero(hook, ['markPodNotReady'], 'bool');
    }
  }
}

const isInPlace = (policy: unknown): boolean => policy === 'InPlaceIfPossible' || policy === 'InPlaceOnly';

/** apis/apps/defaults/v1alpha1.go SetDefaultsCloneSet (strategy part). */
function defaultV1alpha1Strategy(spec: Obj): void {
  const us = ensureObj(spec, 'updateStrategy');
  if (us === undefined) return;
  if (nil(us['type']) || us['type'] === '') us['type'] = 'ReCreate';
  if (isInPlace(us['type']) && nil(us['inPlaceUpdateStrategy'])) us['inPlaceUpdateStrategy'] = {};
  if (nil(us['partition'])) us['partition'] = 0;
  if (nil(us['maxUnavailable'])) us['maxUnavailable'] = DEFAULT_MAX_UNAVAILABLE;
  if (nil(us['maxSurge'])) us['maxSurge'] = 0;
  pruneRollingFields(us);
}

/** apis/apps/defaults/v1beta1.go SetDefaultsCloneSet (strategy part): nothing under rollingUpdate for OnDelete. */
function defaultV1beta1Strategy(spec: Obj): void {
  const us = ensureObj(spec, 'updateStrategy');
  if (us === undefined) return;
  if (nil(us['type']) || us['type'] === '') us['type'] = 'RollingUpdate';
  if (us['type'] === 'RollingUpdate') {
    const r = ensureObj(us, 'rollingUpdate');
    if (r !== undefined) {
      if (nil(r['podUpdatePolicy']) || r['podUpdatePolicy'] === '') r['podUpdatePolicy'] = 'ReCreate';
      if (isInPlace(r['podUpdatePolicy']) && nil(r['inPlaceUpdateStrategy'])) r['inPlaceUpdateStrategy'] = {};
      if (nil(r['partition'])) r['partition'] = 0;
      if (nil(r['maxUnavailable'])) r['maxUnavailable'] = DEFAULT_MAX_UNAVAILABLE;
      if (nil(r['maxSurge'])) r['maxSurge'] = 0;
    }
  }
  dropZero(us, ['rollingUpdate'], 'pointer');
  const r = us['rollingUpdate'];
  if (isObj(r)) pruneRollingFields(r);
}

/**
 * Kruise's defaults of a CloneSet of the given API version, as its mutating webhook stores them (docs/features.md#admission; Kruise apis/apps/defaults/v1alpha1.go):
 * replicas 1, revisionHistoryLimit 10, the update strategy defaults of the version, and (when
 * `injectTemplateDefaults`) the pod-template and volume-claim-template defaults. Parts that do not have the
 * right JSON type are left untouched for validation to report.
 */
export function defaultCloneSet(obj: Record<string, unknown>, version: CloneSetVersion, opts: CloneSetDefaultingOptions): Record<string, unknown> {
  const out = copyJson(obj);
  const spec = ensureObj(out, 'spec');
  if (spec === undefined) return out;
  if (nil(spec['replicas'])) spec['replicas'] = 1;
  if (nil(spec['revisionHistoryLimit'])) spec['revisionHistoryLimit'] = DEFAULT_REVISION_HISTORY_LIMIT;
  defaultTemplates(spec, opts);
  if (version === 'v1alpha1') defaultV1alpha1Strategy(spec);
  else defaultV1beta1Strategy(spec);
  pruneSpec(spec);
  return out;
}

/** The template as Go decodes it, printed; undefined when Go cannot decode it. */
function decodedTemplate(obj: Record<string, unknown> | undefined): string | undefined {
  const spec = obj?.['spec'];
  try {
    return goTypedMarshal(isObj(spec) ? spec['template'] : undefined, 'PodTemplateSpec');
  } catch (e) {
    if (e instanceof GoJsonError) return undefined;
    throw e;
  }
}

/**
 * Whether Kruise injects template defaults for this request: on CREATE, and on UPDATE only when the decoded
 * `spec.template` differs from the old object's; never with gate TemplateNoDefaults.
 */
export function shouldInjectTemplateDefaults(
  req: { readonly operation: 'CREATE' | 'UPDATE' | 'DELETE'; readonly object?: Record<string, unknown>; readonly oldObject?: Record<string, unknown> },
  gates: { readonly TemplateNoDefaults: boolean },
): boolean {
  if (gates.TemplateNoDefaults) return false;
  if (req.operation === 'CREATE') return true;
  if (req.operation !== 'UPDATE') return false;
  const now = decodedTemplate(req.object);
  return now === undefined || now !== decodedTemplate(req.oldObject);
}
