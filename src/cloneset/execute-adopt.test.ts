// docs/features.md#ownership-and-adoption (Kruise pkg/controller/cloneset/cloneset_controller.go): the adoption write is a JSON patch guarded by the cached pod's uid and resourceVersion; a failed
// guard or a vanished pod adopts nothing and is not an error (the pod's change brings the CloneSet back).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { PlanAction } from './plan/actions.ts';
import type { Ports } from './ports.ts';
import { apiError, executorFor } from './testing/executor-fixture.ts';

const unexpected = async (): Promise<never> => Promise.reject(new Error('unexpected'));
function podsPort(patchPod: Ports['pods']['patchPod']): Ports['pods'] {
  return { createPod: unexpected, getPod: unexpected, deletePod: unexpected, patchPod, patchPodStatus: unexpected, patchPodResize: unexpected };
}

const ownerRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'sample', uid: 'uid-cs', controller: true, blockOwnerDeletion: true };
const adopt = (replaceIndex?: number): PlanAction => ({
  kind: 'AdoptPod',
  pod: { name: 'p', uid: 'uid-p', resourceVersion: '7' },
  ownerRef,
  ...(replaceIndex !== undefined ? { replaceIndex } : {}),
});

test('adoption replaces the reference in place behind uid and resourceVersion tests, and expects the new resourceVersion', async () => {
  const sent: unknown[] = [];
  const pods = podsPort(async (_ns, _name, patch): Promise<Pod> => {
    sent.push(patch);
    return { metadata: { name: 'p', uid: 'uid-p', resourceVersion: '8' }, spec: { containers: [] } };
  });
  const ex = executorFor(new FakeClock(0), { pods }, 'claim');
  const out = await ex.run([adopt(1), adopt()]);
  assert.equal(out.failure, undefined);
  assert.deepEqual(sent, [
    [
      { op: 'test', path: '/metadata/uid', value: 'uid-p' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'replace', path: '/metadata/ownerReferences/1', value: ownerRef },
    ],
    [
      { op: 'test', path: '/metadata/uid', value: 'uid-p' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/ownerReferences/-', value: ownerRef },
    ],
  ]);
  assert.equal(ex.rvExpectations.isSatisfied('uid-p', '7').satisfied, false, 'the cache must show the adoption before the next plan');
});

test('a pod changed since the cache saw it (failed test op) or gone is left alone without failing the pass', async () => {
  for (const err of [apiError(422, 'Invalid'), apiError(404, 'NotFound'), apiError(409, 'Conflict')]) {
    const ex = executorFor(new FakeClock(0), { pods: podsPort(async () => Promise.reject(err)) }, 'claim');
    const out = await ex.run([adopt(0)]);
    assert.equal(out.failure, undefined, err.reason);
  }
});

test('a failed adoption guard is not "done": the CloneSet is requeued shortly, since the pod update that broke the guard may wake nothing', async () => {
  // e.g. the kubelet moved the pod IP: the cache filters that update (changesNothingRead), so no event would come back.
  for (const err of [apiError(422, 'Invalid'), apiError(409, 'Conflict')]) {
    const ex = executorFor(new FakeClock(0), { pods: podsPort(async () => Promise.reject(err)) }, 'claim');
    assert.deepEqual(await ex.run([adopt(0)]), { writes: 0, requeueAfterMs: 500 }, err.reason);
  }
  const gone = executorFor(new FakeClock(0), { pods: podsPort(async () => Promise.reject(apiError(404, 'NotFound'))) }, 'claim');
  assert.deepEqual(await gone.run([adopt(0)]), { writes: 0 }, 'a vanished pod leaves nothing to do');
});
