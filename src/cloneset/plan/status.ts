// computeStatus: the CloneSet status from the claimed pods (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go), and when it is worth writing.
import { hasRollingUpdate } from '../../api/conversion.ts';
import type { CloneSet, CloneSetCondition, CloneSetConditionType, CloneSetStatus } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { selectorToString } from '../../kube/selectors.ts';
import { minDelay } from './actions.ts';
import { partitionAbs, partitionParses } from './int-or-percent.ts';
import { isPodAvailable, isPodReadyFor, podCondition, revisionMatches } from './pod-predicates.ts';
import { rfc3339 } from './pod-template.ts';
import { progressingCondition } from './progressing.ts';

export interface StatusInput {
  readonly cloneSet: CloneSet;
  readonly pods: readonly Pod[];
  readonly updateRevision: string;
  readonly currentRevision: string;
  readonly collisionCount: number;
  readonly nowMs: number;
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly message: string };
  /** Conditions of our opt-in extensions (docs/features.md#beyond-kruise), set by type. */
  readonly extensionConditions?: readonly CloneSetCondition[];
}

export interface StatusResult {
  readonly status: CloneSetStatus;
  /** When a pod will cross minReadySeconds, or the progress deadline will expire. */
  readonly requeueAfterMs?: number;
}

export function computeStatus(input: StatusInput): StatusResult {
  const { cloneSet, pods, nowMs } = input;
  const minReadySeconds = cloneSet.spec.minReadySeconds ?? 0;
  const specReplicas = cloneSet.spec.replicas ?? 1;
  let ready = 0,
    available = 0,
    updated = 0,
    updatedReady = 0,
    updatedAvailable = 0;
  let nextAvailableMs: number | undefined;
  for (const pod of pods) {
    const isReady = isPodReadyFor(pod, 0, nowMs);
    const isAvailable = isPodAvailable(pod, minReadySeconds, nowMs);
    const isUpdated = revisionMatches(pod, input.updateRevision);
    if (isReady) ready++;
    if (isAvailable) available++;
    if (isUpdated) updated++;
    if (isUpdated && isReady) updatedReady++;
    if (isUpdated && isAvailable) updatedAvailable++;
    if (isReady && !isAvailable && minReadySeconds > 0) {
      nextAvailableMs = minDelay(nextAvailableMs, availableInMs(pod, minReadySeconds, nowMs));
    }
  }
  const replicas = pods.length;
  const currentRevision = updated === replicas && replicas === specReplicas ? input.updateRevision : input.currentRevision;
  // docs/features.md#status-counters (Kruise pkg/controller/cloneset/cloneset_status.go): Kruise only sets the field when the partition parses; otherwise it stays 0 (was: replicas,
  // because partitionAbs reads an unparsable partition as 0).
  const partition = cloneSet.spec.updateStrategy?.partition;
  // Without a rollingUpdate block (OnDelete) every pod is expected on the update revision (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go).
  const expectedUpdatedReplicas = !hasRollingUpdate(cloneSet) ? specReplicas : partitionParses(partition) ? specReplicas - partitionAbs(partition, specReplicas) : 0;
  let conditions = [...(cloneSet.status?.conditions ?? [])];
  // Beyond Kruise (its Failed* conditions are never removed): FailedScale goes once a pass without a scale
  // failure sees every replica; FailedUpdate once a pass without an update failure sees the rollout complete.
  // A CloneSet that recovered from a refused create (quota, admission) no longer reports the old failure.
  if (input.failure?.type !== 'FailedScale' && replicas === specReplicas) conditions = conditions.filter((c) => c.type !== 'FailedScale');
  if (input.failure?.type !== 'FailedUpdate' && updated === replicas && replicas === specReplicas) conditions = conditions.filter((c) => c.type !== 'FailedUpdate');
  if (input.failure !== undefined) {
    conditions = setCondition(conditions, {
      type: input.failure.type,
      status: 'True',
      lastTransitionTime: rfc3339(nowMs),
      message: input.failure.message,
    });
  }
  for (const c of input.extensionConditions ?? []) conditions = setExtensionCondition(conditions, c);
  const counters = { replicas, updatedReplicas: updated, updatedAvailableReplicas: updatedAvailable, expectedUpdatedReplicas };
  const progressing = progressingCondition(cloneSet, conditions, { ...counters, currentRevision, updateRevision: input.updateRevision }, nowMs);
  conditions =
    progressing.condition === undefined
      ? conditions.filter((c) => c.type !== 'Progressing')
      : progressing.replace === true
        ? [...conditions.filter((c) => c.type !== 'Progressing'), progressing.condition]
        : setCondition(conditions, progressing.condition);
  const status: CloneSetStatus = {
    observedGeneration: cloneSet.metadata.generation ?? 0,
    replicas,
    readyReplicas: ready,
    availableReplicas: available,
    updatedReplicas: updated,
    updatedReadyReplicas: updatedReady,
    updatedAvailableReplicas: updatedAvailable,
    expectedUpdatedReplicas,
    updateRevision: input.updateRevision,
    currentRevision,
    collisionCount: input.collisionCount,
    labelSelector: selectorToString(cloneSet.spec.selector),
    ...(conditions.length > 0 ? { conditions } : {}),
  };
  const requeueAfterMs = minDelay(nextAvailableMs, progressing.requeueAfterMs);
  return { status, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

function availableInMs(pod: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  const since = podCondition(pod, 'Ready')?.lastTransitionTime;
  if (since === undefined || since === null) return undefined;
  // +1 ms: availability needs the ready time to be strictly before now - minReadySeconds.
  return Date.parse(since) + minReadySeconds * 1000 - nowMs + 1;
}

/**
 * Kubernetes' condition set rule as Kruise applies it (docs/features.md#progress-deadline-and-conditions; Kruise pkg/controller/cloneset/cloneset_status.go): same status and reason → unchanged;
 * same status, new reason → replaced but lastTransitionTime kept; otherwise replaced and moved last.
 */
export function setCondition(conditions: readonly CloneSetCondition[], next: CloneSetCondition): CloneSetCondition[] {
  const existing = conditions.find((c) => c.type === next.type);
  if (existing !== undefined && existing.status === next.status && existing.reason === next.reason) return [...conditions];
  const kept =
    existing !== undefined && existing.status === next.status && existing.lastTransitionTime !== undefined ? { ...next, lastTransitionTime: existing.lastTransitionTime } : next;
  return [...conditions.filter((c) => c.type !== next.type), kept];
}

/** An extension condition is replaced when its status, reason or message changes (it reports progress in the message). */
function setExtensionCondition(conditions: readonly CloneSetCondition[], next: CloneSetCondition): CloneSetCondition[] {
  const existing = conditions.find((c) => c.type === next.type);
  if (existing !== undefined && existing.status === next.status && existing.reason === next.reason && existing.message === next.message) return [...conditions];
  return setCondition(
    conditions.filter((c) => c !== existing),
    next,
  );
}

export function conditionOf(status: CloneSetStatus | undefined, type: CloneSetConditionType): CloneSetCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * The status write rule (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go): counters, revisions, selector, generation or the Progressing condition.
 * Beyond Kruise: a FailedScale / FailedUpdate condition that appears (or, once recovered, goes) is written too.
 * Kruise lets it ride along with the next write, so a create refused by the API server (quota, admission) in a
 * pass that changes no counter never showed its error in the status; this costs one write per transition.
 */
export function isStatusChanged(old: CloneSetStatus | undefined, next: CloneSetStatus): boolean {
  if (old === undefined) return true;
  const keys = [
    'replicas',
    'readyReplicas',
    'availableReplicas',
    'updatedReadyReplicas',
    'updatedReplicas',
    'updatedAvailableReplicas',
    'expectedUpdatedReplicas',
    'updateRevision',
    'currentRevision',
    'labelSelector',
  ] as const;
  if (keys.some((k) => (old[k] ?? 0) !== (next[k] ?? 0))) return true;
  if ((next.observedGeneration ?? 0) > (old.observedGeneration ?? 0)) return true;
  if ((['FailedScale', 'FailedUpdate'] as const).some((t) => (conditionOf(next, t) === undefined) !== (conditionOf(old, t) === undefined))) return true;
  const extension = (['ProgressDeadlineActionTaken', 'PVCResize'] as const).some((t) => {
    const x = conditionOf(old, t);
    const y = conditionOf(next, t);
    return x?.status !== y?.status || x?.reason !== y?.reason || x?.message !== y?.message;
  });
  if (extension) return true;
  const a = conditionOf(old, 'Progressing');
  const b = conditionOf(next, 'Progressing');
  return a?.status !== b?.status || a?.reason !== b?.reason;
}
