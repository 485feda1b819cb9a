// The writes of our opt-in extensions (docs/features.md#beyond-kruise), performed for executePlan (execute.ts)
// under the same rules as the rest of the executor: a scale expectation before every pod delete, uid
// preconditions, guarded patches whose refusal means "the cache was stale, re-plan".
import type { CloneSet } from '../api/cloneset.ts';
import { errorText, isConflict, isInvalid, isNotFound } from '../kube/api-error.ts';
import type { ExecuteDeps } from './execute-deps.ts';
import type { ExtensionAction } from './plan/actions.ts';

export async function executeExtension(cs: CloneSet, key: string, action: ExtensionAction, deps: ExecuteDeps): Promise<number> {
  switch (action.kind) {
    case 'DeleteInactivePod':
      return deleteInactivePod(cs, key, action, deps);
    case 'PatchCloneSetForProgressDeadline':
      return patchForProgressDeadline(cs, action, deps);
    case 'AnnotateRevision':
      return annotateRevision(cs, action, deps);
  }
}

/**
 * Deletes exactly the inactive pod the plan saw (uid precondition), under a scale expectation so the next pass
 * waits for the cache to see it go. Its PVCs stay: like a pod deleted by hand, its instance id and claims are
 * reused by a later scale-up (docs/features.md#pvcs).
 */
async function deleteInactivePod(cs: CloneSet, key: string, action: Extract<ExtensionAction, { kind: 'DeleteInactivePod' }>, deps: ExecuteDeps): Promise<number> {
  const name = action.pod.name;
  deps.scaleExpectations.expect(key, 'delete', name, 'pod');
  try {
    await deps.ports.pods.deletePod(cs.metadata.namespace ?? '', name, action.pod.uid);
  } catch (e) {
    deps.scaleExpectations.observe(key, 'delete', name, 'pod');
    // Gone already, or a new pod under the name: nothing of ours to delete.
    if (isNotFound(e) || isConflict(e)) return 0;
    deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to delete inactive pod ${name}: ${errorText(e)}`);
    throw e;
  }
  const replaced = action.replacement !== undefined ? `its replacement ${action.replacement} is Ready` : 'the CloneSet has all its replicas Ready';
  deps.recorder.event(cs, 'Normal', 'DeletedInactivePod',
    `deleted ${action.phase} pod ${name}: more than ${action.limit} inactive pods (cloneset-controller.io/inactive-pods-limit) and ${replaced}`);
  return 1;
}

async function patchForProgressDeadline(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'PatchCloneSetForProgressDeadline' }>, deps: ExecuteDeps): Promise<number> {
  const name = cs.metadata.name ?? '';
  try {
    await deps.ports.cloneSets.patchCloneSet(cs.metadata.namespace ?? '', name, action.patch, 'json');
  } catch (e) {
    // The resourceVersion test failed (422) or the object changed (409): the cache was stale; the CloneSet's
    // update event brings a new pass that decides again on the newer object.
    if (isInvalid(e) || isConflict(e)) return 0;
    deps.recorder.event(cs, 'Warning', 'FailedUpdate', `failed to ${action.decision} after the missed progress deadline: ${errorText(e)}`);
    throw e;
  }
  deps.recorder.event(cs, 'Warning', action.decision === 'rollback' ? 'ProgressDeadlineRollback' : 'ProgressDeadlinePause', action.message);
  return 1;
}

async function annotateRevision(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'AnnotateRevision' }>, deps: ExecuteDeps): Promise<number> {
  try {
    await deps.ports.revisions.patchRevision(cs.metadata.namespace ?? '', action.revision, { metadata: { annotations: action.annotations } });
  } catch (e) {
    if (isNotFound(e)) return 0; // truncated from the history meanwhile
    throw e;
  }
  return 1;
}
