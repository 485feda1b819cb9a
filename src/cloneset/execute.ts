// executePlan: performs a plan's writes through the ports. Expectations are registered BEFORE each
// create/delete and lowered when the write fails, so a lagging cache never causes a second create or delete.
// Stops at the first failure: the next reconcile re-plans from fresh state.
// The writes themselves are in execute-scale.ts (pod and PVC creates and deletes) and execute-pod.ts (patches).
import type { CloneSet } from '../api/cloneset.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import {
  executeInPlace, markSpecifiedDelete, patchPodConditions, patchPodLifecycle, patchPodTemplateHash, releasePod, setInPlaceUpdateReady,
} from './execute-pod.ts';
import { cleanupPvc, createPods, deletePods, reownPvc } from './execute-scale.ts';
import type { PlanAction, PlanPhase } from './plan/actions.ts';
import type { Ports } from './ports.ts';

export interface ExecuteDeps {
  readonly ports: Ports;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly recorder: EventRecorder;
  readonly nowMs: () => number;
}

export interface Outcome {
  /** Number of writes that succeeded. */
  readonly writes: number;
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly error: Error };
}

export async function executePlan(
  cloneSet: CloneSet,
  key: string,
  phase: PlanPhase,
  actions: readonly PlanAction[],
  deps: ExecuteDeps,
): Promise<Outcome> {
  let writes = 0;
  for (const action of actions) {
    try {
      writes += await executeAction(cloneSet, key, action, deps);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      return { writes, failure: { type: phase === 'scale' ? 'FailedScale' : 'FailedUpdate', error } };
    }
  }
  return { writes };
}

async function executeAction(cs: CloneSet, key: string, action: PlanAction, deps: ExecuteDeps): Promise<number> {
  switch (action.kind) {
    case 'ReleasePod':
      return releasePod(cs, action, deps);
    case 'CreatePods':
      return createPods(cs, key, action.pods, deps);
    case 'DeletePods':
      return deletePods(cs, key, action.pods, deps);
    case 'PatchPodLifecycle':
      return patchPodLifecycle(cs, action, deps);
    case 'PatchPodConditions':
      return patchPodConditions(cs, action, deps);
    case 'PatchPodTemplateHash':
      return patchPodTemplateHash(cs, action, deps);
    case 'SetInPlaceUpdateReady':
      return setInPlaceUpdateReady(cs, action, deps);
    case 'MarkPodNotReadyForInPlaceUpdate':
    case 'UpdatePodInPlace':
      return executeInPlace(cs, action, deps);
    case 'FailUpdate':
      throw new Error(action.message);
    case 'MarkSpecifiedDelete':
      return markSpecifiedDelete(cs, action, deps);
    case 'ReownPvc':
      return reownPvc(cs, action, deps);
    case 'DeletePvc':
      return cleanupPvc(cs, key, action, deps);
  }
}
