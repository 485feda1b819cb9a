// The pod lifecycle state machine (docs/features.md#lifecycle-states, #update-types; Kruise pkg/util/lifecycle/lifecycle_utils.go), pure: which state a pod moves to and the writes
// that move it. Every decision reads the pod as it is now (level-triggered, ADR 0001): a pod waiting on a hook
// is looked at again on every reconcile, so a hook released while the controller was down, or an event that
// was coalesced, is never missed (kruise#2057).
//
//   (created) → PreparingNormal ──preNormal all-hooked (or scheduled, without preNormal)──→ Normal
//   chosen for deletion, preDelete hooked → PreparingDelete ──preDelete no longer hooked──→ deleted
//                                           PreparingDelete ──replicas grew again (no markPodNotReady)──→ PreparingNormal
//   chosen for in-place update: inPlaceUpdate hooked → PreparingUpdate ──no longer hooked──→ Updating
//                               not hooked → Updating (written with the update itself)
//   Updating ──update complete──→ Updated (lifecycle set, inPlaceUpdate not all-hooked) or Normal
//   Updated ──inPlaceUpdate absent or all-hooked again──→ Normal
import type { CloneSet, LifecycleHook } from '../../api/cloneset.ts';
import { ANNOTATION_INPLACE_UPDATE_GRACE, ANNOTATION_INPLACE_UPDATE_STATE, LABEL_LIFECYCLE_STATE, type LifecycleState } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction } from './actions.ts';
import { isAllHooked, isHooked } from './lifecycle.ts';
import { kruisePodReadyAction } from './pod-readiness.ts';
import { lifecycleStateOf, revisionMatches } from './pod-predicates.ts';

/**
 * setState / setStateWithHandler (docs/features.md#lifecycle-states; Kruise pkg/util/lifecycle/lifecycle_utils.go): the not-ready policy for the target state first (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go; also when
 * the pod is already in that state), then the label and timestamp if the state changes. `handler`: the hook
 * whose labels and finalizers are put back on the pod with the state (Updated → PreparingUpdate only).
 */
export function setStateActions(cloneSet: CloneSet, pod: Pod, state: LifecycleState, handler?: LifecycleHook): PlanAction[] {
  const actions: PlanAction[] = [];
  const readiness = kruisePodReadyAction(cloneSet, pod, state);
  if (readiness !== undefined) actions.push(readiness);
  if (lifecycleStateOf(pod) !== state) actions.push(lifecyclePatch(pod, state, handler));
  return actions;
}

function lifecyclePatch(pod: Pod, state: LifecycleState, handler: LifecycleHook | undefined): PlanAction {
  const labels = handler?.labelsHandler ?? {};
  const finalizers = handler?.finalizersHandler ?? [];
  return {
    kind: 'PatchPodLifecycle',
    pod: podRefOf(pod),
    state,
    ...(Object.keys(labels).length > 0 ? { addLabels: { ...labels } } : {}),
    ...(finalizers.length > 0 ? { addFinalizers: [...finalizers] } : {}),
  };
}

export interface RefreshContext {
  /** The update revision: a PreparingUpdate pod that already matches it was rolled back (kruise#1156). */
  readonly updateRevision?: string;
  /**
   * `podUpdateComplete` of the in-place engine (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go). Defaults to the part that needs no engine: not
   * complete while a grace annotation exists, complete when there is no in-place state annotation, otherwise
   * not complete — the in-place engine passes its own predicate.
   */
  readonly isUpdateComplete?: (pod: Pod) => boolean;
}

/**
 * The state the refresh (docs/features.md#update-types, #lifecycle-states; Kruise pkg/controller/cloneset/sync/cloneset_update.go) moves a pod to, or undefined to leave it.
 * `inPlaceUpdate` not all-hooked after an update means "the user controller has not taken the pod back yet":
 * the pod waits in Updated. A nil hook is never all-hooked, so with `lifecycle` set but no inPlaceUpdate hook the
 * pod passes through Updated for one pass (as in Kruise).
 */
export function refreshTarget(cloneSet: CloneSet, pod: Pod, ctx: RefreshContext = {}): LifecycleState | undefined {
  const lifecycle = cloneSet.spec.lifecycle;
  const afterUpdate = (): LifecycleState => (lifecycle !== undefined && !isAllHooked(lifecycle.inPlaceUpdate, pod) ? 'Updated' : 'Normal');
  switch (lifecycleStateOf(pod)) {
    case 'PreparingNormal': {
      // Without a preNormal hook Kruise waits for the pod to be scheduled (an old kube-scheduler bug).
      const hook = lifecycle?.preNormal;
      const ready = hook === undefined ? (pod.spec.nodeName ?? '') !== '' : isAllHooked(hook, pod);
      return ready ? 'Normal' : undefined;
    }
    case 'PreparingUpdate':
      return ctx.updateRevision !== undefined && revisionMatches(pod, ctx.updateRevision) ? afterUpdate() : undefined;
    case 'Updating':
      return (ctx.isUpdateComplete ?? defaultUpdateComplete)(pod) ? afterUpdate() : undefined;
    case 'Updated':
      return lifecycle?.inPlaceUpdate === undefined || isAllHooked(lifecycle.inPlaceUpdate, pod) ? 'Normal' : undefined;
    default:
      return undefined;
  }
}

function defaultUpdateComplete(pod: Pod): boolean {
  const annotations = pod.metadata.annotations ?? {};
  const has = (k: string): boolean => (annotations[k] ?? '') !== '';
  // The legacy keys without the `apps.kruise.io/` prefix are read too (docs/features.md#in-place-update; Kruise apis/apps/pub/inplace_update.go).
  if (has(ANNOTATION_INPLACE_UPDATE_GRACE) || has('inplace-update-grace')) return false;
  return !has(ANNOTATION_INPLACE_UPDATE_STATE) && !has('inplace-update-state');
}

/**
 * The refresh writes for one pod (docs/features.md#update-types, #lifecycle-states, #markpodnotready; Kruise pkg/controller/cloneset/sync/cloneset_update.go): the lifecycle transition, and the
 * `KruisePodReady` condition made to fit the pod's (new) state — initialised True on pods with the gate,
 * keys added for hooks with markPodNotReady, keys dropped when the state no longer calls for them (which also
 * fixes Kruise's stuck `preUpdateHook`, docs/features.md#markpodnotready). `stateChanged`: the label is written (blocks updates in this pass).
 */
export interface LifecycleRefresh {
  readonly actions: readonly PlanAction[];
  readonly stateChanged: boolean;
}

/** Nothing to do: the answer for nearly every pod of every pass, shared rather than allocated per pod. */
const NO_LIFECYCLE_REFRESH: LifecycleRefresh = Object.freeze({ actions: Object.freeze([]), stateChanged: false });

export function refreshLifecycle(cloneSet: CloneSet, pod: Pod, ctx: RefreshContext = {}): LifecycleRefresh {
  const target = refreshTarget(cloneSet, pod, ctx);
  if (target !== undefined) {
    const actions = setStateActions(cloneSet, pod, target);
    return { actions, stateChanged: actions.some((a) => a.kind === 'PatchPodLifecycle') };
  }
  const readiness = kruisePodReadyAction(cloneSet, pod, lifecycleStateOf(pod));
  return readiness !== undefined ? { actions: [readiness], stateChanged: false } : NO_LIFECYCLE_REFRESH;
}

/** What the lifecycle says about updating a pod in place now (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go, the switch on the state). */
export type InPlaceLifecycleDecision =
  /** Update now; the in-place write sets the lifecycle label to Updating (with the timestamp annotation). */
  | { readonly kind: 'proceed' }
  /** Do not update in this pass; `actions` (maybe none) move the pod towards the update. */
  | { readonly kind: 'wait'; readonly actions: readonly PlanAction[]; readonly reason: string }
  /** The update is refused: the update pass fails with this error (FailedUpdate condition). */
  | { readonly kind: 'refuse'; readonly error: string };

/**
 * The lifecycle part of `updatePod` for a pod that can be updated in place (docs/features.md#update-types, #lifecycle-states; Kruise pkg/controller/cloneset/sync/cloneset_update.go). PreparingDelete
 * pods never get here (they are not update candidates); any state that is not a Kruise one is refused.
 */
export function inPlaceUpdateLifecycle(cloneSet: CloneSet, pod: Pod): InPlaceLifecycleDecision {
  const hook = cloneSet.spec.lifecycle?.inPlaceUpdate;
  const state = pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '';
  switch (state) {
    case '':
    case 'PreparingNormal':
    case 'Normal':
      if (isHooked(hook, pod)) {
        return { kind: 'wait', actions: setStateActions(cloneSet, pod, 'PreparingUpdate'), reason: 'inPlaceUpdate hook: PreparingUpdate' };
      }
      return { kind: 'proceed' };
    case 'Updated':
      // The previous update is done but the user controller has not taken the pod back: with a hook, the pod
      // goes back to PreparingUpdate and gets the handlers again, so the user controller sees a fresh "prepare".
      if (hook === undefined) return { kind: 'wait', actions: [], reason: 'Updated without inPlaceUpdate hook: refresh moves it to Normal' };
      return { kind: 'wait', actions: setStateActions(cloneSet, pod, 'PreparingUpdate', hook), reason: 'inPlaceUpdate hook: Updated → PreparingUpdate' };
    case 'PreparingUpdate':
      if (isHooked(hook, pod)) return { kind: 'wait', actions: [], reason: 'waiting for the inPlaceUpdate hook to be released' };
      return { kind: 'proceed' };
    case 'Updating':
      return { kind: 'proceed' };
    default:
      return { kind: 'refuse', error: `not allowed to in-place update pod ${pod.metadata.name ?? ''} in state ${state}` };
  }
}
