// What to do when a rollout misses its progress deadline (docs/features.md#progress-deadline-action; Argo Rollouts'
// progressDeadlineAbort, kubernetes#23211). Kruise only sets Progressing=False/ProgressDeadlineExceeded. Opt-in with
// `cloneset-controller.io/progress-deadline-action`:
// - `pause`: set the update strategy's `paused`;
// - `rollback`: put the template of the current revision back (what `kubectl cloneset rollout undo` does), with
//   a change-cause on that revision. A rollback that itself misses the deadline pauses instead: never a loop.
// The action taken is written, in the same guarded patch, to the annotation
// `cloneset-controller.io/progress-deadline-last-action`, so the decision survives a restart and is never taken twice;
// the condition ProgressDeadlineActionTaken and progressing.ts (a rollback restarts the deadline) read it back.
import { hasRollingUpdate } from '../../api/conversion.ts';
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import { ANNOTATION_PROGRESS_DEADLINE_RECORD, progressDeadlineActionOf, progressDeadlineRecordOf, type ProgressDeadlineRecord } from '../../api/extensions.ts';
import { escapePointerToken } from '../../api/json-diff.ts';
import type { PodTemplateSpec } from '../../kube/types.ts';
import type { PlanAction, PlannedEvent } from './actions.ts';
import { rfc3339 } from './pod-template.ts';
import type { ResolvedRevisions } from './resolved-revisions.ts';

export const ANNOTATION_CHANGE_CAUSE = 'kubernetes.io/change-cause';

export interface ProgressDeadlineActionResult {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  /** ProgressDeadlineActionTaken, derived from the record on every pass. */
  readonly condition?: CloneSetCondition;
  readonly explain: readonly string[];
}

const NONE: ProgressDeadlineActionResult = { actions: [], events: [], explain: [] };

/** Has the status been computed for this spec and update revision, and does it say the deadline was missed? */
function missedDeadline(cs: CloneSet, updateRevision: string): boolean {
  const st = cs.status;
  if (st === undefined || (st.observedGeneration ?? 0) !== (cs.metadata.generation ?? 0) || st.updateRevision !== updateRevision) return false;
  return (st.conditions ?? []).some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded');
}

export function changeCauseOf(record: ProgressDeadlineRecord): string {
  return `rolled back from ${record.from}: it missed its progress deadline (cloneset-controller.io/progress-deadline-action=rollback)`;
}

function conditionOf(record: ProgressDeadlineRecord): CloneSetCondition {
  const message =
    record.action === 'rollback'
      ? `revision ${record.from} missed its progress deadline: rolled back to ${record.to ?? ''}`
      : `revision ${record.from} missed its progress deadline: paused (kubectl cloneset rollout resume to go on)`;
  return {
    type: 'ProgressDeadlineActionTaken',
    status: 'True',
    reason: record.action === 'rollback' ? 'RolledBack' : 'Paused',
    message,
    lastTransitionTime: record.at,
    lastUpdateTime: record.at,
  };
}

/** A JSON copy without Go's `creationTimestamp: null` (a stored revision's typed round-trip adds it). */
function plainTemplate(t: PodTemplateSpec): PodTemplateSpec {
  const copy = JSON.parse(JSON.stringify(t)) as PodTemplateSpec & { metadata?: { creationTimestamp?: unknown } };
  if (copy.metadata !== undefined && copy.metadata.creationTimestamp === null) delete copy.metadata.creationTimestamp;
  return copy;
}

export function planProgressDeadlineAction(cs: CloneSet, revisions: ResolvedRevisions, nowMs: number): ProgressDeadlineActionResult {
  const configured = progressDeadlineActionOf(cs);
  const record = progressDeadlineRecordOf(cs);
  const condition = record !== undefined ? conditionOf(record) : undefined;
  const base = { ...NONE, ...(condition !== undefined ? { condition } : {}) };
  const revisionActions = record !== undefined ? changeCauseActions(record, revisions) : [];
  const withBase = (r: Partial<ProgressDeadlineActionResult>): ProgressDeadlineActionResult => ({
    ...base,
    ...r,
    actions: [...revisionActions, ...(r.actions ?? [])],
  });
  if (configured === undefined || cs.metadata.deletionTimestamp !== undefined) return withBase({});
  const update = revisions.update.name;
  if (cs.spec.updateStrategy?.paused === true || !missedDeadline(cs, update)) return withBase({});
  if (!hasRollingUpdate(cs)) return withBase({ explain: ['progress deadline missed, but an OnDelete CloneSet has no rollout to pause or roll back'] });
  const rollingBackAlready = record?.action === 'rollback' && record.to === update;
  const nothingToRollBackTo = revisions.current.name === update;
  const decision = configured === 'rollback' && !rollingBackAlready && !nothingToRollBackTo ? 'rollback' : 'pause';
  const at = rfc3339(nowMs);
  const next: ProgressDeadlineRecord = decision === 'rollback' ? { action: 'rollback', from: update, to: revisions.current.name, at } : { action: 'pause', from: update, at };
  const why = decision === 'pause' && configured === 'rollback' ? (rollingBackAlready ? ' (the rollback itself missed the deadline)' : ' (no older revision to roll back to)') : '';
  const recordOp = { op: 'add', path: `/metadata/annotations/${escapePointerToken(ANNOTATION_PROGRESS_DEADLINE_RECORD)}`, value: JSON.stringify(next) };
  const guard = { op: 'test', path: '/metadata/resourceVersion', value: cs.metadata.resourceVersion ?? '' };
  const patch =
    decision === 'rollback'
      ? [
          guard,
          { op: 'replace', path: '/spec/template', value: plainTemplate(revisions.current.template) },
          recordOp,
          { op: 'add', path: `/metadata/annotations/${escapePointerToken(ANNOTATION_CHANGE_CAUSE)}`, value: changeCauseOf(next) },
        ]
      : [guard, { op: 'add', path: '/spec/updateStrategy/rollingUpdate/paused', value: true }, recordOp];
  const message =
    decision === 'rollback'
      ? `revision ${update} missed its progress deadline (${cs.spec.progressDeadlineSeconds ?? 0}s): rolling back to revision ${revisions.current.name}`
      : `revision ${update} missed its progress deadline (${cs.spec.progressDeadlineSeconds ?? 0}s): pausing the rollout${why}`;
  return withBase({
    actions: [{ kind: 'PatchCloneSetForProgressDeadline', decision, patch, message }],
    explain: [message],
  });
}

/**
 * After a rollback, the revision rolled back to carries the change-cause (kubectl's `rollout history` column),
 * written by a later pass when missing — so it lands even if the controller stopped right after the rollback.
 */
function changeCauseActions(record: ProgressDeadlineRecord, revisions: ResolvedRevisions): PlanAction[] {
  if (record.action !== 'rollback' || record.to === undefined) return [];
  const rev = (revisions.history ?? []).find((r) => r.metadata.name === record.to);
  const cause = changeCauseOf(record);
  if (rev === undefined || rev.metadata.annotations?.[ANNOTATION_CHANGE_CAUSE] === cause) return [];
  return [{ kind: 'AnnotateRevision', revision: record.to, annotations: { [ANNOTATION_CHANGE_CAUSE]: cause } }];
}
