// The Progressing condition driven by progressDeadlineSeconds (docs/features.md#progress-deadline-and-conditions; Kruise pkg/controller/cloneset/cloneset_status.go, manual "Progress Deadline Seconds").
import type { CloneSet, CloneSetCondition, ProgressingReason } from '../../api/cloneset.ts';
import { progressDeadlineRecordOf } from '../../api/extensions.ts';
import { rfc3339 } from './pod-template.ts';

const NO_DEADLINE = 2147483647;

export interface ProgressCounters {
  readonly replicas: number;
  readonly updatedReplicas: number;
  readonly updatedAvailableReplicas: number;
  readonly expectedUpdatedReplicas: number;
  readonly currentRevision: string;
  readonly updateRevision: string;
}

export interface ProgressingResult {
  /** undefined: the CloneSet does not track progress, remove the condition. */
  readonly condition?: CloneSetCondition;
  readonly requeueAfterMs?: number;
  /**
   * Write the condition as is, timestamps included, instead of through the set rule (which would keep an
   * existing condition of the same status and reason): a new update revision starts a new deadline.
   */
  readonly replace?: boolean;
}

/**
 * The first matching case wins: available, paused, partition available, deadline exceeded (sticky until
 * one of the first three), otherwise progressing. The deadline runs from the moment the condition entered
 * CloneSetUpdated: the set rule keeps an existing CloneSetUpdated condition untouched, so progress in
 * between does not extend it, and a pause (reason CloneSetPaused) restarts it on resume.
 */
export function progressingCondition(cloneSet: CloneSet, carried: readonly CloneSetCondition[], c: ProgressCounters, nowMs: number): ProgressingResult {
  const deadline = cloneSet.spec.progressDeadlineSeconds;
  if (deadline === undefined || deadline === NO_DEADLINE) return {};
  const specReplicas = cloneSet.spec.replicas ?? 1;
  const make = (status: 'True' | 'False', reason: ProgressingReason, message: string): CloneSetCondition => ({
    type: 'Progressing',
    status,
    reason,
    message,
    lastUpdateTime: rfc3339(nowMs),
    lastTransitionTime: rfc3339(nowMs),
  });
  if (c.currentRevision === c.updateRevision && c.replicas === specReplicas && c.updatedReplicas === specReplicas && c.updatedAvailableReplicas === specReplicas) {
    return { condition: make('True', 'CloneSetAvailable', 'CloneSet is available') };
  }
  if (cloneSet.spec.updateStrategy?.paused === true) {
    return { condition: make('True', 'CloneSetPaused', 'CloneSet is paused') };
  }
  if (c.expectedUpdatedReplicas < specReplicas && c.expectedUpdatedReplicas <= c.updatedAvailableReplicas) {
    return { condition: make('True', 'ProgressPartitionAvailable', 'CloneSet has been paused due to partition ready') };
  }
  // A new update revision (a new template, an undo) is a new rollout: like Kruise HEAD (syncProgressingStatus in
  // pkg/controller/cloneset/cloneset_status.go) the pass that first sees it writes a fresh CloneSetUpdated, so
  // neither a timeout nor the clock of the revision before carries over to it. Kruise checks this before the
  // other cases; here a CloneSet that is already available, paused or partition-available says so at once.
  const observedRevision = cloneSet.status?.updateRevision;
  if (observedRevision !== undefined && observedRevision !== '' && observedRevision !== c.updateRevision) {
    const condition = make('True', 'CloneSetUpdated', `CloneSet is progressing due to revision changed from ${observedRevision} to ${c.updateRevision}`);
    return { condition, replace: true, ...deadlineRequeue(nowMs, deadline, nowMs) };
  }
  const previous = carried.find((x) => x.type === 'Progressing');
  if (previous !== undefined) {
    const since = Date.parse(previous.lastUpdateTime ?? previous.lastTransitionTime ?? '');
    const expiresAtMs = since + deadline * 1000;
    // Only a CloneSetUpdated condition's time starts the clock (docs/features.md#progress-deadline-and-conditions; Kruise pkg/controller/cloneset/cloneset_status.go: the deadline runs from the entry into
    // CloneSetUpdated; a pause or an Available period restarts it). Timing any previous reason made a rollout
    // that starts long after the CloneSet became Available, or a resume after a long pause, time out at once.
    // A negative deadline still times out as soon as any Progressing condition exists (docs/features.md#progress-deadline-and-conditions; Kruise pkg/controller/cloneset/cloneset_status.go).
    const timed = previous.reason === 'CloneSetUpdated' || deadline < 0;
    const exceeded = previous.reason === 'ProgressDeadlineExceeded' && !rolledBackSince(cloneSet, c.updateRevision, since);
    if (exceeded || (timed && Number.isFinite(since) && expiresAtMs < nowMs)) {
      return {
        condition: make('False', 'ProgressDeadlineExceeded', `CloneSet revision ${c.updateRevision} has timed out progressing`),
      };
    }
  }
  const condition = make('True', 'CloneSetUpdated', 'CloneSet is progressing');
  const startedMs = previous?.reason === 'CloneSetUpdated' ? Date.parse(previous.lastUpdateTime ?? '') : nowMs;
  return { condition, ...deadlineRequeue(Number.isFinite(startedMs) ? startedMs : nowMs, deadline, nowMs) };
}

/**
 * Requeue at the deadline, plus a second when at least one is left (Kruise getRequeueSecondsFromCondition). Under a
 * second the pass comes 1 ms after the deadline: the deadline is exceeded only strictly after it (as Kruise's
 * `Before(now)`), so a pass landing on the deadline's very millisecond would neither time out nor requeue again.
 */
function deadlineRequeue(startedMs: number, deadlineSeconds: number, nowMs: number): { readonly requeueAfterMs?: number } {
  const remaining = startedMs + deadlineSeconds * 1000 - nowMs;
  if (remaining >= 1000) return { requeueAfterMs: remaining + 1000 };
  return remaining >= 0 ? { requeueAfterMs: remaining + 1 } : {};
}

/**
 * Only with `cloneset-controller.io/progress-deadline-action: rollback` (docs/features.md#progress-deadline-action):
 * a rollback to the update revision taken at or after the deadline was missed starts a new rollout with its own
 * deadline, instead of keeping the sticky ProgressDeadlineExceeded of the revision it abandoned.
 */
function rolledBackSince(cloneSet: CloneSet, updateRevision: string, exceededSinceMs: number): boolean {
  const record = progressDeadlineRecordOf(cloneSet);
  if (record?.action !== 'rollback' || record.to !== updateRevision) return false;
  const at = Date.parse(record.at);
  return Number.isFinite(at) && Number.isFinite(exceededSinceMs) && at >= exceededSinceMs;
}
