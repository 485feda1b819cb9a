// The in-place update engine as pure planning steps (docs/features.md#update-types, #in-place-update; Kruise pkg/controller/cloneset/sync/cloneset_update.go): what to write for one pod,
// read from the cached pod only. The executor performs the writes (execute.ts).
//
// The not-ready step (kruise#2276). Kruise writes InPlaceUpdateReady=False and then PUTs the new spec in the same
// call, re-reading the pod from the informer cache; when the PUT conflicts because the cache has not caught up,
// the next pass's refresh sets the condition True again and the following update skips the False write (the
// stale cache still shows False) — the containers restart while the pod receives traffic. Here the two writes
// are two passes:
//   pass 1  the pod is chosen → pods/status patch InPlaceUpdateReady=False (+ Ready=False), RV expectation.
//   pass 2+ the reconciler plans only once the cache shows that write (RV expectation), so the cached pod
//           shows InPlaceUpdateReady=False; only then the pod patch is planned, and it carries the cached
//           pod's resourceVersion as a precondition: if the pod changed on the server since (any write, e.g.
//           a stale-cache True), the API server answers 409 and nothing is applied; the pass is re-planned
//           from the newer cache.
// While a rollout is in progress, the refresh never turns a drained pod that still waits for its update back
// to True (`deferReadyToUpdate`); the update step decides: update it, keep it (no budget yet) or give it back.
import { pvcResizePolicyOf } from '../../api/extensions.ts';
import type { CloneSet, CloneSetUpdateStrategyType } from '../../api/cloneset.ts';
import { ANNOTATION_VCT_HASH, CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE, type FeatureGates } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction, type PlannedEvent } from '../plan/actions.ts';
import { inPlaceUpdateLifecycle } from '../plan/lifecycle-state.ts';
import { hasReadinessGate, podCondition, revisionMatches, timestampMs } from '../plan/pod-predicates.ts';
import { containersComplete, hasNextBatch } from './completion.ts';
import {
  dropGracePatch,
  finishGracePatch,
  inPlaceGuardOf,
  inPlaceUpdatePatch,
  isMarkedNotReady,
  needsNotReady,
  nextBatchPatch,
  notReadyStatusPatch,
  REASON_START_INPLACE_UPDATE,
  type PatchContext,
} from './pod-patch.ts';
import { decodeGraceSpec, graceAnnotationOf, readState, StateParseError } from './state.ts';
import { calculateUpdateSpec, type InPlaceRevision, type SpecDecision } from './update-spec.ts';
import type { ResolvedRevisions } from '../plan/resolved-revisions.ts';
import { sortRevisions, templateFromRevision } from '../plan/revisions.ts';

export interface InPlaceContext {
  readonly nowMs: number;
  readonly gates: FeatureGates;
  /** The API server has `pods/<name>/resize` (decided once at start-up). */
  readonly resizeSubresource: boolean;
  /** Every revision of the CloneSet, oldest first (docs/features.md#revisions; Kruise pkg/util/history/controller_history.go order); the pod's own is the first that matches. */
  readonly revisions: readonly InPlaceRevision[];
  readonly currentRevision: string;
  readonly updateRevision: string;
}

/** v1alpha1 `updateStrategy.type` (ReCreate when unset or unknown). */
export function updatePolicyOf(cloneSet: CloneSet): CloneSetUpdateStrategyType {
  const t = cloneSet.spec.updateStrategy?.type;
  return t === 'InPlaceIfPossible' || t === 'InPlaceOnly' ? t : 'ReCreate';
}

export function isInPlacePolicy(cloneSet: CloneSet): boolean {
  return updatePolicyOf(cloneSet) !== 'ReCreate';
}

function patchContext(ctx: Pick<InPlaceContext, 'nowMs' | 'gates' | 'resizeSubresource'>): PatchContext {
  return {
    nowMs: ctx.nowMs,
    shortHashLabel: ctx.gates.CloneSetShortHash,
    verticalScaling: ctx.gates.InPlaceWorkloadVerticalScaling,
    resizeSubresource: ctx.resizeSubresource,
  };
}

/** The revision a pod is on: the first (oldest) revision whose name matches its label (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go). */
export function revisionOfPod(pod: Pod, revisions: readonly InPlaceRevision[]): InPlaceRevision | undefined {
  return revisions.find((r) => revisionMatches(pod, r.name));
}

/** docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update_defaults.go) for moving `pod` to `target` under this CloneSet's options. */
export function inPlaceDecision(cloneSet: CloneSet, pod: Pod, target: string, ctx: InPlaceContext): SpecDecision {
  const policy = updatePolicyOf(cloneSet);
  return calculateUpdateSpec(
    revisionOfPod(pod, ctx.revisions),
    ctx.revisions.find((r) => r.name === target),
    {
      gates: ctx.gates,
      gracePeriodSeconds: cloneSet.spec.updateStrategy?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0,
      // With in-place PVC resize (docs/features.md#pvc-resize-in-place) a claim template change never recreates pods.
      ignoreVolumeClaimTemplatesHashDiff: policy === 'InPlaceOnly' || pvcResizePolicyOf(cloneSet) === 'InPlace',
    },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Update (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go, in-place branch)

export type InPlacePodPlan =
  /** The pod is handled in place this pass (maybe by waiting): these writes, and the delay until it goes on. */
  | { readonly kind: 'inPlace'; readonly actions: readonly PlanAction[]; readonly events: readonly PlannedEvent[]; readonly requeueAfterMs?: number; readonly explain: string }
  /** The change cannot be applied in place (the caller falls back to ReCreate, or fails for InPlaceOnly). */
  | { readonly kind: 'notInPlace'; readonly reason: string }
  /** The update pass fails with this error. */
  | { readonly kind: 'error'; readonly message: string };

export function planInPlaceUpdate(cloneSet: CloneSet, pod: Pod, target: string, ctx: InPlaceContext): InPlacePodPlan {
  const decision = inPlaceDecision(cloneSet, pod, target, ctx);
  if (!decision.inPlace) return { kind: 'notInPlace', reason: decision.reason };
  const name = pod.metadata.name ?? '';
  const lifecycle = inPlaceUpdateLifecycle(cloneSet, pod);
  if (lifecycle.kind === 'refuse') return { kind: 'error', message: lifecycle.error };
  if (lifecycle.kind === 'wait') return { kind: 'inPlace', actions: lifecycle.actions, events: [], explain: `${name}: ${lifecycle.reason}` };
  const spec = decision.spec;
  const ref = podRefOf(pod);
  if (needsNotReady(pod, spec, ctx.gates.InPlaceWorkloadVerticalScaling) && !isMarkedNotReady(pod)) {
    const status = notReadyStatusPatch(pod, ctx.nowMs);
    if (status !== undefined) {
      return {
        kind: 'inPlace',
        actions: [{ kind: 'MarkPodNotReadyForInPlaceUpdate', pod: ref, revision: target, patch: status }],
        events: [],
        explain: `${name}: InPlaceUpdateReady=False before updating in place to ${target}`,
      };
    }
  }
  const patch = inPlaceUpdatePatch(pod, spec, patchContext(ctx));
  return {
    kind: 'inPlace',
    actions: [
      {
        kind: 'UpdatePodInPlace',
        pod: ref,
        step: 'update',
        revision: target,
        patch: patch.patch,
        ...(patch.resize !== undefined ? { resize: patch.resize } : {}),
        guard: inPlaceGuardOf(pod),
      },
    ],
    events: [],
    ...(spec.graceSeconds > 0 ? { requeueAfterMs: spec.graceSeconds * 1000 } : {}),
    explain: `${name}: update in place to ${target}${spec.graceSeconds > 0 ? ` (grace ${spec.graceSeconds}s)` : ''}`,
  };
}

/**
 * A pod marked not ready by the engine that still waits for an update of the rollout in progress: the refresh
 * leaves its InPlaceUpdateReady condition to the update step.
 */
export function deferReadyToUpdate(cloneSet: CloneSet, pod: Pod, ctx: Pick<InPlaceContext, 'currentRevision' | 'updateRevision' | 'gates'>): boolean {
  if (!isInPlacePolicy(cloneSet)) return false;
  const cond = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  if (cond?.status !== 'False' || cond.reason !== REASON_START_INPLACE_UPDATE) return false;
  if (graceAnnotationOf(pod) !== undefined) return false;
  if (ctx.currentRevision === ctx.updateRevision) return waitsToGoBack(pod, ctx.updateRevision);
  // Waiting: not on the update revision — or, with partition rollback, maybe waiting to go back.
  return !revisionMatches(pod, ctx.updateRevision) || ctx.gates.CloneSetPartitionRollback;
}

/**
 * Update revision == current revision (the template went back before a rollout finished, or a controller that
 * never wrote a status took the update revision as current): a drained pod on another revision may still be
 * updated in place. Only the update step knows whether it takes the pod this pass, and it gives the readiness of
 * the pods it does not take back itself (`restoreReadiness`: paused, partition, not wanted), so the refresh must
 * not give it back first: when it did, the update step marked it again in the same pass, whose status write
 * moved the resourceVersion under the guarded pod patch — 409, re-plan, for ever (found by `npm run chaos`,
 * docs/chaos.md, without a partition, and by `npm run sim -- --seed 365`, docs/simulation.md, with one).
 */
function waitsToGoBack(pod: Pod, updateRevision: string): boolean {
  return !revisionMatches(pod, updateRevision);
}

// ---------------------------------------------------------------------------------------------------------------
// Refresh (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go)

export interface InPlaceRefresh {
  /** Grace-period end, next container batch, or dropping a stale grace annotation. */
  readonly actions: readonly PlanAction[];
  /** Step 3: InPlaceUpdateReady=True, when the pod is (again) ready for traffic as far as the engine knows. */
  readonly readyAction?: PlanAction;
  readonly requeueAfterMs?: number;
  /** A problem that fails the update pass (unparsable annotations), as Kruise does. */
  readonly error?: string;
  readonly explain?: string;
}

/** Nothing to do: the answer for nearly every pod of every pass, shared rather than allocated per pod. */
const NO_REFRESH: InPlaceRefresh = Object.freeze({ actions: Object.freeze([]) });

export function refreshInPlace(pod: Pod, ctx: Pick<InPlaceContext, 'nowMs' | 'gates' | 'resizeSubresource'>): InPlaceRefresh {
  const name = pod.metadata.name ?? '';
  const graceRaw = graceAnnotationOf(pod);
  if (graceRaw !== undefined) {
    let spec;
    try {
      spec = decodeGraceSpec(graceRaw);
    } catch (e) {
      return { actions: [], error: `unparsable in-place update grace of pod ${name}: ${e instanceof StateParseError ? e.message : String(e)}` };
    }
    const state = readState(pod);
    if (state === undefined) {
      return { actions: [], error: 'pod has apps.kruise.io/inplace-update-grace but apps.kruise.io/inplace-update-state not found' };
    }
    if (!state.ok) return NO_REFRESH;
    if (!revisionMatches(pod, spec.revision)) {
      return {
        actions: [{ kind: 'UpdatePodInPlace', pod: podRefOf(pod), step: 'dropGrace', revision: spec.revision, patch: dropGracePatch().patch }],
        explain: `${name}: revision changed, grace dropped`,
      };
    }
    // The state's timestamp has second precision: the grace is counted from the end of that second, so it is
    // never shorter than gracePeriodSeconds after the not-ready mark (Kruise's may be up to 1 s shorter).
    const since = (timestampMs(state.value.updateTimestamp) ?? 0) + 1000;
    const remaining = since + spec.graceSeconds * 1000 - ctx.nowMs;
    if (remaining > 0) return { actions: [], requeueAfterMs: Math.ceil(remaining / 1000) * 1000, explain: `${name}: grace period, ${remaining} ms left` };
    const patch = finishGracePatch(pod, spec, state.value, patchContext(ctx));
    return {
      actions: [
        {
          kind: 'UpdatePodInPlace',
          pod: podRefOf(pod),
          step: 'finishGrace',
          revision: spec.revision,
          patch: patch.patch,
          ...(patch.resize !== undefined ? { resize: patch.resize } : {}),
        },
      ],
      explain: `${name}: grace period over, applying the update`,
    };
  }
  const state = readState(pod);
  if (state !== undefined) {
    if (!state.ok) return { actions: [], error: `unparsable in-place update state of pod ${name}: ${state.error}` };
    const done = containersComplete(pod, state.value, ctx.gates);
    if (!done.complete) return { actions: [], explain: `${name}: in-place update in progress (${done.reason})` };
    if (hasNextBatch(state.value)) {
      const required = state.value.preCheckBeforeNext?.containersRequiredReady ?? [];
      const statuses = pod.status?.containerStatuses ?? [];
      const unready = required.filter((c) => statuses.find((s) => s.name === c)?.ready !== true);
      if (unready.length > 0) return { actions: [], explain: `${name}: next batch waits for ${unready.join(', ')}` };
      const images = state.value.nextContainerImages ?? {};
      const meta = state.value.nextContainerRefMetadata ?? {};
      if (Object.keys(images).length > 0 || Object.keys(meta).length > 0) {
        const patch = nextBatchPatch(pod, state.value, patchContext(ctx));
        return {
          actions: [
            {
              kind: 'UpdatePodInPlace',
              pod: podRefOf(pod),
              step: 'nextBatch',
              revision: state.value.revision,
              patch: patch.patch,
              ...(patch.resize !== undefined ? { resize: patch.resize } : {}),
            },
          ],
          explain: `${name}: next container batch`,
        };
      }
      // Source quirk (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go): resources alone pending → no batch write, fall through.
    }
  }
  if (!hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY) || podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'True') return NO_REFRESH;
  // Pods the engine touched get the write guarded by the cached resourceVersion (Kruise#2274: the condition is
  // only written for the pod version it was decided on); a new pod's first True is written unguarded.
  const touched = state !== undefined || podCondition(pod, CONDITION_INPLACE_UPDATE_READY) !== undefined;
  return { actions: [], readyAction: { kind: 'SetInPlaceUpdateReady', pod: podRefOf(pod), ...(touched ? { guardResourceVersion: true } : {}) } };
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

/** The revisions as the engine sees them: the full history when the revision sync gave it, else current+update. */
export function inPlaceRevisions(resolved: ResolvedRevisions): InPlaceRevision[] {
  const out: InPlaceRevision[] = [];
  for (const rev of sortRevisions(resolved.history ?? [])) {
    const template = templateFromRevision(rev);
    if (template === undefined) continue;
    out.push({ name: rev.metadata.name ?? '', template, vctHash: rev.metadata.annotations?.[ANNOTATION_VCT_HASH] });
  }
  for (const r of [resolved.current, resolved.update]) {
    if (!out.some((x) => x.name === r.name)) out.push({ name: r.name, template: r.template });
  }
  return out;
}

/**
 * InPlaceOnly refuses maxSurge (Kruise's admission rejects it; we have no admission webhook): the planner works
 * on a copy with maxSurge dropped, and says so once per generation (on the first pass that sees it).
 */
export function withoutInPlaceOnlySurge(cloneSet: CloneSet): { readonly cloneSet: CloneSet; readonly event?: PlannedEvent } {
  const us = cloneSet.spec.updateStrategy;
  if (us?.type !== 'InPlaceOnly' || us.maxSurge === undefined || us.maxSurge === 0 || us.maxSurge === '0%') return { cloneSet };
  const { maxSurge, ...rest } = us;
  const copy: CloneSet = { ...cloneSet, spec: { ...cloneSet.spec, updateStrategy: rest } };
  const firstPass = cloneSet.status?.observedGeneration !== cloneSet.metadata.generation;
  return {
    cloneSet: copy,
    ...(firstPass
      ? { event: { type: 'Warning', reason: 'InvalidMaxSurge', message: `updateStrategy.maxSurge ${String(maxSurge)} is ignored: InPlaceOnly never surges (treated as 0)` } }
      : {}),
  };
}

/**
 * The update step's half of the refresh (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go) for pods the refresh deferred to it: a pod marked not
 * ready that no longer waits for an in-place update of this pass (not wanted any more, paused, partition, policy
 * changed) gets InPlaceUpdateReady back — once its own in-place state says it is complete.
 */
export function restoreReadiness(cloneSet: CloneSet, pods: readonly Pod[], keep: ReadonlySet<Pod>, ctx: InPlaceContext | undefined): PlanAction[] {
  // ReCreate defers no pod (deferReadyToUpdate): no walk over every pod of every pass.
  if (ctx === undefined || !isInPlacePolicy(cloneSet)) return [];
  const out: PlanAction[] = [];
  for (const pod of pods) {
    if (keep.has(pod) || !deferReadyToUpdate(cloneSet, pod, ctx)) continue;
    const ready = refreshInPlace(pod, ctx).readyAction;
    if (ready !== undefined) out.push(ready);
  }
  return out;
}

/** docs/features.md#update-types (Kruise pkg/controller/cloneset/sync/cloneset_update.go): a pod in its grace period is not a candidate, unless its lifecycle is Updated. */
export function inGracePeriod(pod: Pod): boolean {
  return graceAnnotationOf(pod) !== undefined && pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] !== 'Updated';
}
