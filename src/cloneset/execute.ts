// executePlan: performs a plan's writes: the only writer of the CloneSet controller (tools/architecture/api-writes.ts
// checks that no other module calls a write port). Every write goes through write-policy.ts (fencing, one log line
// with the plan's reason, 409/422 → a short requeue). Expectations are registered BEFORE each create/delete and
// lowered only when the write certainly failed, so a lagging cache never causes a second create or delete; every
// PATCH/PUT sets a resourceVersion expectation. Stops at the first failure: the next reconcile re-plans from fresh
// state. Housekeeping writes (BEST_EFFORT_KINDS) only log their failure.
// Writes to different pods run concurrently (at most POD_WRITE_CONCURRENCY in flight; the client's QPS limiter
// still paces them); the writes to one pod keep their planned order, and creates/deletes of pods and PVCs are
// barriers that run alone, in plan order.
// The writes themselves are in execute-scale.ts (pod and PVC creates and deletes) and execute-pod.ts (patches).
import type { CloneSet } from '../api/cloneset.ts';
import { executeInPlace, markSpecifiedDelete, patchPodConditions, patchPodLifecycle, patchPodTemplateHash, releasePod, adoptPod, setInPlaceUpdateReady } from './execute-pod.ts';
import { cleanupPvc, createPods, deletePods, reownPvc } from './execute-scale.ts';
import { executeExtension } from './execute-extensions.ts';
import {
  createImagePullJob,
  createRevision,
  deleteImagePullJobs,
  labelRevision,
  PassEnded,
  truncateHistory,
  truncatePodsToDelete,
  updateRevision,
  updateStatus,
} from './execute-cloneset.ts';
import { BEST_EFFORT_KINDS, type PlanAction, type PlanPhase } from './plan/actions.ts';
import type { ExecuteDeps } from './execute-deps.ts';
import { runBounded } from '../runtime/bounded-parallel.ts';
import { pino } from 'pino';
import { errorText } from '../kube/api-error.ts';
import { CONFLICT_REQUEUE_MS, policedPorts } from './write-policy.ts';

export type { ExecuteDeps } from './execute-deps.ts';

export interface Outcome {
  /** Number of writes that succeeded. */
  readonly writes: number;
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly error: Error };
  /** A write met 409/422, or the pass ended early (PassEnded): look at the CloneSet again after this delay. */
  readonly requeueAfterMs?: number;
  /** The pass ended early on purpose (the rest of the plan rested on a write that did not happen). */
  readonly ended?: boolean;
}

const SILENT = pino({ level: 'silent' });

/** When a housekeeping write (BEST_EFFORT_KINDS) that failed is tried again. */
export const HOUSEKEEPING_RETRY_MS = 10_000;

/**
 * Pod writes of one pass in flight at once: as many as the API server's own limit takes from one client
 * (bench/limit.ts keeps 64 in flight). A pass that makes hundreds of new pods Ready otherwise holds its CloneSet
 * for the round trips of 16 at a time while the pods scheduled meanwhile wait for the next pass; the client's
 * QPS limiter (--kube-api-qps) still paces them, so at the default limits nothing changes.
 */
export const POD_WRITE_CONCURRENCY = 64;

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

export async function executePlan(cloneSet: CloneSet, key: string, phase: PlanPhase, actions: readonly PlanAction[], deps: ExecuteDeps): Promise<Outcome> {
  let writes = 0;
  let conflicted = false;
  let deferred = false;
  const requeue = (): { requeueAfterMs?: number } => (conflicted ? { requeueAfterMs: CONFLICT_REQUEUE_MS } : deferred ? { requeueAfterMs: HOUSEKEEPING_RETRY_MS } : {});
  const fail = (e: unknown): Outcome => {
    const error = e instanceof Error ? e : new Error(String(e));
    return { writes, failure: { type: phase === 'scale' ? 'FailedScale' : 'FailedUpdate', error }, ...requeue() };
  };
  const logger = deps.logger ?? SILENT;
  const run = async (action: PlanAction): Promise<number> => {
    const ports = policedPorts(deps.ports, {
      cloneSet: key,
      logger,
      reason: reasonOf(action, phase),
      signal: deps.signal,
      onConflict: () => {
        conflicted = true;
      },
      expectPodVersion: (uid, rv) => deps.rvExpectations.expect(uid, rv),
    });
    if (!BEST_EFFORT_KINDS.has(action.kind)) return executeAction(cloneSet, key, action, { ...deps, ports });
    try {
      return await executeAction(cloneSet, key, action, { ...deps, ports });
    } catch (e) {
      // Deferred, not dropped: the CloneSet is requeued for it even if no event comes.
      deferred = true;
      logger.info({ cloneset: key, action: action.kind, err: errorText(e) }, 'housekeeping write deferred to a later pass');
      return 0;
    }
  };
  for (const segment of segmentActions(actions)) {
    if (deps.signal?.aborted === true) return fail(new Error('stopped writing: this replica is stopping or lost its leader lease'));
    if (segment.kind === 'barrier') {
      try {
        writes += await run(segment.action);
      } catch (e) {
        if (e instanceof PassEnded) {
          logger.info({ cloneset: key, reason: e.message }, 'pass ended early; requeued');
          return { writes, ended: true, requeueAfterMs: CONFLICT_REQUEUE_MS };
        }
        return fail(e);
      }
      continue;
    }
    const tasks = segment.groups.map((group) => async () => {
      let n = 0;
      try {
        for (const action of group) {
          if (deps.signal?.aborted === true) throw new Error('stopped writing: this replica is stopping or lost its leader lease');
          n += await run(action);
        }
      } finally {
        writes += n;
      }
      return n;
    });
    const { error } = await runBounded(tasks, POD_WRITE_CONCURRENCY);
    if (error !== undefined) return fail(error);
  }
  return { writes, ...requeue() };
}

/** The plan's reason for a write, as the per-write log line gives it. */
export function reasonOf(action: PlanAction, phase: PlanPhase): string {
  switch (action.kind) {
    case 'CreatePods':
      return `${phase}: create ${action.pods.length} pod(s) at revision ${action.pods[0]?.revision ?? ''}`;
    case 'DeletePods':
      return `${phase}: delete (${[...new Set(action.pods.map((d) => d.cause))].join(', ')})`;
    case 'UpdatePodInPlace':
      return `${phase}: in-place ${action.step} to ${action.revision}`;
    case 'MarkPodNotReadyForInPlaceUpdate':
    case 'MarkSpecifiedDelete':
      return `${phase}: update to ${action.revision}`;
    case 'PatchPodLifecycle':
      return `${phase}: lifecycle ${action.state}`;
    case 'CreateRevision':
      return 'new template: create its revision';
    case 'UpdateRevision':
      return `template of an older revision: renumber it to ${action.revision.revision}`;
    case 'TruncateHistory':
      return 'revisionHistoryLimit';
    case 'UpdateStatus':
      return 'status changed';
    case 'TruncatePodsToDelete':
      return 'podsToDelete names pods that no longer exist';
    case 'CreateImagePullJob':
    case 'LabelRevision':
    case 'DeleteImagePullJobs':
      return 'image pre-download';
    default:
      return `${phase}: ${action.kind}`;
  }
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
    case 'CreateRevision':
      return createRevision(cs, key, action, deps);
    case 'UpdateRevision':
      return updateRevision(cs, action, deps);
    case 'TruncateHistory':
      return truncateHistory(cs, key, action, deps);
    case 'UpdateStatus':
      return updateStatus(cs, action, deps);
    case 'TruncatePodsToDelete':
      return truncatePodsToDelete(cs, action, deps);
    case 'CreateImagePullJob':
      return createImagePullJob(cs, action, deps);
    case 'LabelRevision':
      return labelRevision(cs, action, deps);
    case 'DeleteImagePullJobs':
      return deleteImagePullJobs(cs, action, deps);
    default:
      return executeExtension(cs, key, action, deps);
  }
}
