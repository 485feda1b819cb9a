// The writes of a reconcile pass around planCloneSet (plan/index.ts), decided purely so that the executor is the
// only writer: the revision to create or renumber before the pass (docs/features.md#revisions), the image
// pre-download (docs/features.md#image-pre-download), and after it the status, the podsToDelete truncation and
// the history truncation (docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go).
import type { CloneSet, CloneSetCondition, CloneSetStatus } from '../../api/cloneset.ts';
import type { FeatureGates } from '../../api/well-known.ts';
import type { ControllerRevision, Pod } from '../../kube/types.ts';
import { LABEL_PREDOWNLOAD_CREATED, LABEL_PREDOWNLOAD_IGNORED, planImagePreDownload } from '../inplace/predownload.ts';
import { controllerRefOf } from '../../kube/owner-refs.ts';
import type { PlanAction, RevisionRef } from './actions.ts';
import { revisionsToTruncate } from './history.ts';
import { truncatedPodsToDelete } from './pods-to-delete.ts';
import type { ResolvedRevisions } from './resolved-revisions.ts';
import { chooseRevisions, templateFromRevision, type RevisionDerivations } from './revisions.ts';
import type { RevisionTemplate } from './scale.ts';
import { computeStatus, isStatusChanged } from './status.ts';

export interface RevisionPlan {
  /** The revisions the pass plans with: a revision still to be created or renumbered is planned as written. */
  readonly revisions: ResolvedRevisions;
  /** At most one revision write; it runs before every other write of the pass, and its failure ends the pass. */
  readonly actions: readonly PlanAction[];
}

/**
 * The current and update revision for the CloneSet's template (chooseRevisions), and the write that makes them
 * exist: nothing when the newest listed revision already holds the template, a PUT renumbering an older equal
 * revision (a rollback), or a POST of a new one. `derive` may remember the hashes per object (the controller's
 * revision-memo.ts); the choice is the same either way.
 */
export function planRevisions(cloneSet: CloneSet, listed: readonly ControllerRevision[], derive?: RevisionDerivations): RevisionPlan {
  const choice = chooseRevisions(cloneSet, listed, {}, derive);
  switch (choice.kind) {
    case 'use':
      return { revisions: resolved(choice.current, choice.update, choice.collisionCount, listed), actions: [] };
    case 'bumpExisting': {
      const update = choice.updated;
      const current = choice.current === undefined || choice.current.metadata.name === update.metadata.name ? update : choice.current;
      return {
        revisions: resolved(current, update, choice.collisionCount, withRevision(listed, update)),
        actions: [{ kind: 'UpdateRevision', revision: update }],
      };
    }
    case 'create': {
      const update = choice.candidate;
      return {
        revisions: resolved(choice.current ?? update, update, choice.collisionCount, withRevision(listed, update)),
        actions: [{ kind: 'CreateRevision', revision: update, collisionStatus: withCollisionCount(cloneSet.status, choice.collisionCount + 1) }],
      };
    }
  }
}

/** The status a hash collision writes: the same status with the next collision count (the next name to try). */
function withCollisionCount(status: CloneSetStatus | undefined, collisionCount: number): CloneSetStatus {
  const base: CloneSetStatus = status ?? { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 };
  return { ...base, collisionCount };
}

function resolved(current: ControllerRevision, update: ControllerRevision, collisionCount: number, history: readonly ControllerRevision[]): ResolvedRevisions {
  return { current: templateOf(current), update: templateOf(update), collisionCount, history };
}

/** The listed revisions with `rev` added or replacing the listed one of the same name. */
function withRevision(revisions: readonly ControllerRevision[], rev: ControllerRevision): ControllerRevision[] {
  return [...revisions.filter((r) => r.metadata.name !== rev.metadata.name), rev];
}

function templateOf(rev: ControllerRevision): RevisionTemplate {
  const template = templateFromRevision(rev);
  const name = rev.metadata.name ?? '';
  if (template === undefined) throw new Error(`ControllerRevision ${name} does not hold a pod template in data.spec.template`);
  return { name, template };
}

/**
 * The image pre-download writes for this pass (gate PreDownloadImageForInPlaceUpdate, ImagePullJob served):
 * create the jobs and label the update revision, label it ignored, or — revisions equal again — delete the
 * CloneSet's jobs. All of them are best effort: an optimisation never fails a reconcile.
 */
export function planPreDownload(cloneSet: CloneSet, revisions: ResolvedRevisions, gates: FeatureGates): readonly PlanAction[] {
  const find = (name: string): ControllerRevision | undefined => revisions.history?.find((r) => r.metadata.name === name);
  const current = find(revisions.current.name);
  const update = find(revisions.update.name);
  if (current === undefined || update === undefined) return [];
  const revision = update.metadata.name ?? '';
  const plan = planImagePreDownload(cloneSet, current, update, gates);
  switch (plan.kind) {
    case 'none':
      return [];
    case 'cleanup':
      return update.metadata.labels?.[LABEL_PREDOWNLOAD_CREATED] === undefined ? [] : [{ kind: 'DeleteImagePullJobs', revision }];
    case 'ignore':
      return [{ kind: 'LabelRevision', revision, label: LABEL_PREDOWNLOAD_IGNORED }];
    case 'create':
      return [...plan.jobs.map((job): PlanAction => ({ kind: 'CreateImagePullJob', job })), { kind: 'LabelRevision', revision, label: LABEL_PREDOWNLOAD_CREATED }];
  }
}

export interface PassEndInput {
  readonly cloneSet: CloneSet;
  /** The claimed active pods the pass planned for. */
  readonly claimed: readonly Pod[];
  readonly revisions: ResolvedRevisions;
  /** The revisions listed from the cache (history truncation chooses among them only). */
  readonly listed: readonly ControllerRevision[];
  readonly nowMs: number;
  /** The pass's failed write, if any: the status carries it as a FailedScale/FailedUpdate condition. */
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly message: string };
  /** Conditions of our opt-in extensions (docs/features.md#beyond-kruise), set by type. */
  readonly extensionConditions?: readonly CloneSetCondition[];
}

export interface PassEndPlan {
  readonly actions: readonly PlanAction[];
  /** When the status must be looked at again (minReadySeconds, progress deadline). */
  readonly requeueAfterMs?: number;
}

/** The writes after the pass's own: the status when it changed, then the housekeeping truncations. */
export function planPassEnd(input: PassEndInput): PassEndPlan {
  const { cloneSet, claimed, revisions } = input;
  const { status, requeueAfterMs } = computeStatus({
    cloneSet,
    pods: claimed,
    updateRevision: revisions.update.name,
    currentRevision: revisions.current.name,
    collisionCount: revisions.collisionCount,
    nowMs: input.nowMs,
    ...(input.failure !== undefined ? { failure: input.failure } : {}),
    ...(input.extensionConditions !== undefined ? { extensionConditions: input.extensionConditions } : {}),
  });
  const actions: PlanAction[] = [];
  if (isStatusChanged(cloneSet.status, status)) actions.push({ kind: 'UpdateStatus', status });
  const kept = truncatedPodsToDelete(cloneSet, claimed);
  if (kept !== undefined) actions.push({ kind: 'TruncatePodsToDelete', expected: cloneSet.spec.scaleStrategy?.podsToDelete ?? [], kept });
  const live = { current: revisions.current.name, update: revisions.update.name };
  const old = revisionsToTruncate(cloneSet, input.listed, claimed, live);
  const uid = cloneSet.metadata.uid;
  const ref = (r: ControllerRevision): RevisionRef => ({ name: r.metadata.name ?? '', uid: r.metadata.uid ?? '', controlled: controllerRefOf(r)?.uid === uid });
  if (old.length > 0) actions.push({ kind: 'TruncateHistory', revisions: old.map(ref) });
  return { actions, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}
