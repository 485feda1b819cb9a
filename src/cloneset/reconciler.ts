// reconcileCloneSet: the glue of one pass, level-triggered on a key — load, gate, plan, execute, status.
import type { Logger } from 'pino';
import type { FeatureGates } from '../api/well-known.ts';
import { errorText, isConflict } from '../kube/api-error.ts';
import { sleep, type Clock } from '../runtime/clock.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import { executePlan } from './execute.ts';
import type { ImagePreDownloader } from './predownload-sync.ts';
import { minDelay } from './plan/actions.ts';
import { planCloneSet } from './plan/index.ts';
import { selectorProblem } from './plan/selector-check.ts';
import type { SurgeRule } from './plan/replica-diff.ts';
import type { InstanceIdSource } from './plan/instance-ids.ts';
import { computeStatus, isStatusChanged } from './plan/status.ts';
import type { Ports } from './ports.ts';
import { syncRevisions, truncateHistory } from './revision-sync.ts';
import { loadSnapshot, revisionsOf, type CloneSetStores } from './snapshot.ts';
import { truncatePodsToDelete } from './truncate-pods-to-delete.ts';

export interface ReconcileConfig {
  readonly gates: FeatureGates;
  readonly excludePreparingDelete: boolean;
  /** undefined → 'kruise'; main.ts passes --cloneset-surge-rule (default 'sustained'). */
  readonly surgeRule?: SurgeRule;
  /** The API server has `pods/<name>/resize` (discovered at start-up). */
  readonly resizeSubresource?: boolean;
}

export interface ReconcileDeps {
  readonly stores: CloneSetStores;
  readonly ports: Ports;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly config: ReconcileConfig;
  readonly ids: InstanceIdSource;
  readonly logger: Logger;
  /** Image pre-download for in-place updates (gate PreDownloadImageForInPlaceUpdate, ImagePullJob served). */
  readonly preDownload?: ImagePreDownloader | undefined;
  /** Aborts when this replica stops or loses its lease: the pass writes nothing more. */
  readonly signal?: AbortSignal | undefined;
}

/** A function, so a check before an await is not taken for granted after it. */
function stopped(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

export async function reconcileCloneSet(key: string, d: ReconcileDeps): Promise<ReconcileResult> {
  if (stopped(d.signal)) return {};
  const cloneSet = d.stores.cloneSets.get(key);
  if (cloneSet === undefined) {
    d.scaleExpectations.forget(key);
    return {};
  }
  const problem = selectorProblem(cloneSet);
  if (problem !== undefined) {
    // Terminal until the user fixes the object (the update event brings us back): no pods, no hot loop.
    d.recorder.event(cloneSet, 'Warning', 'InvalidSelector', problem);
    d.logger.warn({ cloneset: key }, problem);
    return {};
  }
  const gate = d.scaleExpectations.check(key);
  if (!gate.satisfied) {
    if (!gate.timedOut) return { requeueAfterMs: gate.remainingMs };
    // Kruise stays blocked here until an event arrives (kruise#1765); we re-plan from the cache instead.
    d.logger.warn({ cloneset: key, pendingForMs: gate.pendingForMs }, 'scale expectations timed out; re-planning from the cache');
    d.scaleExpectations.forget(key);
  }
  const nowMs = d.clock.now();
  const snapshot = loadSnapshot(d.stores, cloneSet, nowMs);
  const revisionList = revisionsOf(d.stores, cloneSet);
  const revisions = await syncRevisions(cloneSet, revisionList, d.ports);
  for (const pod of snapshot.pods) {
    const uid = pod.metadata.uid ?? '';
    // The cache still shows a pod older than our own last write to it: wait for the watch to catch up
    // (the pod's update event requeues us). Unlike Kruise, a timed-out expectation never blocks for good.
    const check = d.rvExpectations.isSatisfied(uid, pod.metadata.resourceVersion ?? '');
    if (!check.satisfied) {
      if (!check.timedOut) return { requeueAfterMs: Math.min(check.remainingMs, 5000) };
      d.rvExpectations.forget(uid);
    }
  }
  // docs/features.md#reconcile-pass (Kruise pkg/controller/cloneset/cloneset_controller.go): image pre-download, after the expectation checks and before scale/update (only logs errors).
  if (d.preDownload !== undefined) await d.preDownload.sync(cloneSet, revisions);
  const plan = planCloneSet(snapshot, revisions, d.config, d.ids);
  for (const line of plan.explain) d.logger.debug({ cloneset: key, phase: plan.phase }, line);
  for (const e of plan.events) d.recorder.event(cloneSet, e.type, e.reason, e.message);
  const outcome = await executePlan(cloneSet, key, plan.phase, plan.actions, {
    ports: d.ports,
    scaleExpectations: d.scaleExpectations,
    rvExpectations: d.rvExpectations,
    recorder: d.recorder,
    nowMs: () => d.clock.now(),
    sleep: (ms) => sleep(d.clock, ms, d.signal ?? new AbortController().signal),
    signal: d.signal,
  });
  // Stopping (SIGTERM) or fenced (lease lost): no status or history writes; the next leader recomputes them.
  if (stopped(d.signal)) return {};
  const failure = outcome.failure === undefined ? undefined : { type: outcome.failure.type, message: errorText(outcome.failure.error) };
  const { status, requeueAfterMs } = computeStatus({
    cloneSet,
    pods: plan.claimed,
    updateRevision: revisions.update.name,
    currentRevision: revisions.current.name,
    collisionCount: revisions.collisionCount,
    nowMs,
    ...(failure !== undefined ? { failure } : {}),
  });
  let statusRequeueMs: number | undefined;
  if (isStatusChanged(cloneSet.status, status)) {
    try {
      await d.ports.cloneSets.updateStatus(cloneSet, status);
    } catch (e) {
      // Our cached CloneSet is older than the stored one (often our own previous status write): the watch
      // event that brings the newer object requeues us anyway, so this is not worth an error and a backoff.
      if (!isConflict(e)) throw e;
      d.logger.debug({ cloneset: key }, 'status write conflicted with a newer object; retrying shortly');
      statusRequeueMs = 200;
    }
  }
  await truncatePodsToDelete(cloneSet, plan.claimed, d.ports, d.logger);
  await truncateHistory(cloneSet, revisionList, plan.claimed, revisions, d.ports, d.logger);
  if (outcome.failure !== undefined) throw outcome.failure.error;
  const requeue = minDelay(requeueAfterMs, plan.requeueAfterMs, statusRequeueMs);
  return requeue === undefined ? {} : { requeueAfterMs: requeue };
}
