// CloneSet conversion between apps.kruise.io/v1alpha1 and v1beta1 (the CRD conversion webhook calls
// `convertCloneSet` for each object) and the mapping of the stored v1beta1 object to the controller's internal
// model (`cloneSetFromV1beta1`). Pure: no IO, no clock.
//
// The field mapping is Kruise's, rule for rule (docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1alpha1/cloneset_conversion.go; apis/apps/v1alpha1/cloneset_conversion.go in
// openkruise/kruise). Kruise's mapping loses information in both directions, e.g. a v1alpha1 `OnDelete`
// drops partition/maxUnavailable/…, an absent or unknown `type` becomes ReCreate, `disablePVCReuse: false`
// and an absent one are the same v1beta1 object, a v1beta1 OnDelete with a `rollingUpdate` block comes back
// without it, `excludePreparingDelete` is not written back as the label, parallelism "5" comes back as 5.
// We keep the same mapping (so a Kruise reader sees what Kruise would store) and, where it loses something,
// carry what was lost in one annotation on the converted object, ANNOTATION_LOST_FIELDS:
//   {"version": <apiVersion the lost fields belong to>, "guard": <hash of the strategy fields of the
//    converted object>, "ops": [{"p": [path], "from": <value Kruise's mapping gives back>, "to": <original>}]}
// Converting back applies an op only when (1) the annotation belongs to the target version, (2) the strategy
// fields still hash to `guard` (nobody changed them through the other version; a change there means the lost
// values are obsolete, so they are dropped, never resurrected over the user's change) and (3) the field still
// holds `from`. So A→B→A returns A exactly (property test in conversion.test.ts), and an edit through either
// version always wins over remembered values.
import { createHash } from 'node:crypto';
import { LABEL_SCALING_EXCLUDE_PREPARING_DELETE } from './well-known.ts';
import { API_VERSION, STORAGE_API_VERSION, type CloneSet, type CloneSetUpdateStrategy, type InPlaceUpdateStrategy } from './cloneset.ts';
import type { CloneSetV1beta1, RollingUpdateCloneSetStrategy } from './cloneset-v1beta1.ts';

/** Carries the fields Kruise's mapping loses (see the file comment). Our own key: Kruise has none. */
export const ANNOTATION_LOST_FIELDS = 'conversion.clonesets.apps.kruise.io/lost-fields';

export const ANNOTATION_PREDOWNLOAD_PARALLELISM = 'apps.kruise.io/image-predownload-parallelism';
export const ANNOTATION_PREDOWNLOAD_TIMEOUT = 'apps.kruise.io/image-predownload-timeout-seconds';
export const ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY = 'apps.kruise.io/image-predownload-min-updated-ready-pods';
const PREDOWNLOAD_ANNOTATIONS = [ANNOTATION_PREDOWNLOAD_PARALLELISM, ANNOTATION_PREDOWNLOAD_TIMEOUT, ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY] as const;

const V1ALPHA1 = API_VERSION;
const V1BETA1 = STORAGE_API_VERSION;
const SUPPORTED = [V1ALPHA1, V1BETA1] as const;
type Version = (typeof SUPPORTED)[number];

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function objAt(o: Obj, key: string): Obj {
  const v = o[key];
  return isObj(v) ? v : {};
}
function clone<T>(v: T): T {
  return structuredClone(v);
}
/**
 * A copy of a CloneSet whose spec the caller copies and maps itself; the spec keeps its place among the keys.
 * Nothing of the input is shared with the copy: the output is handed out (convertCloneSet).
 */
function copyExceptSpec(o: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) out[k] = k === 'spec' || typeof v !== 'object' || v === null ? v : clone(v);
  return out;
}

function copySpec(o: Obj): Obj {
  return clone(objAt(o, 'spec'));
}
function versionOf(v: unknown, what: string): Version {
  const found = SUPPORTED.find((s) => s === v);
  if (found === undefined) {
    throw new Error(`${what} ${JSON.stringify(v)} is not a CloneSet version this server converts: use one of ${SUPPORTED.join(', ')}`);
  }
  return found;
}

/**
 * Converts a CloneSet (plain JSON of either version) to `desiredAPIVersion`; never mutates its input.
 * Throws when either version is not apps.kruise.io/v1alpha1 or v1beta1.
 */
export function convertCloneSet(obj: Record<string, unknown>, desiredAPIVersion: string): Record<string, unknown> {
  const to = versionOf(desiredAPIVersion, 'desiredAPIVersion');
  const from = versionOf(obj['apiVersion'], 'apiVersion');
  if (from === to) return clone(obj);
  const { input, out } = convertOneWay(obj, from, to);
  // What of `input` would the way back lose? Remember it on the output.
  const back = from === V1ALPHA1 ? kruiseBetaToAlpha(out) : kruiseAlphaToBeta(out);
  const ops = diff(back, input, []);
  if (ops.length === 0) return out;
  const record: LostFields = { version: from, guard: strategyGuard(out), ops };
  return setAnnotation(out, ANNOTATION_LOST_FIELDS, JSON.stringify(record));
}

/** Kruise's mapping from one version to the other, with the fields remembered from an earlier way back. */
function convertOneWay(obj: Obj, from: Version, to: Version): { readonly input: Obj; readonly out: Obj } {
  const lost = readLostFields(obj);
  const input = withoutLostFieldsAnnotation(obj);
  let out = from === V1ALPHA1 ? kruiseAlphaToBeta(input) : kruiseBetaToAlpha(input);
  if (lost !== undefined && lost.version === to && lost.guard === strategyGuard(input)) out = applyOps(out, lost.ops);
  return { input, out };
}

// ---------------------------------------------------------------------------------------------------
// Kruise's mapping (docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1alpha1/cloneset_conversion.go)

/** strconv.Atoi-like: an optional sign and decimal digits, within int32 (else undefined). */
function parseInt32(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

function ipusToBeta(src: unknown, annotations: Obj): Obj | undefined {
  const ann = (k: string): string => (typeof annotations[k] === 'string' ? (annotations[k] as string) : '');
  const hasAnnotations = PREDOWNLOAD_ANNOTATIONS.some((k) => ann(k) !== '');
  if (src === undefined && !hasAnnotations) return undefined;
  const s = isObj(src) ? src : {};
  const dst: Obj = {};
  if (s['gracePeriodSeconds'] !== undefined) dst['gracePeriodSeconds'] = s['gracePeriodSeconds'];
  // Annotations take precedence over the spec fields (Kruise HEAD's convertInPlaceUpdateStrategyToV1beta1).
  const parallelism = ann(ANNOTATION_PREDOWNLOAD_PARALLELISM);
  if (parallelism !== '') dst['imagePreDownloadParallelism'] = parseInt32(parallelism) ?? parallelism;
  else if (s['imagePreDownloadParallelism'] !== undefined) dst['imagePreDownloadParallelism'] = s['imagePreDownloadParallelism'];
  for (const [key, field] of [
    [ANNOTATION_PREDOWNLOAD_TIMEOUT, 'imagePreDownloadTimeoutSeconds'],
    [ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY, 'imagePreDownloadMinUpdatedReadyPods'],
  ] as const) {
    const text = ann(key);
    if (text !== '') {
      const n = parseInt32(text);
      if (n !== undefined) dst[field] = n; // not an int32 (e.g. "50%"): dropped, as Kruise does
    } else if (s[field] !== undefined) dst[field] = s[field];
  }
  return dst;
}

const FLAT_FIELDS = ['partition', 'maxUnavailable', 'maxSurge', 'paused', 'priorityStrategy', 'scatterStrategy'] as const;
const POLICIES: readonly unknown[] = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'];

function kruiseAlphaToBeta(a: Obj): Obj {
  const out = copyExceptSpec(a);
  out['apiVersion'] = V1BETA1;
  const meta = objAt(a, 'metadata');
  const labels = objAt(meta, 'labels');
  const annotations = objAt(meta, 'annotations');
  const spec = copySpec(a);

  const ss = { ...objAt(spec, 'scaleStrategy') };
  const disable = ss['disablePVCReuse'] === true;
  const exclude = ss['excludePreparingDelete'] === true || labels[LABEL_SCALING_EXCLUDE_PREPARING_DELETE] === 'true';
  delete ss['disablePVCReuse'];
  delete ss['excludePreparingDelete'];
  spec['scaleStrategy'] = { ...ss, enablePVCReuse: !disable, ...(exclude ? { excludePreparingDelete: true } : {}) };

  const us = objAt(spec, 'updateStrategy');
  const rest: Obj = {};
  for (const [k, v] of Object.entries(us)) {
    if (k !== 'type' && k !== 'inPlaceUpdateStrategy' && !(FLAT_FIELDS as readonly string[]).includes(k)) rest[k] = v;
  }
  if (us['type'] === 'OnDelete') {
    spec['updateStrategy'] = { ...rest, type: 'OnDelete' };
  } else {
    const ru: Obj = {};
    for (const k of FLAT_FIELDS) if (us[k] !== undefined) ru[k] = us[k];
    ru['podUpdatePolicy'] = POLICIES.includes(us['type']) ? us['type'] : 'ReCreate';
    const ipus = ipusToBeta(us['inPlaceUpdateStrategy'], annotations);
    if (ipus !== undefined) ru['inPlaceUpdateStrategy'] = ipus;
    spec['updateStrategy'] = { ...rest, type: 'RollingUpdate', rollingUpdate: ru };
  }
  out['spec'] = spec;
  return out;
}

function kruiseBetaToAlpha(b: Obj): Obj {
  const out = copyExceptSpec(b);
  out['apiVersion'] = V1ALPHA1;
  const spec = copySpec(b);

  const ss = { ...objAt(spec, 'scaleStrategy') };
  const enable = ss['enablePVCReuse'] === true;
  delete ss['enablePVCReuse'];
  if (ss['excludePreparingDelete'] !== true) delete ss['excludePreparingDelete'];
  const alphaSs = { ...ss, ...(enable ? {} : { disablePVCReuse: true }) };
  // Go writes the (non-pointer) struct as `{}`; an empty one is left out here, which means the same.
  if (Object.keys(alphaSs).length > 0) spec['scaleStrategy'] = alphaSs;
  else delete spec['scaleStrategy'];

  const us = objAt(spec, 'updateStrategy');
  const ru = isObj(us['rollingUpdate']) ? us['rollingUpdate'] : undefined;
  const rest: Obj = {};
  for (const [k, v] of Object.entries(us)) if (k !== 'type' && k !== 'rollingUpdate') rest[k] = v;
  let type: unknown = 'ReCreate';
  if (us['type'] === 'OnDelete') type = 'OnDelete';
  else if (ru !== undefined && (ru['podUpdatePolicy'] === 'InPlaceIfPossible' || ru['podUpdatePolicy'] === 'InPlaceOnly')) type = ru['podUpdatePolicy'];
  const flat: Obj = { ...rest, type };
  if (ru !== undefined) {
    for (const k of FLAT_FIELDS) if (ru[k] !== undefined) flat[k] = ru[k];
    const src = ru['inPlaceUpdateStrategy'];
    if (isObj(src)) {
      const grace = src['gracePeriodSeconds'];
      const hasContent =
        (grace !== undefined && grace !== 0) ||
        src['imagePreDownloadParallelism'] !== undefined ||
        src['imagePreDownloadTimeoutSeconds'] !== undefined ||
        src['imagePreDownloadMinUpdatedReadyPods'] !== undefined;
      if (hasContent) {
        flat['inPlaceUpdateStrategy'] = grace !== undefined && grace !== 0 ? { gracePeriodSeconds: grace } : {};
        const meta = { ...objAt(out, 'metadata') };
        const annotations: Obj = { ...objAt(meta, 'annotations') };
        const p = src['imagePreDownloadParallelism'];
        if (p !== undefined) annotations[ANNOTATION_PREDOWNLOAD_PARALLELISM] = String(p);
        const t = src['imagePreDownloadTimeoutSeconds'];
        if (t !== undefined) annotations[ANNOTATION_PREDOWNLOAD_TIMEOUT] = String(t);
        const m = src['imagePreDownloadMinUpdatedReadyPods'];
        if (m !== undefined) annotations[ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY] = String(m);
        if (Object.keys(annotations).length > 0) {
          meta['annotations'] = annotations;
          out['metadata'] = meta;
        }
      }
    }
  }
  spec['updateStrategy'] = flat;
  out['spec'] = spec;
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Lost fields

type Path = readonly string[];
interface Op {
  readonly p: Path;
  /** The value Kruise's mapping gives back (absent = the key is absent). */
  readonly from?: unknown;
  /** The original value (absent = the key was absent). */
  readonly to?: unknown;
}
interface LostFields {
  readonly version: string;
  readonly guard: string;
  readonly ops: readonly Op[];
}

function readLostFields(obj: Obj): LostFields | undefined {
  const text = objAt(objAt(obj, 'metadata'), 'annotations')[ANNOTATION_LOST_FIELDS];
  if (typeof text !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (!isObj(v) || typeof v['version'] !== 'string' || typeof v['guard'] !== 'string' || !Array.isArray(v['ops'])) return undefined;
    const ops: Op[] = [];
    for (const op of v['ops'] as unknown[]) {
      if (!isObj(op) || !Array.isArray(op['p']) || !(op['p'] as unknown[]).every((s) => typeof s === 'string')) return undefined;
      ops.push({ p: op['p'] as string[], ...('from' in op ? { from: op['from'] } : {}), ...('to' in op ? { to: op['to'] } : {}) });
    }
    return { version: v['version'], guard: v['guard'], ops };
  } catch {
    return undefined; // a hand-edited annotation is ignored, never an error: the object still converts
  }
}

function withoutLostFieldsAnnotation(obj: Obj): Obj {
  const annotations = objAt(objAt(obj, 'metadata'), 'annotations');
  if (!(ANNOTATION_LOST_FIELDS in annotations)) return obj;
  const rest = { ...annotations };
  delete rest[ANNOTATION_LOST_FIELDS];
  const meta: Obj = { ...objAt(obj, 'metadata') };
  if (Object.keys(rest).length > 0) meta['annotations'] = rest;
  else delete meta['annotations'];
  return { ...obj, metadata: meta };
}

function setAnnotation(obj: Obj, key: string, value: string): Obj {
  const meta: Obj = { ...objAt(obj, 'metadata') };
  meta['annotations'] = { ...objAt(meta, 'annotations'), [key]: value };
  return { ...obj, metadata: meta };
}

/** JSON with sorted keys: equal values give equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function deepEqual(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/**
 * The fields whose change through one version makes remembered values of the other obsolete: the update
 * strategy, the PVC-reuse and exclude-PreparingDelete switches, and the v1alpha1 label and annotations that
 * stand for v1beta1 fields. podsToDelete and scaleStrategy.maxUnavailable are left out: the controller and
 * users edit them all the time and they convert 1:1.
 */
function strategyGuard(obj: Obj): string {
  const meta = objAt(obj, 'metadata');
  const spec = objAt(obj, 'spec');
  const ss = objAt(spec, 'scaleStrategy');
  const annotations = objAt(meta, 'annotations');
  const guarded = {
    updateStrategy: spec['updateStrategy'],
    disablePVCReuse: ss['disablePVCReuse'],
    enablePVCReuse: ss['enablePVCReuse'],
    excludePreparingDelete: ss['excludePreparingDelete'],
    label: objAt(meta, 'labels')[LABEL_SCALING_EXCLUDE_PREPARING_DELETE],
    annotations: PREDOWNLOAD_ANNOTATIONS.map((k) => annotations[k]),
  };
  return createHash('sha256').update(canonical(guarded)).digest('hex').slice(0, 16);
}

/** The ops that turn `from` into `to` (objects recursed into key by key; anything else replaced whole). */
function diff(from: unknown, to: unknown, path: Path): Op[] {
  if (deepEqual(from, to)) return [];
  if (isObj(from) && isObj(to)) {
    const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort();
    return keys.flatMap((k) => diff(from[k], to[k], [...path, k]));
  }
  return [{ p: path, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }];
}

function getAt(obj: Obj, p: Path): unknown {
  let cur: unknown = obj;
  for (const k of p) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function applyOps(obj: Obj, ops: readonly Op[]): Obj {
  const out = clone(obj);
  for (const op of ops) {
    if (op.p.length === 0 || !deepEqual(getAt(out, op.p), op.from)) continue;
    let parent: Obj = out;
    let ok = true;
    for (const k of op.p.slice(0, -1)) {
      const next = parent[k];
      if (next === undefined && op.to !== undefined) parent[k] = {};
      else if (!isObj(next)) {
        ok = false;
        break;
      }
      parent = parent[k] as Obj;
    }
    if (!ok) continue;
    const last = op.p[op.p.length - 1] ?? '';
    if (op.to === undefined) delete parent[last];
    else parent[last] = clone(op.to);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// The controller's internal model

function rollingUpdateFlat(ru: RollingUpdateCloneSetStrategy): Omit<CloneSetUpdateStrategy, 'type'> {
  const ipus: InPlaceUpdateStrategy | undefined = ru.inPlaceUpdateStrategy;
  return {
    ...(ru.partition !== undefined ? { partition: ru.partition } : {}),
    ...(ru.maxUnavailable !== undefined ? { maxUnavailable: ru.maxUnavailable } : {}),
    ...(ru.maxSurge !== undefined ? { maxSurge: ru.maxSurge } : {}),
    ...(ru.paused !== undefined ? { paused: ru.paused } : {}),
    ...(ru.priorityStrategy !== undefined ? { priorityStrategy: ru.priorityStrategy } : {}),
    ...(ru.scatterStrategy !== undefined ? { scatterStrategy: ru.scatterStrategy } : {}),
    ...(ipus !== undefined ? { inPlaceUpdateStrategy: ipus } : {}),
  };
}

/**
 * The internal model of a stored (v1beta1) CloneSet: Kruise's v1alpha1 shape without Kruise's losses — the
 * pre-download fields stay fields, excludePreparingDelete stays a field, `type: OnDelete` keeps its
 * rollingUpdate values (flattened). `rollingUpdate` absent is told by `hasRollingUpdate` (OnDelete with no
 * partition: admission requires a partition whenever the block exists, docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1beta1/cloneset_types.go).
 */
export function cloneSetFromV1beta1(cs: CloneSetV1beta1): CloneSet {
  const { spec } = cs;
  const ss = spec.scaleStrategy ?? {};
  const us = spec.updateStrategy ?? {};
  const ru = us.rollingUpdate;
  const type = us.type === 'OnDelete' ? 'OnDelete' : (ru?.podUpdatePolicy ?? 'ReCreate');
  const { scaleStrategy: _s, updateStrategy: _u, ...common } = spec;
  return {
    ...cs,
    apiVersion: STORAGE_API_VERSION,
    spec: {
      ...common,
      scaleStrategy: {
        ...(ss.podsToDelete !== undefined ? { podsToDelete: ss.podsToDelete } : {}),
        ...(ss.maxUnavailable !== undefined ? { maxUnavailable: ss.maxUnavailable } : {}),
        disablePVCReuse: ss.enablePVCReuse !== true,
        ...(ss.excludePreparingDelete === true ? { excludePreparingDelete: true } : {}),
      },
      updateStrategy: { type, ...(ru !== undefined ? rollingUpdateFlat(ru) : {}) },
    },
  };
}

/** Whether the internal CloneSet has Kruise's `rollingUpdate` block (see `cloneSetFromV1beta1`). */
export function hasRollingUpdate(cs: CloneSet): boolean {
  const us = cs.spec.updateStrategy;
  return us?.type !== 'OnDelete' || us.partition !== undefined;
}

/** The v1beta1 object for an internal CloneSet. */
export function cloneSetToV1beta1(cs: CloneSet): CloneSetV1beta1 {
  const asAlpha: Obj = { ...clone(cs), apiVersion: V1ALPHA1 } as unknown as Obj;
  return convertCloneSet(asAlpha, V1BETA1) as unknown as CloneSetV1beta1;
}
