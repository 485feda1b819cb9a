// The writes of our opt-in extensions (docs/features.md#beyond-kruise), performed for executePlan (execute.ts)
// under the same rules as the rest of the executor: a scale expectation before every pod delete, uid
// preconditions, guarded patches whose refusal means "the cache was stale, re-plan", and after every successful
// PATCH the object's resourceVersion expectation, so the next pass waits for the cache to show the write.
import type { CloneSet } from '../api/cloneset.ts';
import { LABEL_RETAINED_BY } from '../api/extensions.ts';
import { escapePointerToken } from '../api/json-diff.ts';
import { errorText, isConflict, isInvalid, isNotFound } from '../kube/api-error.ts';
import type { ExecuteDeps } from './execute-deps.ts';
import type { ExtensionAction } from './plan/actions.ts';

function expectRv(deps: ExecuteDeps, obj: { metadata: { uid?: string; resourceVersion?: string } }): void {
  const { uid, resourceVersion } = obj.metadata;
  if (uid !== undefined && uid !== '' && resourceVersion !== undefined) deps.rvExpectations.expect(uid, resourceVersion);
}

export async function executeExtension(cs: CloneSet, key: string, action: ExtensionAction, deps: ExecuteDeps): Promise<number> {
  switch (action.kind) {
    case 'DeleteInactivePod':
      return deleteInactivePod(cs, key, action, deps);
    case 'PatchCloneSetForProgressDeadline':
      return patchForProgressDeadline(cs, action, deps);
    case 'AnnotateRevision':
      return annotateRevision(cs, action, deps);
    case 'ReleasePvc':
      return releasePvc(cs, action, deps);
    case 'AdoptPvc':
      return adoptPvc(cs, action, deps);
    case 'ResizePvc':
      return resizePvc(cs, action, deps);
  }
}

/**
 * Grows a claim's storage request (docs/features.md#pvc-resize-in-place): a JSON patch that tests the uid and the
 * request the plan saw, so a stale cache or a concurrent change is refused (422) instead of overwritten. The API
 * server's PersistentVolumeClaimResize admission may still refuse (e.g. the claim is not Bound yet): a Warning event,
 * and the next pass tries again.
 */
async function resizePvc(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'ResizePvc' }>, deps: ExecuteDeps): Promise<number> {
  const path = '/spec/resources/requests/storage';
  const patch = [
    { op: 'test', path: '/metadata/uid', value: action.pvc.uid },
    { op: 'test', path, value: action.from },
    { op: 'replace', path, value: action.to },
  ];
  try {
    expectRv(deps, await deps.ports.pvcs.patchPvc(cs.metadata.namespace ?? '', action.pvc.name, patch, 'json'));
  } catch (e) {
    if (isNotFound(e)) return 0;
    if (isInvalid(e)) return 0; // a failed test: the cache was stale, the next pass decides again
    deps.recorder.event(cs, 'Warning', 'FailedResizePVC', `failed to grow PVC ${action.pvc.name} to ${action.to}: ${errorText(e)}`);
    throw e;
  }
  deps.recorder.event(cs, 'Normal', 'ResizingPVC', `growing PVC ${action.pvc.name} in place: storage ${action.from} → ${action.to}`);
  return 1;
}

const RETAINED_BY_PATH = `/metadata/labels/${escapePointerToken(LABEL_RETAINED_BY)}`;

/**
 * Releases a PVC the policy retains (docs/features.md#pvc-retention-policy): one JSON patch that tests the uid and
 * the CloneSet reference it removes, and adds the retained-by label. A failed test (422) means the cache was stale
 * (typically our own earlier release): nothing to do. Never a delete.
 */
async function releasePvc(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'ReleasePvc' }>, deps: ExecuteDeps): Promise<number> {
  const ref = action.ownerRefIndex !== undefined ? `/metadata/ownerReferences/${action.ownerRefIndex}` : undefined;
  const patch = [
    { op: 'test', path: '/metadata/uid', value: action.pvc.uid },
    ...(ref !== undefined
      ? [
          { op: 'test', path: `${ref}/uid`, value: action.ownerUid },
          { op: 'remove', path: ref },
        ]
      : []),
    { op: 'add', path: RETAINED_BY_PATH, value: action.cloneSetName },
  ];
  try {
    expectRv(deps, await deps.ports.pvcs.patchPvc(cs.metadata.namespace ?? '', action.pvc.name, patch, 'json'));
  } catch (e) {
    if (isInvalid(e) || isNotFound(e)) return 0;
    deps.recorder.event(cs, 'Warning', 'FailedUpdate', `failed to release PVC ${action.pvc.name}: ${errorText(e)}`);
    throw e;
  }
  deps.recorder.event(cs, 'Normal', 'RetainedPVC', `retained PVC ${action.pvc.name} (${action.why}): released, labelled ${LABEL_RETAINED_BY}=${action.cloneSetName}`);
  return 1;
}

/** Re-adopts a retained PVC whose instance id has a pod again: tests uid and label, adds the controller reference, drops the label. */
async function adoptPvc(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'AdoptPvc' }>, deps: ExecuteDeps): Promise<number> {
  const patch = [
    { op: 'test', path: '/metadata/uid', value: action.pvc.uid },
    { op: 'test', path: RETAINED_BY_PATH, value: action.cloneSetName },
    action.hasOwnerRefs ? { op: 'add', path: '/metadata/ownerReferences/-', value: action.ownerRef } : { op: 'add', path: '/metadata/ownerReferences', value: [action.ownerRef] },
    { op: 'remove', path: RETAINED_BY_PATH },
  ];
  try {
    expectRv(deps, await deps.ports.pvcs.patchPvc(cs.metadata.namespace ?? '', action.pvc.name, patch, 'json'));
  } catch (e) {
    if (isInvalid(e) || isNotFound(e)) return 0;
    deps.recorder.event(cs, 'Warning', 'FailedUpdate', `failed to re-adopt PVC ${action.pvc.name}: ${errorText(e)}`);
    throw e;
  }
  deps.recorder.event(cs, 'Normal', 'AdoptedPVC', `re-adopted retained PVC ${action.pvc.name}: the pod with its instance id is back`);
  return 1;
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
  deps.recorder.event(
    cs,
    'Normal',
    'DeletedInactivePod',
    `deleted ${action.phase} pod ${name}: more than ${action.limit} inactive pods (cloneset-controller.io/inactive-pods-limit) and ${replaced}`,
  );
  return 1;
}

async function patchForProgressDeadline(cs: CloneSet, action: Extract<ExtensionAction, { kind: 'PatchCloneSetForProgressDeadline' }>, deps: ExecuteDeps): Promise<number> {
  const name = cs.metadata.name ?? '';
  try {
    expectRv(deps, await deps.ports.cloneSets.patchCloneSet(cs.metadata.namespace ?? '', name, action.patch, 'json'));
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
    expectRv(deps, await deps.ports.revisions.patchRevision(cs.metadata.namespace ?? '', action.revision, { metadata: { annotations: action.annotations } }));
  } catch (e) {
    if (isNotFound(e)) return 0; // truncated from the history meanwhile
    throw e;
  }
  return 1;
}
