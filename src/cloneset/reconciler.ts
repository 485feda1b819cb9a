// reconcileCloneSet: the glue of one pass, level-triggered on a key — load, gate, plan, execute. Every decision
// is a pure planner's (plan/index.ts, plan/pass.ts), every write the executor's (execute.ts); this module does
// neither.
import type { Logger } from 'pino';
import type { FeatureGates } from '../api/well-known.ts';
import { errorText } from '../kube/api-error.ts';
import { sleep, type Clock } from '../runtime/clock.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import type { KubeObject } from '../kube/types.ts';
import { executePlan, type ExecuteDeps, type Outcome } from './execute.ts';
import { minDelay } from './plan/actions.ts';
import { planCloneSet, planReadinessBesideScaleUp } from './plan/index.ts';
import { startReadinessBeside, wantsReadinessBeside } from './readiness-beside-scale-up.ts';
import { planPassEnd, planPreDownload, planRevisions } from './plan/pass.ts';
import { selectorProblem } from './plan/selector-check.ts';
import { rolloutBlockers } from './plan/blockers.ts';
import type { RolloutObserver } from './rollout-observer.ts';
import { timestampMs } from './plan/pod-predicates.ts';
import type { SurgeRule } from './plan/replica-diff.ts';
import type { RevisionDerivations } from './plan/revisions.ts';
import type { InstanceIdSource } from './plan/instance-ids.ts';
import type { Ports } from './ports.ts';
import { INDEX_OWNER_UID, loadSnapshot, revisionsOf, type CloneSetStores } from './snapshot.ts';

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
  /** Image pre-download for in-place updates is on (gates PreDownloadImageForInPlaceUpdate + KruiseDaemon, ImagePullJob served). */
  readonly preDownload?: boolean | undefined;
  /** The executor's memo of ImagePullJob clean-ups (execute-deps.ts). */
  readonly cleanedPreDownloads?: Set<string> | undefined;
  /** The revision hashes and data bytes, remembered per cached object (revision-memo.ts); computed each pass without. */
  readonly revisionDerivations?: RevisionDerivations | undefined;
  /** Aborts when this replica stops or loses its lease: the pass writes nothing more. */
  readonly signal?: AbortSignal | undefined;
  /** Rollout state for the metrics and the log (cloneset_rollout_blocked, rollout durations). */
  readonly rollouts?: RolloutObserver | undefined;
}

/** The longest a pass waits for the cache to show its own writes before looking again. */
const STALE_CACHE_RECHECK_MS = 5000;

/** A function, so a check before an await is not taken for granted after it. */
function stopped(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

export async function reconcileCloneSet(key: string, d: ReconcileDeps): Promise<ReconcileResult> {
  if (stopped(d.signal)) return {};
  // ---- load
  const cloneSet = d.stores.cloneSets.get(key);
  if (cloneSet === undefined) {
    d.scaleExpectations.forget(key);
    d.rollouts?.forget(key);
    return {};
  }
  const problem = selectorProblem(cloneSet);
  if (problem !== undefined) {
    // Terminal until the user fixes the object (the update event brings us back): no pods, no hot loop.
    d.recorder.event(cloneSet, 'Warning', 'InvalidSelector', problem);
    d.logger.warn({ cloneset: key }, problem);
    return {};
  }
  // ---- gate: the cache shows every write of ours (names created/deleted, resourceVersions written)
  const gate = d.scaleExpectations.check(key);
  if (!gate.satisfied) {
    if (!gate.timedOut) {
      d.rollouts?.waiting(key, 'expectations', 'waiting for the pod creations/deletions of the last pass to show in the cache');
      return { requeueAfterMs: gate.remainingMs };
    }
    // Kruise stays blocked here until an event arrives (kruise#1765); we re-plan from the cache instead.
    d.logger.warn({ cloneset: key, pendingForMs: gate.pendingForMs }, 'scale expectations timed out; re-planning from the cache');
    d.scaleExpectations.forget(key);
  }
  const nowMs = d.clock.now();
  const snapshot = loadSnapshot(d.stores, cloneSet, nowMs);
  const listed = revisionsOf(d.stores, cloneSet);
  // The cache still shows an object older than our own last write to it (the CloneSet's status, a revision, a
  // pod): wait for the watch to catch up (the object's update event requeues us) instead of planning, and
  // PUTting, on the older copy. Unlike Kruise, a timed-out expectation never blocks for good.
  const stale = staleCache(d, key, [[cloneSet], listed, snapshot.pods, snapshot.pvcs, snapshot.retainedPvcs ?? []]);
  if (stale !== undefined) return { requeueAfterMs: stale };

  // ---- plan
  const revisionPlan = planRevisions(cloneSet, listed, d.revisionDerivations);
  const revisions = revisionPlan.revisions;
  // docs/features.md#reconcile-pass (Kruise pkg/controller/cloneset/cloneset_controller.go): image pre-download, after the expectation checks and before scale/update.
  const preDownload = d.preDownload === true ? planPreDownload(cloneSet, revisions, d.config.gates) : [];
  const plan = planCloneSet(snapshot, revisions, d.config, d.ids);
  for (const line of plan.explain) d.logger.debug({ cloneset: key, phase: plan.phase }, line);
  for (const e of plan.events) d.recorder.event(cloneSet, e.type, e.reason, e.message);

  // ---- execute: the revision the plan rests on, the pre-download, the pass's writes, then status and housekeeping
  const deps: ExecuteDeps = {
    ports: d.ports,
    scaleExpectations: d.scaleExpectations,
    rvExpectations: d.rvExpectations,
    recorder: d.recorder,
    nowMs: () => d.clock.now(),
    sleep: (ms) => sleep(d.clock, ms, d.signal ?? new AbortController().signal),
    signal: d.signal,
    logger: d.logger,
    cleanedPreDownloads: d.cleanedPreDownloads,
  };
  const first = await executePlan(cloneSet, key, plan.phase, [...revisionPlan.actions, ...preDownload], deps);
  if (stopped(d.signal)) return {};
  if (first.ended === true) return { requeueAfterMs: first.requeueAfterMs ?? 0 };
  // The pass was planned with this revision: without it nothing else is written.
  if (first.failure !== undefined) throw first.failure.error;
  // A long scale-up: the readiness writes of its pods go on beside it (readiness-beside-scale-up.ts).
  const beside = wantsReadinessBeside(plan.actions)
    ? startReadinessBeside(cloneSet, {
        clock: d.clock,
        rvExpectations: d.rvExpectations,
        logger: d.logger,
        pods: () => d.stores.pods.byIndex(INDEX_OWNER_UID, cloneSet.metadata.uid ?? ''),
        plan: (pods) => planReadinessBesideScaleUp({ ...snapshot, pods, nowMs: d.clock.now() }, revisions, d.config),
        execute: (actions) => executePlan(cloneSet, key, plan.phase, actions, deps),
      })
    : undefined;
  let outcome: Outcome;
  try {
    outcome = await executePlan(cloneSet, key, plan.phase, plan.actions, deps);
  } finally {
    // Never left running past its pass, even if the executor threw.
    await beside?.stop();
  }
  // Stopping (SIGTERM) or fenced (lease lost): no status or history writes; the next leader recomputes them.
  if (stopped(d.signal)) return {};
  const end = planPassEnd({
    cloneSet,
    claimed: plan.claimed,
    revisions,
    listed,
    nowMs,
    ...(outcome.failure === undefined ? {} : { failure: { type: outcome.failure.type, message: errorText(outcome.failure.error) } }),
    ...(plan.conditions !== undefined ? { extensionConditions: plan.conditions } : {}),
  });
  // The status the pass writes (or the stored one when it does not change): the blockers read its conditions.
  const status = end.actions.find((a) => a.kind === 'UpdateStatus')?.status ?? cloneSet.status;
  d.rollouts?.observe(key, {
    cloneSet,
    pods: plan.claimed,
    updateRevision: revisions.update.name,
    updateRevisionCreatedMs: timestampMs(listed.find((r) => r.metadata.name === revisions.update.name)?.metadata.creationTimestamp),
    blockers: rolloutBlockers({
      cloneSet: status === undefined ? cloneSet : { ...cloneSet, status },
      pods: plan.claimed,
      currentRevision: revisions.current.name,
      updateRevision: revisions.update.name,
      phase: plan.phase,
      actions: plan.actions,
      config: d.config,
      nowMs,
      ...(plan.replicaDiff !== undefined ? { replicaDiff: plan.replicaDiff } : {}),
    }),
  });
  const after = await executePlan(cloneSet, key, plan.phase, end.actions, deps);
  if (outcome.failure !== undefined) throw outcome.failure.error;
  if (after.failure !== undefined) throw after.failure.error;
  const requeue = minDelay(end.requeueAfterMs, plan.requeueAfterMs, first.requeueAfterMs, outcome.requeueAfterMs, after.requeueAfterMs);
  return requeue === undefined ? {} : { requeueAfterMs: requeue };
}

/**
 * How long to wait for the cache to show our last write to one of the objects of `lists`, or undefined when it does. Every
 * object is checked, not only up to the first stale one, so every expectation that has timed out is given up in
 * the same pass (after an etcd restore several of ours can be older than our last writes: simulation seed 3564).
 * The timeouts themselves count from the writes (runtime/expectations.ts). Kruise stops at the first stale object
 * (cloneset_controller.go), and on a timeout returns without a requeue.
 */
function staleCache(d: ReconcileDeps, key: string, lists: readonly (readonly KubeObject[])[]): number | undefined {
  let wait: number | undefined;
  // By list, not one concatenated copy of every pod per pass.
  for (const objects of lists) {
    for (const obj of objects) {
      const uid = obj.metadata?.uid ?? '';
      if (uid === '') continue;
      const check = d.rvExpectations.isSatisfied(uid, obj.metadata?.resourceVersion ?? '');
      if (check.satisfied) continue;
      if (!check.timedOut) {
        wait = Math.min(wait ?? STALE_CACHE_RECHECK_MS, check.remainingMs);
        continue;
      }
      d.logger.warn({ cloneset: key, object: obj.metadata?.name, pendingForMs: check.pendingForMs }, 'the cache never showed our write; re-planning from the cache');
      d.rvExpectations.forget(uid);
    }
  }
  return wait;
}
