// Has an in-place update finished on the node? (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go). Pure, read from the cached pod.
//
// Without kruise-daemon (no `apps.kruise.io/runtime-containers-meta` annotation) the answer comes from the
// container statuses: a container whose image changed must report a new imageID (or already the new image);
// with gate InPlaceWorkloadVerticalScaling a resize is complete when every container status reports the
// spec's resources.
import { fnv1a_32, goMarshal, goTypedMarshal, spewByteSlice } from '../../api/go-json.ts';
import type { FeatureGates } from '../../api/well-known.ts';
import type { Container, Pod } from '../../kube/types.ts';
import { sameResourceList } from './quantity.ts';
import { graceAnnotationOf, nonEmpty, readState, type InPlaceUpdateState } from './state.ts';
import { SIDECARSET_ENVS } from './update-spec.ts';

export const ANNOTATION_RUNTIME_CONTAINERS_META = 'apps.kruise.io/runtime-containers-meta';

export type Completion = { readonly complete: true } | { readonly complete: false; readonly reason: string };

const COMPLETE: Completion = { complete: true };
const notYet = (reason: string): Completion => ({ complete: false, reason });

interface RuntimeContainerMeta {
  readonly name: string;
  readonly containerID: string;
  readonly plainHash?: number;
  readonly envHash?: number;
}

function runtimeMeta(pod: Pod): { ok: true; value: RuntimeContainerMeta[] | undefined } | { ok: false; error: string } {
  const raw = pod.metadata.annotations?.[ANNOTATION_RUNTIME_CONTAINERS_META];
  if (raw === undefined) return { ok: true, value: undefined };
  try {
    const parsed: unknown = JSON.parse(raw);
    const list = typeof parsed === 'object' && parsed !== null && 'containers' in parsed ? parsed.containers : undefined;
    if (!Array.isArray(list)) return { ok: true, value: [] };
    return {
      ok: true,
      value: list.map((c: unknown) => {
        const o = (typeof c === 'object' && c !== null ? c : {}) as {
          name?: unknown;
          containerID?: unknown;
          hashes?: { plainHash?: unknown; extractedEnvFromMetadataHash?: unknown };
        };
        const plain = o.hashes?.plainHash;
        const env = o.hashes?.extractedEnvFromMetadataHash;
        return {
          name: typeof o.name === 'string' ? o.name : '',
          containerID: typeof o.containerID === 'string' ? o.containerID : '',
          ...(typeof plain === 'number' ? { plainHash: plain >>> 0 } : {}),
          ...(typeof env === 'number' ? { envHash: env >>> 0 } : {}),
        };
      }),
    };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** The kubelet's container hash (≥ 1.31: name and image only). */
export function plainContainerHash(c: Container): number {
  return fnv1a_32(spewByteSlice(goMarshal({ name: c.name, image: c.image ?? '' })));
}

/** The kubelet's container hash before 1.31 (the whole container). */
function legacyContainerHash(c: Container): number | undefined {
  try {
    return fnv1a_32(spewByteSlice(goTypedMarshal(c, 'Container')));
  } catch {
    return undefined;
  }
}

const FIELD_REF = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** Hash of the env vars a container takes from the pod's labels/annotations (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go). */
export function envFromMetadataHash(pod: Pod, c: Container): number {
  const vars: { name: string; value: string }[] = [];
  const env = c['env'];
  if (Array.isArray(env)) {
    for (const e of env as unknown[]) {
      if (typeof e !== 'object' || e === null) continue;
      const v = e as { name?: unknown; value?: unknown; valueFrom?: { fieldRef?: { fieldPath?: unknown } } };
      if (typeof v.name !== 'string' || SIDECARSET_ENVS.has(v.name)) continue;
      if (v.value !== undefined && v.value !== '') continue;
      const path = v.valueFrom?.fieldRef?.fieldPath;
      if (typeof path !== 'string') continue;
      const m = FIELD_REF.exec(path);
      if (m === null) continue;
      const source = m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
      vars.push({ name: v.name, value: source?.[m[2] ?? ''] ?? '' });
    }
  }
  const sorted = vars
    .map((v, i) => ({ v, i }))
    .sort((a, b) => (a.v.name < b.v.name ? -1 : a.v.name > b.v.name ? 1 : a.i - b.i))
    .map((x) => x.v);
  const json =
    sorted.length === 0
      ? 'null'
      : `[${sorted.map((v) => (v.value === '' ? `{"name":${goMarshal(v.name)}}` : `{"name":${goMarshal(v.name)},"value":${goMarshal(v.value)}}`)).join(',')}]`;
  return fnv1a_32(spewByteSlice(json));
}

function hashesConsistent(pod: Pod, meta: readonly RuntimeContainerMeta[], kind: 'plain' | 'env'): boolean {
  for (const c of pod.spec.containers) {
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    if (status === undefined) return false;
    const entries = meta.filter((m) => m.name === c.name);
    const entry = entries[entries.length - 1];
    if (entry === undefined || entry.containerID !== (status.containerID ?? '')) return false;
    if (kind === 'env') {
      if (entry.envHash !== envFromMetadataHash(pod, c)) return false;
    } else if (entry.plainHash !== plainContainerHash(c) && entry.plainHash !== legacyContainerHash(c)) {
      return false;
    }
  }
  return true;
}

/** Kruise `defaultCheckContainersInPlaceUpdateCompleted`. */
export function containersComplete(pod: Pod, state: InPlaceUpdateState, gates: FeatureGates): Completion {
  const meta = runtimeMeta(pod);
  if (!meta.ok) return notYet(`unparsable ${ANNOTATION_RUNTIME_CONTAINERS_META}: ${meta.error}`);
  if (state.updateEnvFromMetadata === true) {
    if (meta.value === undefined) return notYet('waiting for all containers hash consistent, but runtime-container-meta not found');
    if (!hashesConsistent(pod, meta.value, 'env')) return notYet('waiting for all containers hash consistent');
  }
  if (gates.InPlaceWorkloadVerticalScaling && state.updateResources === true) {
    const statuses = pod.status?.containerStatuses ?? [];
    if (statuses.length !== pod.spec.containers.length) return notYet('waiting for the resources of every container to be reported');
    for (const c of pod.spec.containers) {
      const s = statuses.find((x) => x.name === c.name);
      const r = s?.['resources'] as { limits?: Record<string, unknown>; requests?: Record<string, unknown> } | undefined;
      if (r === undefined || !sameResourceList(r.limits, c.resources?.limits) || !sameResourceList(r.requests, c.resources?.requests)) {
        return notYet(`container ${c.name} resources not resized yet`);
      }
    }
  }
  if (meta.value !== undefined && hashesConsistent(pod, meta.value, 'plain')) return COMPLETE;
  const images = new Map<string, string>();
  for (const c of pod.spec.containers) {
    const image = c.image ?? '';
    images.set(c.name, image.split(':').length <= 1 ? `${image}:latest` : image);
  }
  const pending = new Set(Object.keys(state.lastContainerStatuses ?? {}));
  for (const s of pod.status?.containerStatuses ?? []) {
    const before = state.lastContainerStatuses?.[s.name];
    if (before === undefined) continue;
    if ((before.imageID ?? '') === (s.imageID ?? '') && images.get(s.name) !== s.image) return notYet(`container ${s.name} imageID not changed`);
    pending.delete(s.name);
  }
  if (pending.size > 0) return notYet(`not found statuses of containers ${[...pending].join(', ')}`);
  return COMPLETE;
}

/** Kruise `DefaultCheckInPlaceUpdateCompleted` (the lifecycle Updating → Normal/Updated trigger). */
export function podUpdateComplete(pod: Pod, gates: FeatureGates): Completion {
  if (graceAnnotationOf(pod) !== undefined) return notYet('still in grace period of in-place update');
  const state = readState(pod);
  if (state === undefined) return COMPLETE;
  if (!state.ok) return notYet(`unparsable in-place update state: ${state.error}`);
  if (hasNextBatch(state.value)) return notYet('existing containers to in-place update in next batches');
  return containersComplete(pod, state.value, gates);
}

export function hasNextBatch(s: InPlaceUpdateState): boolean {
  return nonEmpty(s.nextContainerImages) || nonEmpty(s.nextContainerRefMetadata) || nonEmpty(s.nextContainerResources);
}
