// The pod writes of executePlan other than create/delete: release, lifecycle and condition patches, the
// specified-delete mark, and the in-place update writes. A successful write sets the pod's resourceVersion
// expectation, so a lagging cache is not mistaken for the state the write left.
import type { CloneSet } from '../api/cloneset.ts';
import { ANNOTATION_LIFECYCLE_TIMESTAMP, CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE, LABEL_POD_TEMPLATE_HASH, LABEL_SPECIFIED_DELETE } from '../api/well-known.ts';
import { errorText, isConflict, isInvalid, isNotFound } from '../kube/api-error.ts';
import type { PlanAction } from './plan/actions.ts';
import { inPlaceGuardOf } from './inplace/pod-patch.ts';
import { rfc3339 } from './plan/pod-template.ts';
import type { ExecuteDeps } from './execute-deps.ts';

type ActionOf<K extends PlanAction['kind']> = Extract<PlanAction, { kind: K }>;

export async function releasePod(cs: CloneSet, action: ActionOf<'ReleasePod'>, deps: ExecuteDeps): Promise<number> {
  const path = `/metadata/ownerReferences/${action.ownerRefIndex}`;
  try {
    await deps.ports.pods.patchPod(
      cs.metadata.namespace ?? '',
      action.pod.name,
      [
        { op: 'test', path: `${path}/uid`, value: action.ownerUid },
        { op: 'remove', path },
      ],
      'json',
    );
  } catch (e) {
    // Already released or gone: nothing left to do.
    if (isNotFound(e) || isInvalid(e)) return 0;
    throw e;
  }
  return 1;
}

/**
 * Adoption (docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/cloneset_controller.go) as a JSON patch guarded by the cached pod's uid and resourceVersion (Kruise PUTs the
 * cached copy). A failed guard (422), a conflict or a vanished pod adopts nothing: the pod's own change event
 * brings the CloneSet back to decide again on the newer pod.
 */
export async function adoptPod(cs: CloneSet, action: ActionOf<'AdoptPod'>, deps: ExecuteDeps): Promise<number> {
  const guard = [
    { op: 'test', path: '/metadata/uid', value: action.pod.uid },
    ...(action.pod.resourceVersion !== undefined ? [{ op: 'test', path: '/metadata/resourceVersion', value: action.pod.resourceVersion }] : []),
  ];
  const write =
    action.replaceIndex !== undefined
      ? { op: 'replace', path: `/metadata/ownerReferences/${action.replaceIndex}`, value: action.ownerRef }
      : { op: 'add', path: '/metadata/ownerReferences/-', value: action.ownerRef };
  let pod;
  try {
    pod = await deps.ports.pods.patchPod(cs.metadata.namespace ?? '', action.pod.name, [...guard, write], 'json');
  } catch (e) {
    if (isNotFound(e) || isInvalid(e) || isConflict(e)) return 0;
    throw e;
  }
  const rv = pod.metadata.resourceVersion;
  if (rv !== undefined) deps.rvExpectations.expect(action.pod.uid, rv);
  return 1;
}

export async function patchPodLifecycle(cs: CloneSet, action: ActionOf<'PatchPodLifecycle'>, deps: ExecuteDeps): Promise<number> {
  const finalizers = action.addFinalizers ?? [];
  const patch = {
    metadata: {
      labels: { [LABEL_LIFECYCLE_STATE]: action.state, ...(action.addLabels ?? {}) },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339(deps.nowMs()) },
      // Strategic merge: finalizers are merged into the pod's list, never replace it.
      ...(finalizers.length > 0 ? { finalizers: [...finalizers] } : {}),
    },
  };
  return patchPodExpectingRv(cs.metadata.namespace ?? '', action.pod.uid, action.pod.name, patch, deps);
}

export async function patchPodConditions(cs: CloneSet, action: ActionOf<'PatchPodConditions'>, deps: ExecuteDeps): Promise<number> {
  // pods/status, strategic merge keyed by condition type: the kubelet's and others' conditions stay as they are.
  const lastTransitionTime = rfc3339(deps.nowMs());
  const conditions = action.conditions.map((c) => ({ ...c, lastTransitionTime }));
  const pod = await ignoreNotFound(deps.ports.pods.patchPodStatus(cs.metadata.namespace ?? '', action.pod.name, { status: { conditions } }, 'strategic'));
  if (pod === undefined) return 0;
  const rv = pod.metadata.resourceVersion;
  if (rv !== undefined) deps.rvExpectations.expect(action.pod.uid, rv);
  return 1;
}

export async function patchPodTemplateHash(cs: CloneSet, action: ActionOf<'PatchPodTemplateHash'>, deps: ExecuteDeps): Promise<number> {
  return patchPodExpectingRv(cs.metadata.namespace ?? '', action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_POD_TEMPLATE_HASH]: action.hash } } }, deps);
}

export async function setInPlaceUpdateReady(cs: CloneSet, action: ActionOf<'SetInPlaceUpdateReady'>, deps: ExecuteDeps): Promise<number> {
  const ns = cs.metadata.namespace ?? '';
  const { pods } = deps.ports;
  const now = rfc3339(deps.nowMs());
  const condition = { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: now };
  // A lifecycle transition rides along (plan/refresh.ts): pods/status takes labels and annotations too.
  const lifecycle = action.lifecycle;
  const metadata =
    lifecycle === undefined
      ? {}
      : {
          labels: { [LABEL_LIFECYCLE_STATE]: lifecycle.state, ...(lifecycle.addLabels ?? {}) },
          annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: now },
        };
  // Strategic merge keys conditions by type: the kubelet's own conditions are untouched.
  if (action.guardResourceVersion === true) {
    return writeInPlace(action.pod, undefined, deps, (rv) =>
      pods.patchPodStatus(ns, action.pod.name, { metadata: { ...metadata, resourceVersion: rv }, status: { conditions: [condition] } }, 'strategic'),
    );
  }
  const pod = await ignoreNotFound(
    pods.patchPodStatus(ns, action.pod.name, { ...(lifecycle === undefined ? {} : { metadata }), status: { conditions: [condition] } }, 'strategic'),
  );
  if (pod === undefined) return 0;
  // A lifecycle write must be seen in the cache before the next decision (docs/features.md#lifecycle-states; Kruise pkg/util/expectations/resource_version_expectation.go waits for its resourceVersion).
  if (lifecycle !== undefined) expectRv(action.pod.uid, pod.metadata.resourceVersion, deps);
  return 1;
}

export async function markSpecifiedDelete(cs: CloneSet, action: ActionOf<'MarkSpecifiedDelete'>, deps: ExecuteDeps): Promise<number> {
  try {
    await patchPodExpectingRv(cs.metadata.namespace ?? '', action.pod.uid, action.pod.name, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } }, deps);
  } catch (e) {
    deps.recorder.event(
      cs,
      'Warning',
      'FailedUpdatePodReCreate',
      `failed to patch pod specified-delete ${action.pod.name} for update(revision ${action.revision}): ${errorText(e)}`,
    );
    throw e;
  }
  // Recorded here, after the write, so a failed patch never also reports success.
  deps.recorder.event(cs, 'Normal', 'SuccessfulUpdatePodReCreate', `successfully patch pod ${action.pod.name} specified-delete for update(revision ${action.revision})`);
  return 1;
}

/**
 * The in-place writes (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go). The pod patch carries the cached pod's resourceVersion: a 409
 * means the cache is behind the server, nothing was applied, and the watch event that brings the newer pod
 * requeues the CloneSet — it is not a failure. Every successful write sets the RV expectation.
 */
export async function executeInPlace(cs: CloneSet, action: ActionOf<'MarkPodNotReadyForInPlaceUpdate' | 'UpdatePodInPlace'>, deps: ExecuteDeps): Promise<number> {
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
    const result = await writeInPlace(action.pod, action.guard === undefined ? undefined : { guard: action.guard, ns, name }, deps, async (rv) => {
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

/** Live re-checks after a 409 before the pass gives up and re-plans (each costs one GET). */
const GUARD_RETRIES = 2;

/**
 * Runs a write guarded by the cached resourceVersion; 0 (no write) when the pod is gone or changed meanwhile.
 * With `recheck`, a 409 reads the live pod: if what the decision rests on is unchanged (`inPlaceGuardOf`, e.g.
 * only the kubelet rewrote the Ready condition after our not-ready mark), the write is sent again with the
 * live resourceVersion — still a precondition, so a change in between is again a 409, never a lost update.
 */
async function writeInPlace(
  pod: { readonly uid: string; readonly resourceVersion?: string },
  recheck: { readonly guard: string; readonly ns: string; readonly name: string } | undefined,
  deps: ExecuteDeps,
  write: (rv: string) => Promise<{ readonly metadata: { readonly resourceVersion?: string } }>,
): Promise<number> {
  let rv = pod.resourceVersion ?? '';
  for (let attempt = 0; ; attempt++) {
    try {
      const written = await write(rv);
      expectRv(pod.uid, written.metadata.resourceVersion, deps);
      return 1;
    } catch (e) {
      if (isNotFound(e)) return 0;
      if (!isConflict(e)) throw e;
      if (recheck === undefined || attempt >= GUARD_RETRIES) return 0;
      const live = await ignoreNotFound(deps.ports.pods.getPod(recheck.ns, recheck.name));
      if (live === undefined || inPlaceGuardOf(live) !== recheck.guard || live.metadata.resourceVersion === undefined) return 0;
      rv = live.metadata.resourceVersion;
    }
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
