// executePlan: performs a plan's writes through the ports. Expectations are registered BEFORE each
// create/delete and lowered when the write fails, so a lagging cache never causes a second create or delete.
// Stops at the first failure: the next reconcile re-plans from fresh state.
// Writes to different pods run concurrently (at most POD_WRITE_CONCURRENCY in flight; the client's QPS limiter
// still paces them); the writes to one pod keep their planned order, and creates/deletes of pods and PVCs are
// barriers that run alone, in plan order.
// The writes themselves are in execute-scale.ts (pod and PVC creates and deletes) and execute-pod.ts (patches).
import type { CloneSet } from '../api/cloneset.ts';
import {
  executeInPlace, markSpecifiedDelete, patchPodConditions, patchPodLifecycle, patchPodTemplateHash, releasePod,
  adoptPod, setInPlaceUpdateReady,
} from './execute-pod.ts';
import { cleanupPvc, createPods, deletePods, reownPvc } from './execute-scale.ts';
import { executeExtension } from './execute-extensions.ts';
import type { PlanAction, PlanPhase } from './plan/actions.ts';
import type { ExecuteDeps } from './execute-deps.ts';
import { runBounded } from '../runtime/bounded-parallel.ts';

export type { ExecuteDeps } from './execute-deps.ts';

export interface Outcome {
  /** Number of writes that succeeded. */
  readonly writes: number;
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly error: Error };
}

const POD_WRITE_CONCURRENCY = 16;

/** A run of per-pod writes (grouped by pod, each group in plan order), or one barrier action. */
type Segment = { readonly kind: 'pods'; readonly groups: readonly (readonly PlanAction[])[] } | { readonly kind: 'barrier'; readonly action: PlanAction };

function podNameOf(action: PlanAction): string | undefined {
  return 'pod' in action ? action.pod.name : undefined;
}

export function segmentActions(actions: readonly PlanAction[]): Segment[] {
  const segments: Segment[] = [];
  let groups: Map<string, PlanAction[]> | undefined;
  for (const action of actions) {
    const pod = podNameOf(action);
    if (pod === undefined) {
      if (groups !== undefined) segments.push({ kind: 'pods', groups: [...groups.values()] });
      groups = undefined;
      segments.push({ kind: 'barrier', action });
      continue;
    }
    groups ??= new Map();
    const group = groups.get(pod);
    if (group === undefined) groups.set(pod, [action]);
    else group.push(action);
  }
  if (groups !== undefined) segments.push({ kind: 'pods', groups: [...groups.values()] });
  return segments;
}

export async function executePlan(
  cloneSet: CloneSet,
  key: string,
  phase: PlanPhase,
  actions: readonly PlanAction[],
  deps: ExecuteDeps,
): Promise<Outcome> {
  let writes = 0;
  const fail = (e: unknown): Outcome => {
    const error = e instanceof Error ? e : new Error(String(e));
    return { writes, failure: { type: phase === 'scale' ? 'FailedScale' : 'FailedUpdate', error } };
  };
  for (const segment of segmentActions(actions)) {
    if (deps.signal?.aborted === true) return fail(new Error('stopped writing: this replica is stopping or lost its leader lease'));
    if (segment.kind === 'barrier') {
      try {
        writes += await executeAction(cloneSet, key, segment.action, deps);
      } catch (e) {
        return fail(e);
      }
      continue;
    }
    const tasks = segment.groups.map((group) => async () => {
      let n = 0;
      try {
        for (const action of group) {
          if (deps.signal?.aborted === true) throw new Error('stopped writing: this replica is stopping or lost its leader lease');
          n += await executeAction(cloneSet, key, action, deps);
        }
      } finally {
        writes += n;
      }
      return n;
    });
    const { error } = await runBounded(tasks, POD_WRITE_CONCURRENCY);
    if (error !== undefined) return fail(error);
  }
  return { writes };
}

async function executeAction(cs: CloneSet, key: string, action: PlanAction, deps: ExecuteDeps): Promise<number> {
  switch (action.kind) {
    case 'ReleasePod':
      return releasePod(cs, action, deps);
    case 'AdoptPod':
      return adoptPod(cs, action, deps);
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
    default:
      return executeExtension(cs, key, action, deps);
  }
}
