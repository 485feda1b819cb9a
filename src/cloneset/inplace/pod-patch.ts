// The writes of an in-place update, as patches computed from the cached pod (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go). Pure.
//
// 1. `notReadyStatusPatch` — pods/status, strategic merge (conditions merge by type): InPlaceUpdateReady=False
//    (reason StartInPlaceUpdate) and, when the kubelet currently reports the pod Ready, Ready=False recomputed
//    from the readiness gates (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go).
// 2. `inPlaceUpdatePatch` — the pod itself, strategic merge (containers merge by name): revision labels,
//    lifecycle Updating, the state annotation and either the grace annotation (grace period) or the new images
//    (+ template metadata). The executor adds `metadata.resourceVersion` of the cached pod: the API server
//    refuses the patch (409) when the pod changed since the cache saw it, never a blind PUT.
// 3. `finishGracePatch` / `dropGracePatch` / `nextBatchPatch` — the later writes of the refresh (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go).
// Resources (gate InPlaceWorkloadVerticalScaling) go through `pods/<name>/resize` when the server has it.
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_REVISION_HASH,
} from '../../api/well-known.ts';
import type { Container, Pod, PodCondition } from '../../kube/types.ts';
import { rfc3339 } from '../plan/pod-template.ts';
import { hasReadinessGate, podCondition, shortHash } from '../plan/pod-predicates.ts';
import { notReadyGatesMessage } from '../plan/pod-readiness.ts';
import { encodeGraceSpec, encodeState, LEGACY_ANNOTATION_GRACE, LEGACY_ANNOTATION_STATE, type InPlaceUpdateState } from './state.ts';
import type { RefMetadata, ResourceChange, UpdateSpec } from './update-spec.ts';
import { sameQuantity } from './quantity.ts';
import { containerLaunchPriorities } from './launch-priority.ts';

export const REASON_START_INPLACE_UPDATE = 'StartInPlaceUpdate';

export interface PatchContext {
  readonly nowMs: number;
  /** Gate CloneSetShortHash: the `controller-revision-hash` label holds the bare hash. */
  readonly shortHashLabel: boolean;
  /** Gate InPlaceWorkloadVerticalScaling. */
  readonly verticalScaling: boolean;
  /** The API server has `pods/<name>/resize` (≥ 1.32): resources are changed there, not in the pod spec. */
  readonly resizeSubresource: boolean;
}

/** A strategic merge patch body for `pods/<name>/resize`: `{"spec":{"containers":[{name, resources}]}}`. */
export type ResizePatch = { readonly spec: { readonly containers: readonly { readonly name: string; readonly resources: ResourceChange }[] } };

export interface PodPatch {
  /** Strategic merge patch of the pod (without resourceVersion; the executor adds the cached one). */
  readonly patch: Readonly<Record<string, unknown>>;
  /** Sent first when resources change and the server has the resize subresource. */
  readonly resize?: ResizePatch;
  /** The state annotation the patch writes (for tests and explanations). */
  readonly state?: InPlaceUpdateState;
}

// ---------------------------------------------------------------------------------------------------------------
// Step 1: not ready

/**
 * The pods/status patch marking the pod not ready for the update, or undefined when the cached pod already
 * shows InPlaceUpdateReady=False. `Ready` is only touched when the pod has `Ready` and `ContainersReady=True`;
 * the new `Ready` has no lastTransitionTime (null), like Kruise's (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go).
 */
export function notReadyStatusPatch(pod: Pod, nowMs: number): { readonly status: { readonly conditions: readonly PodCondition[] } } | undefined {
  if (podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'False') return undefined;
  const gate: PodCondition = { type: CONDITION_INPLACE_UPDATE_READY, status: 'False', reason: REASON_START_INPLACE_UPDATE, lastTransitionTime: rfc3339(nowMs) };
  const conditions: PodCondition[] = [gate];
  const ready = podCondition(pod, 'Ready');
  if (ready !== undefined && podCondition(pod, 'ContainersReady')?.status === 'True') {
    const message = notReadyGatesMessage(pod, CONDITION_INPLACE_UPDATE_READY, gate.status);
    const candidate: PodCondition =
      message !== ''
        ? { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message, lastTransitionTime: null }
        : { type: 'Ready', status: 'True', lastTransitionTime: rfc3339(nowMs) };
    if (candidate.status !== ready.status) conditions.push(candidate);
  }
  return { status: { conditions } };
}

/**
 * What the update step's decision about `pod` rests on: the incarnation, not being deleted, its revision,
 * lifecycle state, in-place state, containers and the not-ready mark. The pod patch is guarded by the cached
 * resourceVersion, so any write to the pod — also a kubelet's status write answering our not-ready mark, which
 * follows it within milliseconds — makes it 409. When the live pod still has the same guard, none of that changed
 * and the patch is retried at once with the live resourceVersion (execute-pod.ts); otherwise the pass re-plans.
 * Without the retry, a controller whose writes trail the kubelet's by a few milliseconds (a drained rate limiter)
 * loses that race every pass and the pod waits not ready, found by `npm run chaos` (bench/chaos.ts).
 */
export function inPlaceGuardOf(pod: Pod): string {
  return JSON.stringify([
    pod.metadata.uid ?? '',
    pod.metadata.deletionTimestamp ?? '',
    pod.metadata.labels?.[LABEL_REVISION_HASH] ?? '',
    pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '',
    pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE] ?? '',
    pod.spec.containers.map((c) => [c.name, c.image ?? '', c.resources ?? {}]),
    podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status ?? '',
  ]);
}

/** The cached pod shows the not-ready mark written by this engine (InPlaceUpdateReady False). */
export function isMarkedNotReady(pod: Pod): boolean {
  return podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'False';
}

/** Kruise `CheckPodNeedsBeUnready` for a CloneSet pod (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go). */
export function needsNotReady(pod: Pod, spec: UpdateSpec, verticalScaling: boolean): boolean {
  if (!hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY)) return false;
  const verticalOnly = Object.keys(spec.containerResources).length > 0 && Object.keys(spec.containerImages).length === 0 && !spec.updateEnvFromMetadata;
  if (!verticalScaling || !verticalOnly) return true;
  // Vertical only: not ready only if a resized resource restarts its container.
  for (const c of pod.spec.containers) {
    const change = spec.containerResources[c.name];
    if (change === undefined) continue;
    const diff = resourceDiff(c, change);
    const changed = new Set([...Object.keys(diff?.limits ?? {}), ...Object.keys(diff?.requests ?? {})]);
    const policies = c['resizePolicy'];
    if (!Array.isArray(policies)) continue;
    for (const p of policies as unknown[]) {
      if (typeof p !== 'object' || p === null) continue;
      const { resourceName, restartPolicy } = p as { resourceName?: unknown; restartPolicy?: unknown };
      if (restartPolicy === 'RestartContainer' && typeof resourceName === 'string' && changed.has(resourceName)) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Step 2: the pod

function revisionLabels(revision: string, ctx: PatchContext): Record<string, string> {
  return { [LABEL_REVISION_HASH]: ctx.shortHashLabel ? shortHash(revision) : revision, [LABEL_POD_TEMPLATE_HASH]: shortHash(revision) };
}

/**
 * The pod patch of an in-place update (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go with CloneSet's extra mutation "lifecycle Updating").
 * Without a grace period the spec is applied at once; with one, it is stored in the grace annotation.
 */
export function inPlaceUpdatePatch(pod: Pod, spec: UpdateSpec, ctx: PatchContext): PodPatch {
  const now = rfc3339(ctx.nowMs);
  const state: InPlaceUpdateState = {
    revision: spec.revision,
    updateTimestamp: now,
    lastContainerStatuses: null,
    ...(spec.updateEnvFromMetadata ? { updateEnvFromMetadata: true } : {}),
    ...(Object.keys(spec.containerResources).length > 0 ? { updateResources: true } : {}),
    ...(Object.keys(spec.containerImages).length > 0 ? { updateImages: true } : {}),
  };
  const labels: Record<string, string | null> = { ...revisionLabels(spec.revision, ctx), [LABEL_LIFECYCLE_STATE]: 'Updating' };
  const annotations: Record<string, string | null> = {
    [ANNOTATION_LIFECYCLE_TIMESTAMP]: now,
    [LEGACY_ANNOTATION_STATE]: null,
  };
  if (spec.graceSeconds > 0) {
    annotations[ANNOTATION_INPLACE_UPDATE_STATE] = encodeState(state);
    annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = encodeGraceSpec(spec);
    return { patch: { metadata: { labels, annotations } }, state };
  }
  return applySpec(pod, spec, state, ctx, labels, { ...annotations, ...removeGrace() });
}

/** docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update.go), grace period over: apply the stored spec and drop the grace annotation. */
export function finishGracePatch(pod: Pod, spec: UpdateSpec, state: InPlaceUpdateState, ctx: PatchContext): PodPatch {
  return applySpec(pod, spec, state, ctx, {}, removeGrace());
}

/** docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update.go), the pod moved to another revision meanwhile: just drop the grace annotation. */
export function dropGracePatch(): PodPatch {
  return { patch: { metadata: { annotations: removeGrace() } } };
}

/** docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update.go): the next container batch of a multi-batch update (launch priorities). */
export function nextBatchPatch(pod: Pod, state: InPlaceUpdateState, ctx: PatchContext): PodPatch {
  const spec: UpdateSpec = {
    revision: state.revision,
    containerImages: state.nextContainerImages ?? {},
    containerRefMetadata: state.nextContainerRefMetadata ?? {},
    containerResources: state.nextContainerResources ?? {},
    updateEnvFromMetadata: state.updateEnvFromMetadata === true,
    graceSeconds: 0,
  };
  return applySpec(pod, spec, state, ctx, {}, {});
}

function removeGrace(): Record<string, null> {
  return { [ANNOTATION_INPLACE_UPDATE_GRACE]: null, [LEGACY_ANNOTATION_GRACE]: null };
}

/**
 * Applies a spec to the pod (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go): the batch = containers without priority + those of the highest
 * launch priority (launch-priority.ts: the barrier env, or what Kruise's webhook would turn into one)
 * + (transitively) containers sharing a changed label/annotation key with a batch member; the rest is
 * deferred into the state's `next*` maps.
 */
function applySpec(
  pod: Pod,
  spec: UpdateSpec,
  base: InPlaceUpdateState,
  ctx: PatchContext,
  labelsIn: Record<string, string | null>,
  annotationsIn: Record<string, string | null>,
): PodPatch {
  const labels: Record<string, string | null> = { ...labelsIn };
  const annotations: Record<string, string | null> = { ...annotationsIn };
  const md = spec.metaDataPatch?.metadata;
  // Every other key of the template-metadata patch (finalizers and their strategic-merge directives) goes to
  // the pod patch as is: the API server applies it like Kruise's local StrategicMergePatch.
  const otherMetadata: Record<string, unknown> = {};
  if (md !== undefined) {
    for (const [k, v] of Object.entries(asMap(md['labels']))) labels[k] = v;
    for (const [k, v] of Object.entries(asMap(md['annotations']))) annotations[k] = v;
    for (const [k, v] of Object.entries(md)) if (k !== 'labels' && k !== 'annotations') otherMetadata[k] = v;
  }
  const touched = (name: string): boolean => name in spec.containerImages || name in spec.containerRefMetadata || name in spec.containerResources;
  const batch = new Set<string>();
  let highest: number | undefined;
  let highestNames: string[] = [];
  const priorities = containerLaunchPriorities(pod);
  for (const c of pod.spec.containers) {
    if (!touched(c.name)) continue;
    const p = priorities.get(c.name);
    if (p === undefined) batch.add(c.name);
    else if (highest === undefined || highest < p) {
      highest = p;
      highestNames = [c.name];
    } else if (highest === p) highestNames.push(c.name);
  }
  for (const n of highestNames) batch.add(n);
  addMetadataSharers(batch, spec.containerRefMetadata);

  const nextImages: Record<string, string> = {};
  const nextMeta: Record<string, RefMetadata> = {};
  const nextRes: Record<string, ResourceChange> = {};
  const last: Record<string, { imageID?: string }> = { ...(base.lastContainerStatuses ?? {}) };
  const containers: Record<string, unknown>[] = [];
  const resize: { name: string; resources: ResourceChange }[] = [];
  for (const c of pod.spec.containers) {
    const image = spec.containerImages[c.name];
    const res = ctx.verticalScaling ? spec.containerResources[c.name] : undefined;
    if (!batch.has(c.name)) {
      if (image !== undefined) nextImages[c.name] = image;
      if (res !== undefined) nextRes[c.name] = res;
      continue;
    }
    const entry: Record<string, unknown> = { name: c.name };
    if (image !== undefined) {
      entry['image'] = image;
      const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
      if (status !== undefined && !(c.name in last)) last[c.name] = status.imageID !== undefined && status.imageID !== '' ? { imageID: status.imageID } : {};
    }
    if (res !== undefined) {
      const diff = resourceDiff(c, res);
      if (diff !== undefined) {
        if (ctx.resizeSubresource) resize.push({ name: c.name, resources: diff });
        else entry['resources'] = diff;
      }
    }
    if (Object.keys(entry).length > 1) containers.push(entry);
  }
  for (const [name, meta] of Object.entries(spec.containerRefMetadata)) {
    if (batch.has(name)) {
      for (const [k, v] of Object.entries(meta.labels ?? {})) labels[k] = v;
      for (const [k, v] of Object.entries(meta.annotations ?? {})) annotations[k] = v;
    } else {
      nextMeta[name] = meta;
    }
  }
  const deferred = Object.keys(nextImages).length > 0 || Object.keys(nextMeta).length > 0;
  const batchNames = [...batch].sort();
  const { nextContainerImages: _i, nextContainerRefMetadata: _m, nextContainerResources: _r, preCheckBeforeNext: _p, ...rest } = base;
  const state: InPlaceUpdateState = {
    ...rest,
    lastContainerStatuses: Object.keys(last).length > 0 ? last : null,
    ...(Object.keys(nextImages).length > 0 ? { nextContainerImages: nextImages } : {}),
    ...(Object.keys(nextMeta).length > 0 ? { nextContainerRefMetadata: nextMeta } : {}),
    ...(Object.keys(nextRes).length > 0 ? { nextContainerResources: nextRes } : {}),
    ...(deferred ? { preCheckBeforeNext: { containersRequiredReady: batchNames } } : {}),
    containerBatchesRecord: [...(base.containerBatchesRecord ?? []), { timestamp: rfc3339(ctx.nowMs), containers: batchNames }],
  };
  annotations[ANNOTATION_INPLACE_UPDATE_STATE] = encodeState(state);
  const patch: Record<string, unknown> = {
    metadata: { ...otherMetadata, ...(Object.keys(labels).length > 0 ? { labels } : {}), annotations },
    ...(containers.length > 0 ? { spec: { containers } } : {}),
  };
  return { patch, ...(resize.length > 0 ? { resize: { spec: { containers: resize } } } : {}), state };
}

function asMap(v: unknown): Record<string, string | null> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  const out: Record<string, string | null> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || x === null) out[k] = x;
  return out;
}

function addMetadataSharers(batch: Set<string>, ref: Readonly<Record<string, RefMetadata>>): void {
  let grown = true;
  while (grown) {
    grown = false;
    const labels = new Set<string>();
    const annotations = new Set<string>();
    for (const name of batch) {
      for (const k of Object.keys(ref[name]?.labels ?? {})) labels.add(k);
      for (const k of Object.keys(ref[name]?.annotations ?? {})) annotations.add(k);
    }
    for (const [name, meta] of Object.entries(ref)) {
      if (batch.has(name)) continue;
      const shares = Object.keys(meta.labels ?? {}).some((k) => labels.has(k)) || Object.keys(meta.annotations ?? {}).some((k) => annotations.has(k));
      if (shares) {
        batch.add(name);
        grown = true;
      }
    }
  }
}

/** The cpu/memory values of `want` that differ from the container's current resources; undefined if none. */
function resourceDiff(c: Container, want: ResourceChange): ResourceChange | undefined {
  const out: { limits?: Record<string, string>; requests?: Record<string, string> } = {};
  for (const kind of ['limits', 'requests'] as const) {
    for (const [name, value] of Object.entries(want[kind] ?? {})) {
      if (!sameQuantity(c.resources?.[kind]?.[name], value)) out[kind] = { ...out[kind], [name]: value };
    }
  }
  return out.limits === undefined && out.requests === undefined ? undefined : out;
}
