// The batch period of pod events: how long a pod event lets its CloneSet wait before the pass it asks for.
//
// Every pass reads all the CloneSet's pods (claim, replica diff, refresh, status), so a pass costs time in
// proportion to its pods, and a scale-out or rollout of N pods brings several pod events per pod (created,
// scheduled, Running, our readiness write, Ready). Woken at once by each, a large CloneSet is reconciled
// back to back: the passes grow with N and each costs N, so the CPU grows with N². Waiting a little after the
// first event lets the events that follow land in the same pass (the work queue holds a key once, and a key
// already waiting keeps its earlier time), so the passes per second are bounded and the CPU grows with N.
// Kubernetes does the same: the Job controller syncs a Job at most once per second on pod events
// (syncJobBatchPeriod), the EndpointSlice controller after --endpointslice-updates-batch-period.
//
// The period grows with the CloneSet, as the cost of its pass does: nothing below BATCH_FROM_REPLICAS replicas
// (small CloneSets react at once, as Kruise's do), then BATCH_US_PER_REPLICA per replica, at most
// MAX_BATCH_MS. Pod events wait, and so does a change of the CloneSet's status only (the echo of a pass's own
// status write, event-handlers.ts changesOnlyStatus): while pods turn Ready every pass writes the status, and its
// echo woke the next pass at once. Any other change of the CloneSet (spec, labels, annotations, deletion) and
// requeues are not batched.
import type { CloneSet } from '../api/cloneset.ts';

/** CloneSets smaller than this are woken at once. */
export const BATCH_FROM_REPLICAS = 100;
/**
 * Microseconds of batch period per replica: 50 ms at 1 000 replicas, 500 ms at 10 000, the 1 s cap from 20 000. A pass
 * costs ~10–14 µs per pod (docs/performance.md, "While the pods turn Ready"), so while pod events keep coming (kwok or the
 * kubelets making thousands of pods Ready) a CloneSet's passes take about a fifth of a core, at any size; with 20 µs
 * they took 40 %, and the CPU of that phase is its length times that share.
 */
export const BATCH_US_PER_REPLICA = 50;
/** The longest a pod event waits (the Job controller's period). */
export const MAX_BATCH_MS = 1000;

/** The rule's three numbers. The controller always uses DEFAULT_POD_EVENT_BATCH (no flag sets them); the simulation draws its own per seed so that its small CloneSets are batched too. */
export interface PodEventBatch {
  readonly fromReplicas: number;
  readonly usPerReplica: number;
  readonly maxMs: number;
}

export const DEFAULT_POD_EVENT_BATCH: PodEventBatch = { fromReplicas: BATCH_FROM_REPLICAS, usPerReplica: BATCH_US_PER_REPLICA, maxMs: MAX_BATCH_MS };

/** The batch period, in ms, for a pod event of `cloneSet` (0: wake it now); the larger of desired and current replicas counts. */
export function podEventBatchMs(cloneSet: CloneSet | undefined, batch: PodEventBatch = DEFAULT_POD_EVENT_BATCH): number {
  if (cloneSet === undefined) return 0;
  const replicas = Math.max(cloneSet.spec.replicas ?? 1, cloneSet.status?.replicas ?? 0);
  if (replicas < batch.fromReplicas) return 0;
  return Math.min(batch.maxMs, Math.round((replicas * batch.usPerReplica) / 1000));
}
