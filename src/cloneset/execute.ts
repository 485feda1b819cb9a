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
      const finalizers = action.addFinalizers ?? [];
      const patch = {
        metadata: {
          labels: { [LABEL_LIFECYCLE_STATE]: action.state, ...(action.addLabels ?? {}) },
          annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339(deps.nowMs()) },
          // Strategic merge: finalizers are merged into the pod's list, never replace it.
          ...(finalizers.length > 0 ? { finalizers: [...finalizers] } : {}),
        },
      };
      return patchPodExpectingRv(ns, action.pod.uid, action.pod.name, patch, deps);
    }
    case 'PatchPodConditions': {
      // pods/status, strategic merge keyed by condition type: the kubelet's and others' conditions stay as they are.
      const lastTransitionTime = rfc3339(deps.nowMs());
      const conditions = action.conditions.map((c) => ({ ...c, lastTransitionTime }));
      const pod = await ignoreNotFound(pods.patchPodStatus(ns, action.pod.name, { status: { conditions } }, 'strategic'));
      if (pod === undefined) return 0;
      const rv = pod.metadata.resourceVersion;
      if (rv !== undefined) deps.rvExpectations.expect(action.pod.uid, rv);
      return 1;
    }
    case 'PatchPodTemplateHash':
      return patchPodExpectingRv(ns, action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_POD_TEMPLATE_HASH]: action.hash } } }, deps);
    case 'SetInPlaceUpdateReady': {
      const condition = { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: rfc3339(deps.nowMs()) };
      // Strategic merge keys conditions by type: the kubelet's own conditions are untouched.
      if (action.guardResourceVersion === true) {
        return writeInPlace(action.pod, deps, (rv) => pods.patchPodStatus(ns, action.pod.name, { metadata: { resourceVersion: rv }, status: { conditions: [condition] } }, 'strategic'));
      }
      await ignoreNotFound(pods.patchPodStatus(ns, action.pod.name, { status: { conditions: [condition] } }, 'strategic'));
      return 1;
    }
    case 'MarkPodNotReadyForInPlaceUpdate':
    case 'UpdatePodInPlace':
      return executeInPlace(cs, action, deps);
    case 'FailUpdate':
      throw new Error(action.message);
    case 'MarkSpecifiedDelete': {
      try {
        await patchPodExpectingRv(ns, action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } }, deps);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        deps.recorder.event(cs, 'Warning', 'FailedUpdatePodReCreate', `failed to patch pod specified-delete ${action.pod.name} for update(revision ${action.revision}): ${msg}`);
        throw e;
      }
      // Recorded here, after the write, so a failed patch never also reports success.
      deps.recorder.event(cs, 'Normal', 'SuccessfulUpdatePodReCreate', `successfully patch pod ${action.pod.name} specified-delete for update(revision ${action.revision})`);
      return 1;
    }
    case 'ReownPvc':
      return reownPvc(cs, action, deps);
    case 'DeletePvc':
      return cleanupPvc(cs, key, action, deps);
  }
}

/**
 * The in-place writes (spec §12.3, §12.5, §12.6). The pod patch carries the cached pod's resourceVersion: a 409
 * means the cache is behind the server, nothing was applied, and the watch event that brings the newer pod
 * requeues the CloneSet — it is not a failure. Every successful write sets the RV expectation.
 */
async function executeInPlace(
  cs: CloneSet,
  action: Extract<PlanAction, { kind: 'MarkPodNotReadyForInPlaceUpdate' | 'UpdatePodInPlace' }>,
  deps: ExecuteDeps,
): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  const { pods } = deps.ports;
  const name = action.pod.name;
  try {
    if (action.kind === 'MarkPodNotReadyForInPlaceUpdate') {
      const pod = await ignoreNotFound(pods.patchPodStatus(ns, name, action.patch, 'strategic'));
      if (pod === undefined) return 0;
      expectRv(action.pod.uid, pod.metadata.resourceVersion, deps);
      return 1;
    }
    let writes = 0;
    const resize = action.resize;
    const result = await writeInPlace(action.pod, deps, async (rv) => {
      let current = rv;
      if (resize !== undefined) {
        // The resize carries the same precondition; the pod patch then expects the resize's new version.
        const resized = await pods.patchPodResize(ns, name, withResourceVersion(resize, current));
        writes++;
        expectRv(action.pod.uid, resized.metadata.resourceVersion, deps);
        current = resized.metadata.resourceVersion ?? current;
      }
      return pods.patchPod(ns, name, withResourceVersion(action.patch, current), 'strategic');
    });
    if (result === 0) return writes;
    if (action.step === 'update') {
      deps.recorder.event(cs, 'Normal', 'SuccessfulUpdatePodInPlace', `successfully update pod ${name} in-place(revision ${action.revision})`);
    }
    return writes + 1;
  } catch (e) {
    deps.recorder.event(cs, 'Warning', 'FailedUpdatePodInPlace', `failed to update pod ${name} in-place(revision ${action.revision}): ${errorText(e)}`);
    throw e;
  }
}

/** Runs a write guarded by the cached resourceVersion; 0 (no write) when the pod is gone or changed meanwhile. */
async function writeInPlace(pod: { readonly uid: string; readonly resourceVersion?: string }, deps: ExecuteDeps, write: (rv: string) => Promise<{ readonly metadata: { readonly resourceVersion?: string } }>): Promise<number> {
  try {
    const written = await write(pod.resourceVersion ?? '');
    expectRv(pod.uid, written.metadata.resourceVersion, deps);
    return 1;
  } catch (e) {
    if (isConflict(e) || isNotFound(e)) return 0;
    throw e;
  }
}

function withResourceVersion(patch: Readonly<Record<string, unknown>>, rv: string): Record<string, unknown> {
  const metadata = patch['metadata'];
  return { ...patch, metadata: { ...(typeof metadata === 'object' && metadata !== null ? metadata : {}), resourceVersion: rv } };
}

function expectRv(uid: string, rv: string | undefined, deps: ExecuteDeps): void {
  if (rv !== undefined) deps.rvExpectations.expect(uid, rv);
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

/**
 * Hands a PVC to its inactive pod (spec §8.5): a JSON patch that first tests the PVC's uid and the CloneSet
 * reference at the planned index (a stale cache fails the test instead of overwriting someone else's change),
 * then removes that reference and adds the pod's. Never a whole-object PUT.
 */
async function reownPvc(cs: CloneSet, action: Extract<PlanAction, { kind: 'ReownPvc' }>, deps: ExecuteDeps): Promise<number> {
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

/** Deletes a PVC whose instance id matches no owned pod (spec §8.5), under a scale expectation. */
async function cleanupPvc(cs: CloneSet, key: string, action: Extract<PlanAction, { kind: 'DeletePvc' }>, deps: ExecuteDeps): Promise<number> {
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

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
