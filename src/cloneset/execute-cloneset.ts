// The writes of executePlan to the CloneSet itself and to what it owns besides pods and PVCs: ControllerRevisions
// (create, renumber, history truncation), the status, the podsToDelete truncation and the ImagePullJobs of the
// image pre-download. Creates and deletes of revisions run under name expectations (observed by the revision
// informer, event-handlers.ts); every successful PATCH/PUT sets the object's resourceVersion expectation, so the
// next pass waits for the cache instead of planning (and PUTting) on the older object.
import type { CloneSet } from '../api/cloneset.ts';
import { errorText, isAlreadyExists, isConflict, isNotFound, isOutcomeUnknown } from '../kube/api-error.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import type { PlanAction } from './plan/actions.ts';
import { encodeControllerRevision, revisionDataBytes } from './plan/revisions.ts';
import type { ExecuteDeps } from './execute-deps.ts';
import { deleteSettlingLostAnswers, resendingLostAnswers } from './execute-scale.ts';

type ActionOf<K extends PlanAction['kind']> = Extract<PlanAction, { kind: K }>;

/**
 * Thrown by a write whose answer makes the rest of the plan wrong (a revision hash collision, a revision PUT on a
 * stale object): the executor stops the pass without a failure and requeues the CloneSet shortly.
 */
export class PassEnded extends Error {
  override readonly name = 'PassEnded';
}

function expectRv(deps: ExecuteDeps, uid: string | undefined, rv: string | undefined): void {
  if (uid !== undefined && uid !== '' && rv !== undefined) deps.rvExpectations.expect(uid, rv);
}

export async function createRevision(cs: CloneSet, key: string, action: ActionOf<'CreateRevision'>, deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  const name = action.revision.metadata.name ?? '';
  deps.scaleExpectations.expect(key, 'create', name, 'revision');
  try {
    await resendingLostAnswers(deps, `POST controllerrevisions ${name}`, () => deps.ports.revisions.createRevision(ns, name, encodeControllerRevision(action.revision)));
    return 1;
  } catch (e) {
    if (!isAlreadyExists(e)) {
      if (!isOutcomeUnknown(e)) deps.scaleExpectations.observe(key, 'create', name, 'revision');
      throw e;
    }
  }
  const existing = await deps.ports.revisions.getRevision(ns, name);
  // Same bytes: our own earlier create (a lost answer, or a cache that has not shown it yet): its ADDED event
  // observes the expectation. Different bytes: a hash collision — the next name comes from the next count.
  if (revisionDataBytes(existing) === revisionDataBytes(action.revision)) return 0;
  deps.scaleExpectations.observe(key, 'create', name, 'revision');
  deps.recorder.event(
    cs,
    'Warning',
    'RevisionCollision',
    `ControllerRevision ${name} exists with other data; collisionCount becomes ${action.collisionStatus.collisionCount ?? 0}`,
  );
  const written = await deps.ports.cloneSets.updateStatus(cs, action.collisionStatus);
  expectRv(deps, cs.metadata.uid, written.metadata.resourceVersion);
  throw new PassEnded(`revision hash collision on ${name}`);
}

export async function updateRevision(cs: CloneSet, action: ActionOf<'UpdateRevision'>, deps: ExecuteDeps): Promise<number> {
  const name = action.revision.metadata.name ?? '';
  try {
    const written = await deps.ports.revisions.updateRevision(cs.metadata.namespace ?? '', name, encodeControllerRevision(action.revision));
    expectRv(deps, written.metadata.uid ?? action.revision.metadata.uid, written.metadata.resourceVersion);
    return 1;
  } catch (e) {
    // The cached revision is older than the stored one: the pass was planned on it, so it ends here.
    if (isConflict(e)) throw new PassEnded(`ControllerRevision ${name} changed meanwhile`);
    throw e;
  }
}

export async function updateStatus(cs: CloneSet, action: ActionOf<'UpdateStatus'>, deps: ExecuteDeps): Promise<number> {
  try {
    const written = await deps.ports.cloneSets.updateStatus(cs, action.status);
    expectRv(deps, cs.metadata.uid, written.metadata.resourceVersion);
    return 1;
  } catch (e) {
    // Our cached CloneSet is older than the stored one; the write policy requeues the CloneSet shortly.
    if (isConflict(e)) return 0;
    throw e;
  }
}

export async function truncatePodsToDelete(cs: CloneSet, action: ActionOf<'TruncatePodsToDelete'>, deps: ExecuteDeps): Promise<number> {
  // JSON patch with a test: if the user changed the list meanwhile, the patch fails (422) and nothing is lost.
  const path = '/spec/scaleStrategy/podsToDelete';
  const written = await deps.ports.cloneSets.patchCloneSet(
    cs.metadata.namespace ?? '',
    cs.metadata.name ?? '',
    [
      { op: 'test', path, value: action.expected },
      { op: 'replace', path, value: action.kept },
    ],
    'json',
  );
  // The status PUT that follows in a later pass must carry this resourceVersion, not the cached older one.
  expectRv(deps, cs.metadata.uid, written.metadata.resourceVersion);
  return 1;
}

export async function truncateHistory(cs: CloneSet, key: string, action: ActionOf<'TruncateHistory'>, deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  let writes = 0;
  for (const rev of action.revisions) {
    // Only a revision we control has its deletion observed for this CloneSet (event-handlers.ts); a deleted orphan
    // that the cache still lists is simply deleted again (404) by a later pass.
    if (rev.controlled) deps.scaleExpectations.expect(key, 'delete', rev.name, 'revision');
    try {
      const result = await deleteSettlingLostAnswers(deps, `DELETE controllerrevisions ${rev.name}`, () => deps.ports.revisions.deleteRevision(ns, rev.name, rev.uid));
      if (result === 'deleted') writes++;
      else deps.scaleExpectations.observe(key, 'delete', rev.name, 'revision');
    } catch (e) {
      if (!isOutcomeUnknown(e)) deps.scaleExpectations.observe(key, 'delete', rev.name, 'revision');
      throw e;
    }
  }
  return writes;
}

export async function createImagePullJob(cs: CloneSet, action: ActionOf<'CreateImagePullJob'>, deps: ExecuteDeps): Promise<number> {
  const jobs = deps.ports.imagePullJobs;
  if (jobs === undefined) return 0;
  const name = action.job.metadata.name ?? '';
  try {
    await jobs.createImagePullJob(cs.metadata.namespace ?? '', action.job);
  } catch (e) {
    if (isAlreadyExists(e)) return 0;
    deps.recorder.event(cs, 'Normal', 'FailedCreateImagePullJob', `failed to create ImagePullJob ${name}: ${errorText(e)}`);
    throw e;
  }
  deps.recorder.event(cs, 'Normal', 'CreatedImagePullJob', `created ImagePullJob ${name} for image: ${action.job.spec.image}`);
  return 1;
}

export async function labelRevision(cs: CloneSet, action: ActionOf<'LabelRevision'>, deps: ExecuteDeps): Promise<number> {
  const written = await deps.ports.revisions.patchRevision(cs.metadata.namespace ?? '', action.revision, { metadata: { labels: { [action.label]: 'true' } } });
  expectRv(deps, written.metadata.uid, written.metadata.resourceVersion);
  return 1;
}

export async function deleteImagePullJobs(cs: CloneSet, action: ActionOf<'DeleteImagePullJobs'>, deps: ExecuteDeps): Promise<number> {
  const jobs = deps.ports.imagePullJobs;
  if (jobs === undefined) return 0;
  const memo = `${cs.metadata.uid ?? ''}/${action.revision}`;
  if (deps.cleanedPreDownloads?.has(memo) === true) return 0;
  const ns = cs.metadata.namespace ?? '';
  let writes = 0;
  for (const job of await jobs.listImagePullJobs(ns)) {
    if (controllerRefOf(job)?.uid !== cs.metadata.uid) continue;
    try {
      await jobs.deleteImagePullJob(ns, job.metadata.name ?? '');
      writes++;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  deps.cleanedPreDownloads?.add(memo);
  return writes;
}
