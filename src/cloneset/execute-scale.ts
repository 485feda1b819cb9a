// The scaling writes of executePlan: pod and PVC creates and deletes, each under a scale expectation registered
// BEFORE the write and lowered only when the write certainly did not happen (a lost answer is settled by sending
// again, never by guessing), and the PVC hand-over and cleanup of docs/features.md#pvcs (Kruise pkg/controller/cloneset/cloneset_controller.go).
import type { CloneSet } from '../api/cloneset.ts';
import { RequestAbortedError, errorText, isAlreadyExists, isConflict, isInvalid, isNotFound, isOutcomeUnknown } from '../kube/api-error.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import type { Pod } from '../kube/types.ts';
import { slowStartBatch } from '../runtime/slow-start.ts';
import type { PlanAction, PodToCreate, PodToDelete } from './plan/actions.ts';
import type { ExecuteDeps } from './execute-deps.ts';

/**
 * Creates of one slow-start batch in flight at once. The batches keep Kruise's sizes (1, 2, 4 … and no batch after
 * a failure); only the thousands of a late batch no longer wait all at once in the client, where they outlast
 * the request timeout and are sent again (each also holds a listener on the pass's abort signal).
 */
export const CREATE_CONCURRENCY = 64;

export async function createPods(cs: CloneSet, key: string, list: readonly PodToCreate[], deps: ExecuteDeps): Promise<number> {
  for (const c of list) deps.scaleExpectations.expect(key, 'create', c.pod.metadata.name ?? '', 'pod');
  const createOne = async (i: number): Promise<void> => {
    const c = list[i];
    if (c === undefined) return;
    const name = c.pod.metadata.name ?? '';
    try {
      for (const pvc of c.pvcs) await createPvc(cs, key, pvc, deps);
    } catch (e) {
      deps.scaleExpectations.observe(key, 'create', name, 'pod');
      throw e;
    }
    try {
      await createPodSettlingLostAnswers(cs, c.pod, deps);
    } catch (e) {
      // Still no answer after the resends: the pod may exist, so the expectation stays (the pod's ADDED event or
      // the expectation's TTL clears it); lowering it could let the next pass create one pod too many.
      if (!isOutcomeUnknown(e)) deps.scaleExpectations.observe(key, 'create', name, 'pod');
      // Cancelled because this replica is stopping or lost its lease: not a failure of the CloneSet.
      if (!(e instanceof RequestAbortedError)) deps.recorder.event(cs, 'Warning', 'FailedCreate', `failed to create pod: ${errorText(e)}, pod: ${JSON.stringify(c.pod)}`);
      throw e;
    }
    deps.recorder.event(cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${name}`);
  };
  const result = await slowStartBatch(list.length, 1, createOne, deps.signal, CREATE_CONCURRENCY);
  // Pods of batches never attempted will not show up in the cache: stop expecting them.
  for (const c of list.slice(list.length - result.skipped)) {
    deps.scaleExpectations.observe(key, 'create', c.pod.metadata.name ?? '', 'pod');
  }
  if (result.error !== undefined) throw result.error;
  return result.succeeded;
}

/**
 * How often a create whose answer was lost is sent again, and the pauses before (100 ms doubling up to 2 s: about
 * 9 s in all, so that an API server restart or a burst of dropped connections is outlasted).
 */
export const LOST_ANSWER_RESENDS = 8;
export const lostAnswerPauseMs = (resend: number): number => Math.min(2000, 100 * 2 ** resend);

/**
 * Creates the pod, and settles a lost answer instead of guessing. When the connection drops after the request
 * was sent (or the server answers 504) the pod may exist. Lowering its expectation then, as Kruise does, lets the
 * next pass plan without it and create one more: `npm run chaos` saw 14 pods for replicas + maxSurge = 13 after
 * a connection reset during a rollout. Our pod names are fixed before the create (`<cloneset>-<instance id>`), so
 * sending the same create again settles it: 201 means the first did not land; 409 AlreadyExists for a pod whose
 * controller is this CloneSet means it did (or landed meanwhile), and the pod counts as created. Still no answer
 * after LOST_ANSWER_RESENDS: the error goes up and the expectation stays (the API server has been unreachable
 * for about 9 s; the expectation's TTL bounds the wait).
 */
async function createPodSettlingLostAnswers(cs: CloneSet, pod: Pod, deps: ExecuteDeps): Promise<void> {
  const ns = cs.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  await resendingLostAnswers(deps, `POST pods ${name}`, async () => {
    try {
      await deps.ports.pods.createPod(ns, pod);
    } catch (e) {
      if (isAlreadyExists(e) && (await isControlledBy(cs, ns, name, deps))) return;
      throw e;
    }
  });
}

/**
 * Sends `send` until it has an answer: an outcome-unknown failure (connection dropped after sending, 504) is
 * sent again after a pause, at most LOST_ANSWER_RESENDS times. Every write the executor resends is idempotent
 * by construction: a create under a fixed name (AlreadyExists settles it), a delete with a uid precondition
 * (NotFound settles it).
 */
export async function resendingLostAnswers<T>(deps: ExecuteDeps, what: string, send: (resend: number) => Promise<T>): Promise<T> {
  for (let resend = 0; ; resend++) {
    try {
      return await send(resend);
    } catch (e) {
      if (!isOutcomeUnknown(e) || resend >= LOST_ANSWER_RESENDS) throw e;
    }
    await deps.sleep(lostAnswerPauseMs(resend));
    // this replica stops or lost its lease: no more writes, and not a failure of the CloneSet
    if (deps.signal?.aborted === true) throw new RequestAbortedError(what);
  }
}

/** How a delete ended: sent and answered, or the object was already gone (or replaced) at the first try. */
export type DeleteResult = 'deleted' | 'absent';

/**
 * Deletes exactly one incarnation (`send` carries the uid precondition), settling a lost answer by sending the
 * delete again: 404 NotFound after a resend means the first one landed; a pod already terminating with our uid
 * answers 200 again. 409 (the uid precondition failed) means our incarnation is gone and another has the name.
 */
export async function deleteSettlingLostAnswers(deps: ExecuteDeps, what: string, send: () => Promise<void>): Promise<DeleteResult> {
  return resendingLostAnswers(deps, what, async (resend) => {
    try {
      await send();
      return 'deleted';
    } catch (e) {
      if (isNotFound(e)) return resend === 0 ? 'absent' : 'deleted';
      if (isConflict(e)) return 'absent';
      throw e;
    }
  });
}

/**
 * Whether the live pod `name` has this CloneSet as its controller and is not terminating (a read: the cache may
 * not have it yet). A terminating pod of ours under that name is an earlier incarnation (a reused instance id),
 * not the create we sent.
 */
async function isControlledBy(cs: CloneSet, ns: string, name: string, deps: ExecuteDeps): Promise<boolean> {
  let live: Pod;
  try {
    live = await deps.ports.pods.getPod(ns, name);
  } catch {
    return false; // the AlreadyExists then goes up as it is
  }
  return live.metadata.deletionTimestamp === undefined && controllerRefOf(live)?.uid === cs.metadata.uid;
}

async function createPvc(cs: CloneSet, key: string, pvc: PodToCreate['pvcs'][number], deps: ExecuteDeps): Promise<void> {
  const name = pvc.metadata.name ?? '';
  deps.scaleExpectations.expect(key, 'create', name, 'pvc');
  try {
    await deps.ports.pvcs.createPvc(cs.metadata.namespace ?? '', pvc);
  } catch (e) {
    deps.scaleExpectations.observe(key, 'create', name, 'pvc');
    // A claim that already exists is reused as it is (docs/features.md#pvcs; Kruise pkg/controller/cloneset/sync/cloneset_scale.go).
    if (isAlreadyExists(e)) return;
    deps.recorder.event(cs, 'Warning', 'FailedCreate', `failed to create pvc: ${errorText(e)}, pvc: ${JSON.stringify(pvc)}`);
    throw e;
  }
}

export async function deletePods(cs: CloneSet, key: string, list: readonly PodToDelete[], deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  let writes = 0;
  for (const d of list) {
    deps.scaleExpectations.expect(key, 'delete', d.pod.name, 'pod');
    let result: DeleteResult;
    try {
      result = await deleteSettlingLostAnswers(deps, `DELETE pods ${d.pod.name}`, () => deps.ports.pods.deletePod(ns, d.pod.name, d.pod.uid));
    } catch (e) {
      // A lost answer that resends could not settle: the pod may be terminating, so the expectation stays and the
      // next pass does not pick a second victim in its place (the pod's DELETED event or the TTL clears it).
      if (!isOutcomeUnknown(e)) deps.scaleExpectations.observe(key, 'delete', d.pod.name, 'pod');
      deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to delete pod ${d.pod.name}: ${errorText(e)}`);
      throw e;
    }
    if (result === 'absent') {
      // Gone already (someone else deleted it) or replaced by a new incarnation: the goal is reached, do not fail
      // the pass. Its DELETED event may have arrived before the expectation was registered: lowered here.
      deps.scaleExpectations.observe(key, 'delete', d.pod.name, 'pod');
      continue;
    }
    writes++;
    deps.recorder.event(cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${d.pod.name}`);
    for (const pvc of d.pvcNames) {
      deps.scaleExpectations.expect(key, 'delete', pvc, 'pvc');
      try {
        if ((await deleteSettlingLostAnswers(deps, `DELETE persistentvolumeclaims ${pvc}`, () => deps.ports.pvcs.deletePvc(ns, pvc))) === 'deleted') writes++;
        else deps.scaleExpectations.observe(key, 'delete', pvc, 'pvc');
      } catch (e) {
        if (!isOutcomeUnknown(e)) deps.scaleExpectations.observe(key, 'delete', pvc, 'pvc');
        deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to delete pvc ${pvc}: ${errorText(e)}`);
        throw e;
      }
    }
  }
  return writes;
}

/**
 * Hands a PVC to its inactive pod (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): a JSON patch that first tests the PVC's uid and the CloneSet
 * reference at the planned index (a stale cache fails the test instead of overwriting someone else's change),
 * then removes that reference and adds the pod's. Never a whole-object PUT.
 */
export async function reownPvc(cs: CloneSet, action: Extract<PlanAction, { kind: 'ReownPvc' }>, deps: ExecuteDeps): Promise<number> {
  const path = `/metadata/ownerReferences/${action.ownerRefIndex}`;
  const patch = [
    { op: 'test', path: '/metadata/uid', value: action.pvc.uid },
    { op: 'test', path: `${path}/uid`, value: action.ownerUid },
    { op: 'remove', path },
    ...(action.podRef !== undefined ? [{ op: 'add', path: '/metadata/ownerReferences/-', value: action.podRef }] : []),
  ];
  try {
    await deps.ports.pvcs.patchPvc(cs.metadata.namespace ?? '', action.pvc.name, patch, 'json');
  } catch (e) {
    // A failed `test` (422 Invalid): the cache lags behind (typically our own earlier hand-over) or the PVC was
    // replaced. Nothing to do; the next pass plans from the newer object.
    if (isInvalid(e)) return 0;
    deps.recorder.event(cs, 'Warning', 'FailedUpdate', `failed to update PVC ${action.pvc.name}: ${errorText(e)}`);
    if (isNotFound(e)) return 0;
    throw e;
  }
  return 1;
}

/** Deletes a PVC whose instance id matches no owned pod (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go), under a scale expectation. */
export async function cleanupPvc(cs: CloneSet, key: string, action: Extract<PlanAction, { kind: 'DeletePvc' }>, deps: ExecuteDeps): Promise<number> {
  const name = action.pvc.name;
  deps.scaleExpectations.expect(key, 'delete', name, 'pvc');
  try {
    await deps.ports.pvcs.deletePvc(cs.metadata.namespace ?? '', name, action.pvc.uid);
  } catch (e) {
    deps.scaleExpectations.observe(key, 'delete', name, 'pvc');
    deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to clean up PVC ${name}: ${errorText(e)}`);
    // Gone already, or replaced by a new incarnation (uid precondition): nothing of ours left to delete.
    if (isNotFound(e) || isConflict(e)) return 0;
    throw e;
  }
  return 1;
}
