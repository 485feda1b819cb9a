// The refresh at the start of Update (docs/features.md#update-types, #in-place-update, #lifecycle-states; Kruise pkg/controller/cloneset/sync/cloneset_update.go): per pod, the writes that
// move it along its lifecycle and make it Ready, before any pod is updated.
import type { CloneSet } from '../../api/cloneset.ts';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_POD_TEMPLATE_HASH, LABEL_REVISION_HASH } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import { podUpdateComplete } from '../inplace/completion.ts';
import { deferReadyToUpdate, refreshInPlace, type InPlaceContext } from '../inplace/plan.ts';
import { minDelay, podRefOf, type PlanAction } from './actions.ts';
import { refreshLifecycle, type RefreshContext } from './lifecycle-state.ts';
import { hasReadinessGate, lifecycleStateOf, podCondition, shortHash } from './pod-predicates.ts';

export interface RefreshResult {
  readonly actions: readonly PlanAction[];
  /** A lifecycle or pod-template-hash write happened: no pod is updated in this pass. */
  readonly blocksUpdate: boolean;
  /** The nearest end of an in-place grace period (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go), if any. */
  readonly requeueAfterMs?: number;
  readonly explain: readonly string[];
}

export function planRefresh(cloneSet: CloneSet, pods: readonly Pod[], ctx: RefreshContext = {}, inPlace?: InPlaceContext): RefreshResult {
  const actions: PlanAction[] = [];
  const explain: string[] = [];
  const errors: string[] = [];
  let blocksUpdate = false;
  let requeueAfterMs: number | undefined;
  const lifecycleCtx: RefreshContext = inPlace === undefined ? ctx : { ...ctx, isUpdateComplete: (p) => podUpdateComplete(p, inPlace.gates).complete };
  for (const pod of pods) {
    let ready: ReadyAction | undefined;
    if (inPlace !== undefined) {
      // The in-place refresh (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go): grace period end, next container batch, InPlaceUpdateReady=True.
      const r = refreshInPlace(pod, inPlace);
      if (r.actions.length > 0) actions.push(...r.actions);
      requeueAfterMs = minDelay(requeueAfterMs, r.requeueAfterMs);
      if (r.explain !== undefined) explain.push(r.explain);
      if (r.error !== undefined) errors.push(r.error);
      // A pod marked not ready for an update still to come is left to the update step (kruise#2276).
      if (r.readyAction?.kind === 'SetInPlaceUpdateReady' && !deferReadyToUpdate(cloneSet, pod, inPlace)) ready = r.readyAction;
    } else {
      // The controller is the only writer of InPlaceUpdateReady; without it a new pod never becomes Ready.
      if (hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY) && podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status !== 'True') {
        ready = { kind: 'SetInPlaceUpdateReady', pod: podRefOf(pod) };
      }
    }
    // Lifecycle transitions and the KruisePodReady condition (lifecycle-state.ts); only a label change blocks.
    const lifecycle = refreshLifecycle(cloneSet, pod, lifecycleCtx);
    if (lifecycle.stateChanged) blocksUpdate = true;
    if (ready !== undefined && waitsForScheduling(cloneSet, pod)) {
      // Written together with PreparingNormal → Normal once the pod is scheduled; it cannot be Ready before.
      ready = undefined;
    }
    if (ready !== undefined) actions.push(...withReadyWrite(ready, lifecycle.actions));
    else if (lifecycle.actions.length > 0) actions.push(...lifecycle.actions);
    const revisionLabel = pod.metadata.labels?.[LABEL_REVISION_HASH];
    if (pod.metadata.labels?.[LABEL_POD_TEMPLATE_HASH] === undefined && revisionLabel !== undefined) {
      actions.push({ kind: 'PatchPodTemplateHash', pod: podRefOf(pod), hash: shortHash(revisionLabel) });
      blocksUpdate = true;
    }
  }
  if (errors.length > 0) {
    // Kruise aborts Update on a refresh error (FailedUpdate); the other pods' refresh writes still go out here.
    actions.push({ kind: 'FailUpdate', message: errors.join('; ') });
    blocksUpdate = true;
  }
  return { actions, blocksUpdate, explain, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

type ReadyAction = Extract<PlanAction, { kind: 'SetInPlaceUpdateReady' }>;

/**
 * A new pod without a preNormal hook waits, unscheduled, in PreparingNormal (docs/features.md#lifecycle-states): its InPlaceUpdateReady
 * write waits too, so that once it is scheduled one request sets both (a pod cannot be Ready before it is
 * scheduled, so nothing observable is delayed). With a preNormal hook the condition is written at once: such a
 * pod is Ready (not available) while the hook holds it.
 */
function waitsForScheduling(cloneSet: CloneSet, pod: Pod): boolean {
  return lifecycleStateOf(pod) === 'PreparingNormal' && cloneSet.spec.lifecycle?.preNormal === undefined && (pod.spec.nodeName ?? '') === '';
}

/**
 * The refresh writes of one pod, with InPlaceUpdateReady=True and a plain lifecycle transition (label, timestamp,
 * hook labels — no finalizers, no KruisePodReady step) merged into one pods/status patch: the status subresource
 * of pods takes metadata labels and annotations too (only spec, owner references and the deletion timestamp are
 * kept from the stored pod). That is one request instead of two per new pod (create + 1) and per in-place
 * update (not-ready, update, ready + Normal), with the same end state and the same resourceVersion guard.
 */
function withReadyWrite(ready: ReadyAction, lifecycle: readonly PlanAction[]): PlanAction[] {
  const [only, ...rest] = lifecycle;
  if (only === undefined || rest.length > 0 || only.kind !== 'PatchPodLifecycle' || (only.addFinalizers ?? []).length > 0) return [ready, ...lifecycle];
  return [{ ...ready, lifecycle: { state: only.state, ...(only.addLabels !== undefined ? { addLabels: only.addLabels } : {}) } }];
}
