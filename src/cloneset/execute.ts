// executePlan: performs a plan's writes through the ports. Expectations are registered BEFORE each
// create/delete and lowered when the write fails, so a lagging cache never causes a second create or delete.
// Stops at the first failure: the next reconcile re-plans from fresh state.
import type { CloneSet } from '../api/cloneset.ts';
import { ANNOTATION_LIFECYCLE_TIMESTAMP, CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE, LABEL_POD_TEMPLATE_HASH, LABEL_SPECIFIED_DELETE } from '../api/well-known.ts';
import { isAlreadyExists, isInvalid, isNotFound, isConflict } from '../kube/api-error.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import { slowStartBatch } from '../runtime/slow-start.ts';
import type { PlanAction, PlanPhase, PodToCreate, PodToDelete } from './plan/actions.ts';
import { rfc3339 } from './plan/pod-template.ts';
import type { Ports } from './ports.ts';

export interface ExecuteDeps {
  readonly ports: Ports;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly recorder: EventRecorder;
  readonly nowMs: () => number;
}

export interface Outcome {
  /** Number of writes that succeeded. */
  readonly writes: number;
  readonly failure?: { readonly type: 'FailedScale' | 'FailedUpdate'; readonly error: Error };
}


export async function executePlan(
  cloneSet: CloneSet,
  key: string,
  phase: PlanPhase,
  actions: readonly PlanAction[],
  deps: ExecuteDeps,
): Promise<Outcome> {
  let writes = 0;
  for (const action of actions) {
    try {
      writes += await executeAction(cloneSet, key, action, deps);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      return { writes, failure: { type: phase === 'scale' ? 'FailedScale' : 'FailedUpdate', error } };
    }
  }
  return { writes };
}

async function executeAction(cs: CloneSet, key: string, action: PlanAction, deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  const { pods } = deps.ports;
  switch (action.kind) {
    case 'ReleasePod': {
      const path = `/metadata/ownerReferences/${action.ownerRefIndex}`;
      try {
        await pods.patchPod(ns, action.pod.name, [{ op: 'test', path: `${path}/uid`, value: action.ownerUid }, { op: 'remove', path }], 'json');
      } catch (e) {
        // Already released or gone: nothing left to do.
        if (isNotFound(e) || isInvalid(e)) return 0;
        throw e;
      }
      return 1;
    }
    case 'CreatePods':
      return createPods(cs, key, action.pods, deps);
    case 'DeletePods':
      return deletePods(cs, key, action.pods, deps);
    case 'PatchPodLifecycle': {
      const patch = {
        metadata: {
          labels: { [LABEL_LIFECYCLE_STATE]: action.state },
          annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339(deps.nowMs()) },
        },
      };
      return patchPodExpectingRv(ns, action.pod.uid, action.pod.name, patch, deps);
    }
    case 'PatchPodTemplateHash':
      return patchPodExpectingRv(ns, action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_POD_TEMPLATE_HASH]: action.hash } } }, deps);
    case 'SetInPlaceUpdateReady': {
      const condition = { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: rfc3339(deps.nowMs()) };
      // Strategic merge keys conditions by type: the kubelet's own conditions are untouched.
      await ignoreNotFound(pods.patchPodStatus(ns, action.pod.name, { status: { conditions: [condition] } }, 'strategic'));
      return 1;
    }
    case 'MarkSpecifiedDelete': {
      try {
        await patchPodExpectingRv(ns, action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } }, deps);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        deps.recorder.event(cs, 'Warning', 'FailedUpdatePodReCreate', `failed to patch pod specified-delete ${action.pod.name} for update(revision ${action.revision}): ${msg}`);
        throw e;
      }
      return 1;
    }
  }
}

async function patchPodExpectingRv(ns: string, uid: string, name: string, patch: unknown, deps: ExecuteDeps): Promise<number> {
  const pod = await deps.ports.pods.patchPod(ns, name, patch, 'strategic');
  const rv = pod.metadata.resourceVersion;
  if (rv !== undefined) deps.rvExpectations.expect(uid, rv);
  return 1;
}

async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function createPods(cs: CloneSet, key: string, list: readonly PodToCreate[], deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
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
      await deps.ports.pods.createPod(ns, c.pod);
    } catch (e) {
      deps.scaleExpectations.observe(key, 'create', name, 'pod');
      deps.recorder.event(cs, 'Warning', 'FailedCreate', `failed to create pod: ${errorText(e)}, pod: ${JSON.stringify(c.pod)}`);
      throw e;
    }
    deps.recorder.event(cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${name}`);
  };
  const result = await slowStartBatch(list.length, 1, createOne);
  // Pods of batches never attempted will not show up in the cache: stop expecting them.
  for (const c of list.slice(list.length - result.skipped)) {
    deps.scaleExpectations.observe(key, 'create', c.pod.metadata.name ?? '', 'pod');
  }
  if (result.error !== undefined) throw result.error;
  return result.succeeded;
}

async function createPvc(cs: CloneSet, key: string, pvc: PodToCreate['pvcs'][number], deps: ExecuteDeps): Promise<void> {
  const name = pvc.metadata.name ?? '';
  deps.scaleExpectations.expect(key, 'create', name, 'pvc');
  try {
    await deps.ports.pvcs.createPvc(cs.metadata.namespace ?? '', pvc);
  } catch (e) {
    deps.scaleExpectations.observe(key, 'create', name, 'pvc');
    // A claim that already exists is reused as it is (spec §8.4).
    if (isAlreadyExists(e)) return;
    deps.recorder.event(cs, 'Warning', 'FailedCreate', `failed to create pvc: ${errorText(e)}, pvc: ${JSON.stringify(pvc)}`);
    throw e;
  }
}

async function deletePods(cs: CloneSet, key: string, list: readonly PodToDelete[], deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  let writes = 0;
  for (const d of list) {
    deps.scaleExpectations.expect(key, 'delete', d.pod.name, 'pod');
    try {
      await deps.ports.pods.deletePod(ns, d.pod.name, d.pod.uid);
    } catch (e) {
      deps.scaleExpectations.observe(key, 'delete', d.pod.name, 'pod');
      // Gone already (or replaced by a pod with a new uid): the goal is reached, do not fail the pass.
      if (!isNotFound(e) && !isConflict(e)) {
        deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to delete pod ${d.pod.name}: ${errorText(e)}`);
        throw e;
      }
      continue;
    }
    writes++;
    deps.recorder.event(cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${d.pod.name}`);
    for (const pvc of d.pvcNames) {
      deps.scaleExpectations.expect(key, 'delete', pvc, 'pvc');
      try {
        await deps.ports.pvcs.deletePvc(ns, pvc);
        writes++;
      } catch (e) {
        deps.scaleExpectations.observe(key, 'delete', pvc, 'pvc');
        if (isNotFound(e)) continue;
        deps.recorder.event(cs, 'Warning', 'FailedDelete', `failed to delete pvc ${pvc}: ${errorText(e)}`);
        throw e;
      }
    }
  }
  return writes;
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
