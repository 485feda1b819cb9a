// The in-place update annotations on a pod, with Kruise's exact JSON (docs/features.md#in-place-update; Kruise apis/apps/pub/inplace_update.go). Pure.
//
// * `apps.kruise.io/inplace-update-state` — InPlaceUpdateState: Go struct field order, `omitempty` on everything
//   except `revision`, `updateTimestamp` and `lastContainerStatuses` (null while empty), map keys sorted, times
//   RFC 3339 UTC with second precision.
// * `apps.kruise.io/inplace-update-grace` — the UpdateSpec waiting for its grace period to end.
// The legacy keys without the `apps.kruise.io/` prefix are read as a fallback and deleted on every write.
import { goMarshal, goQuote } from '../../api/go-json.ts';
import { ANNOTATION_INPLACE_UPDATE_GRACE, ANNOTATION_INPLACE_UPDATE_STATE } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import type { MetadataPatch, RefMetadata, ResourceChange, UpdateSpec } from './update-spec.ts';

export const LEGACY_ANNOTATION_STATE = 'inplace-update-state';
export const LEGACY_ANNOTATION_GRACE = 'inplace-update-grace';

export interface ContainerBatch {
  readonly timestamp: string;
  readonly containers: readonly string[];
}

export interface InPlaceUpdateState {
  readonly revision: string;
  readonly updateTimestamp: string;
  /** Container name → imageID before the update (an empty imageID is written as `{}`). */
  readonly lastContainerStatuses: Readonly<Record<string, { readonly imageID?: string }>> | null;
  readonly updateEnvFromMetadata?: boolean;
  readonly updateResources?: boolean;
  readonly updateImages?: boolean;
  readonly nextContainerImages?: Readonly<Record<string, string>>;
  readonly nextContainerRefMetadata?: Readonly<Record<string, RefMetadata>>;
  readonly nextContainerResources?: Readonly<Record<string, ResourceChange>>;
  readonly preCheckBeforeNext?: { readonly containersRequiredReady?: readonly string[] };
  readonly containerBatchesRecord?: readonly ContainerBatch[];
}

export const nonEmpty = (m: Readonly<Record<string, unknown>> | undefined): m is Readonly<Record<string, unknown>> => m !== undefined && Object.keys(m).length > 0;

/** metav1.ObjectMeta with only labels/annotations set, as Go marshals it. */
function encodeRefMetadata(m: RefMetadata): string {
  const parts = ['"creationTimestamp":null'];
  if (nonEmpty(m.labels)) parts.push(`"labels":${goMarshal(m.labels)}`);
  if (nonEmpty(m.annotations)) parts.push(`"annotations":${goMarshal(m.annotations)}`);
  return `{${parts.join(',')}}`;
}

/** v1.ResourceRequirements (limits, requests; both omitempty). */
function encodeResources(r: ResourceChange): string {
  const parts: string[] = [];
  if (nonEmpty(r.limits)) parts.push(`"limits":${goMarshal(r.limits)}`);
  if (nonEmpty(r.requests)) parts.push(`"requests":${goMarshal(r.requests)}`);
  return `{${parts.join(',')}}`;
}

/** A map with sorted keys whose values are encoded by `enc`. */
function encodeMap<T>(m: Readonly<Record<string, T>>, enc: (v: T) => string): string {
  const keys = Object.keys(m).sort();
  return `{${keys.map((k) => `${goQuote(k)}:${enc(m[k] as T)}`).join(',')}}`;
}

export function encodeState(s: InPlaceUpdateState): string {
  const parts = [`"revision":${goQuote(s.revision)}`, `"updateTimestamp":${goQuote(s.updateTimestamp)}`];
  parts.push(
    `"lastContainerStatuses":${s.lastContainerStatuses === null ? 'null' : encodeMap(s.lastContainerStatuses, (v) => (v.imageID !== undefined && v.imageID !== '' ? `{"imageID":${goQuote(v.imageID)}}` : '{}'))}`,
  );
  if (s.updateEnvFromMetadata === true) parts.push('"updateEnvFromMetadata":true');
  if (s.updateResources === true) parts.push('"updateResources":true');
  if (s.updateImages === true) parts.push('"updateImages":true');
  if (nonEmpty(s.nextContainerImages)) parts.push(`"nextContainerImages":${goMarshal(s.nextContainerImages)}`);
  if (nonEmpty(s.nextContainerRefMetadata)) parts.push(`"nextContainerRefMetadata":${encodeMap(s.nextContainerRefMetadata, encodeRefMetadata)}`);
  if (nonEmpty(s.nextContainerResources)) parts.push(`"nextContainerResources":${encodeMap(s.nextContainerResources, encodeResources)}`);
  if (s.preCheckBeforeNext !== undefined) {
    const ready = s.preCheckBeforeNext.containersRequiredReady;
    parts.push(`"preCheckBeforeNext":{${ready !== undefined && ready.length > 0 ? `"containersRequiredReady":${goMarshal(ready)}` : ''}}`);
  }
  if (s.containerBatchesRecord !== undefined && s.containerBatchesRecord.length > 0) {
    const batches = s.containerBatchesRecord.map((b) => `{"timestamp":${goQuote(b.timestamp)},"containers":${goMarshal(b.containers)}}`);
    parts.push(`"containerBatchesRecord":[${batches.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

/** Base64 of the Go JSON of the patch ([]byte fields marshal as base64). */
function encodeMetaDataPatch(p: MetadataPatch): string {
  return Buffer.from(goMarshal(p), 'utf8').toString('base64');
}

export function encodeGraceSpec(spec: UpdateSpec): string {
  const parts = [`"revision":${goQuote(spec.revision)}`];
  if (nonEmpty(spec.containerImages)) parts.push(`"containerImages":${goMarshal(spec.containerImages)}`);
  if (nonEmpty(spec.containerRefMetadata)) parts.push(`"containerRefMetadata":${encodeMap(spec.containerRefMetadata, encodeRefMetadata)}`);
  if (nonEmpty(spec.containerResources)) parts.push(`"containerResources":${encodeMap(spec.containerResources, encodeResources)}`);
  if (spec.metaDataPatch !== undefined) parts.push(`"metaDataPatch":${goQuote(encodeMetaDataPatch(spec.metaDataPatch))}`);
  if (spec.updateEnvFromMetadata) parts.push('"updateEnvFromMetadata":true');
  if (spec.graceSeconds !== 0) parts.push(`"graceSeconds":${spec.graceSeconds}`);
  return `{${parts.join(',')}}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding (lenient on absent fields, strict on shape: a wrong shape is "unparsable")

export class StateParseError extends Error {
  override readonly name = 'StateParseError';
}

type Obj = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringMap(v: unknown, what: string): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw new StateParseError(`${what}: not an object`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') throw new StateParseError(`${what}.${k}: not a string`);
    out[k] = x;
  }
  return out;
}

function objectMap<T>(v: unknown, what: string, dec: (x: unknown, what: string) => T): Record<string, T> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw new StateParseError(`${what}: not an object`);
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(v)) out[k] = dec(x, `${what}.${k}`);
  return out;
}

function decodeRefMetadata(v: unknown, what: string): RefMetadata {
  if (!isObj(v)) throw new StateParseError(`${what}: not an object`);
  const labels = stringMap(v['labels'], `${what}.labels`);
  const annotations = stringMap(v['annotations'], `${what}.annotations`);
  return { ...(labels !== undefined ? { labels } : {}), ...(annotations !== undefined ? { annotations } : {}) };
}

function decodeResources(v: unknown, what: string): ResourceChange {
  if (!isObj(v)) throw new StateParseError(`${what}: not an object`);
  const limits = stringMap(v['limits'], `${what}.limits`);
  const requests = stringMap(v['requests'], `${what}.requests`);
  return { ...(limits !== undefined ? { limits } : {}), ...(requests !== undefined ? { requests } : {}) };
}

function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new StateParseError(`${what}: not a string`);
  return v;
}

function bool(v: unknown, what: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new StateParseError(`${what}: not a boolean`);
  return v;
}

function strings(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new StateParseError(`${what}: not a list of strings`);
  return v as string[];
}

function parseJson(text: string, what: string): Obj {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new StateParseError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isObj(raw)) throw new StateParseError(`${what}: not a JSON object`);
  return raw;
}

export function decodeState(text: string): InPlaceUpdateState {
  const o = parseJson(text, 'inplace-update-state');
  const last = objectMap(o['lastContainerStatuses'], 'lastContainerStatuses', (x, what) => {
    if (!isObj(x)) throw new StateParseError(`${what}: not an object`);
    const imageID = str(x['imageID'], `${what}.imageID`);
    return imageID !== '' ? { imageID } : {};
  });
  const nextImages = stringMap(o['nextContainerImages'], 'nextContainerImages');
  const nextMeta = objectMap(o['nextContainerRefMetadata'], 'nextContainerRefMetadata', decodeRefMetadata);
  const nextRes = objectMap(o['nextContainerResources'], 'nextContainerResources', decodeResources);
  const pre = o['preCheckBeforeNext'];
  const batches = o['containerBatchesRecord'];
  if (batches !== undefined && batches !== null && !Array.isArray(batches)) throw new StateParseError('containerBatchesRecord: not a list');
  return {
    revision: str(o['revision'], 'revision'),
    updateTimestamp: str(o['updateTimestamp'], 'updateTimestamp'),
    lastContainerStatuses: last ?? null,
    ...(bool(o['updateEnvFromMetadata'], 'updateEnvFromMetadata') ? { updateEnvFromMetadata: true } : {}),
    ...(bool(o['updateResources'], 'updateResources') ? { updateResources: true } : {}),
    ...(bool(o['updateImages'], 'updateImages') ? { updateImages: true } : {}),
    ...(nextImages !== undefined ? { nextContainerImages: nextImages } : {}),
    ...(nextMeta !== undefined ? { nextContainerRefMetadata: nextMeta } : {}),
    ...(nextRes !== undefined ? { nextContainerResources: nextRes } : {}),
    ...(isObj(pre) ? { preCheckBeforeNext: { containersRequiredReady: strings(pre['containersRequiredReady'], 'containersRequiredReady') } } : {}),
    ...(Array.isArray(batches)
      ? {
          containerBatchesRecord: batches.map((b: unknown, i) => {
            if (!isObj(b)) throw new StateParseError(`containerBatchesRecord[${i}]: not an object`);
            return { timestamp: str(b['timestamp'], 'timestamp'), containers: strings(b['containers'], 'containers') };
          }),
        }
      : {}),
  };
}

export function decodeGraceSpec(text: string): UpdateSpec {
  const o = parseJson(text, 'inplace-update-grace');
  const patch = o['metaDataPatch'];
  let metaDataPatch: MetadataPatch | undefined;
  if (typeof patch === 'string' && patch !== '') {
    const decoded = parseJson(Buffer.from(patch, 'base64').toString('utf8'), 'metaDataPatch');
    const md = decoded['metadata'];
    metaDataPatch = { metadata: isObj(md) ? md : {} };
  }
  const grace = o['graceSeconds'];
  if (grace !== undefined && grace !== null && typeof grace !== 'number') throw new StateParseError('graceSeconds: not a number');
  return {
    revision: str(o['revision'], 'revision'),
    containerImages: stringMap(o['containerImages'], 'containerImages') ?? {},
    containerRefMetadata: objectMap(o['containerRefMetadata'], 'containerRefMetadata', decodeRefMetadata) ?? {},
    containerResources: objectMap(o['containerResources'], 'containerResources', decodeResources) ?? {},
    ...(metaDataPatch !== undefined ? { metaDataPatch } : {}),
    updateEnvFromMetadata: bool(o['updateEnvFromMetadata'], 'updateEnvFromMetadata'),
    graceSeconds: typeof grace === 'number' ? grace : 0,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading from a pod

/** The raw state annotation (new key first, then the legacy one), if any. */
export function stateAnnotationOf(pod: Pod): string | undefined {
  const a = pod.metadata.annotations;
  return a?.[ANNOTATION_INPLACE_UPDATE_STATE] ?? a?.[LEGACY_ANNOTATION_STATE];
}

/** The raw grace annotation when present and non-empty. */
export function graceAnnotationOf(pod: Pod): string | undefined {
  const a = pod.metadata.annotations;
  const v = a?.[ANNOTATION_INPLACE_UPDATE_GRACE] ?? a?.[LEGACY_ANNOTATION_GRACE];
  return v === undefined || v === '' ? undefined : v;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export function readState(pod: Pod): Parsed<InPlaceUpdateState> | undefined {
  const raw = stateAnnotationOf(pod);
  if (raw === undefined) return undefined;
  try {
    return { ok: true, value: decodeState(raw) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
