// The executor's PVC cleanup writes (docs/features.md#pvcs; Kruise pkg/controller/cloneset/cloneset_controller.go): the hand-over patch and the delete under a scale expectation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiError } from '../kube/api-error.ts';
import type { PersistentVolumeClaim } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { PlanAction } from './plan/actions.ts';
import type { Ports } from './ports.ts';
import { apiError as status, executorFor } from './testing/executor-fixture.ts';

function harness(fail?: ApiError) {
  const clock = new FakeClock(0);
  const calls: unknown[][] = [];
  const pvcs: Ports['pvcs'] = {
    createPvc: async () => Promise.reject(new Error('unexpected')),
    deletePvc: async (...args) => {
      calls.push(['delete', ...args]);
      if (fail !== undefined) throw fail;
    },
    patchPvc: async (...args) => {
      calls.push(['patch', ...args]);
      if (fail !== undefined) throw fail;
      return {} as PersistentVolumeClaim;
    },
  };
  const { recorder, scaleExpectations, run } = executorFor(clock, { pvcs }, 'scale');
  return { calls, recorder, scaleExpectations, run };
}

const reown: PlanAction = {
  kind: 'ReownPvc',
  pvc: { name: 'data-sample-abcde', uid: 'uid-pvc' },
  ownerRefIndex: 0,
  ownerUid: 'uid-cs',
  podRef: { apiVersion: 'v1', kind: 'Pod', name: 'sample-abcde', uid: 'uid-pod', controller: true, blockOwnerDeletion: true },
};
const remove: PlanAction = { kind: 'DeletePvc', pvc: { name: 'data-sample-zzzzz', uid: 'uid-pvc2' } };

describe('executor: PVC cleanup writes', () => {
  test('the hand-over is a JSON patch that tests the PVC uid and the CloneSet reference before replacing it', async () => {
    const h = harness();
    assert.deepEqual(await h.run([reown]), { writes: 1 });
    assert.deepEqual(h.calls, [
      [
        'patch',
        'ns',
        'data-sample-abcde',
        [
          { op: 'test', path: '/metadata/uid', value: 'uid-pvc' },
          { op: 'test', path: '/metadata/ownerReferences/0/uid', value: 'uid-cs' },
          { op: 'remove', path: '/metadata/ownerReferences/0' },
          {
            op: 'add',
            path: '/metadata/ownerReferences/-',
            value: { apiVersion: 'v1', kind: 'Pod', name: 'sample-abcde', uid: 'uid-pod', controller: true, blockOwnerDeletion: true },
          },
        ],
        'json',
      ],
    ]);
  });

  test('a failed test (stale cache) is no failure but a short requeue; NotFound is reported and ignored; anything else fails the pass', async () => {
    const stale = harness(status(422, 'Invalid'));
    assert.deepEqual(await stale.run([reown]), { writes: 0, requeueAfterMs: 500 });
    assert.deepEqual(stale.recorder.seen, []);
    const gone = harness(status(404, 'NotFound'));
    assert.deepEqual(await gone.run([reown]), { writes: 0 });
    assert.match(gone.recorder.seen[0] ?? '', /^Warning FailedUpdate: failed to update PVC data-sample-abcde: /);
    const broken = harness(status(500, 'InternalError'));
    const outcome = await broken.run([reown, remove]);
    assert.equal(outcome.failure?.type, 'FailedScale');
    assert.equal(broken.calls.length, 1, 'the pass stops at the first failure');
  });

  test('a delete is guarded by the PVC uid and expected; a failed delete rolls the expectation back', async () => {
    const h = harness();
    assert.deepEqual(await h.run([remove]), { writes: 1 });
    assert.deepEqual(h.calls, [['delete', 'ns', 'data-sample-zzzzz', 'uid-pvc2']]);
    assert.equal(h.scaleExpectations.check('ns/sample').satisfied, false, 'waits for the informer to show the delete');
    h.scaleExpectations.observe('ns/sample', 'delete', 'data-sample-zzzzz', 'pvc');
    assert.equal(h.scaleExpectations.check('ns/sample').satisfied, true);

    const gone = harness(status(404, 'NotFound'));
    assert.deepEqual(await gone.run([remove]), { writes: 0 });
    assert.equal(gone.scaleExpectations.check('ns/sample').satisfied, true);
    assert.match(gone.recorder.seen[0] ?? '', /^Warning FailedDelete: failed to clean up PVC data-sample-zzzzz: /);
    const broken = harness(status(500, 'InternalError'));
    assert.equal((await broken.run([remove])).failure?.type, 'FailedScale');
    assert.equal(broken.scaleExpectations.check('ns/sample').satisfied, true);
  });
});
