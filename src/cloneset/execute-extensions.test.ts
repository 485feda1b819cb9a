// The executor's writes of our opt-in extensions (docs/features.md#beyond-kruise): what is sent, the event each
// write records, and how a stale cache (422/409) or a vanished object is taken.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiError } from '../kube/api-error.ts';
import type { CloneSet } from '../api/cloneset.ts';
import type { ControllerRevision, PersistentVolumeClaim } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { PlanAction } from './plan/actions.ts';
import type { Ports } from './ports.ts';
import { apiError as status, executorFor } from './testing/executor-fixture.ts';

function harness(fail?: ApiError) {
  const clock = new FakeClock(0);
  const calls: unknown[][] = [];
  const answer = <T>(args: unknown[], value: T): T => {
    calls.push(args);
    if (fail !== undefined) throw fail;
    return value;
  };
  const written = { metadata: { uid: 'uid-x', resourceVersion: '77' } };
  const pods = {
    deletePod: async (...args: unknown[]) => {
      answer(['deletePod', ...args], undefined);
    },
  } as unknown as Ports['pods'];
  const pvcs = { patchPvc: async (...args: unknown[]) => answer(['patchPvc', ...args], written as PersistentVolumeClaim) } as unknown as Ports['pvcs'];
  const cloneSets = { patchCloneSet: async (...args: unknown[]) => answer(['patchCloneSet', ...args], written as CloneSet) } as unknown as Ports['cloneSets'];
  const revisions = { patchRevision: async (...args: unknown[]) => answer(['patchRevision', ...args], written as ControllerRevision) } as unknown as Ports['revisions'];
  const ex = executorFor(clock, { pods, pvcs, cloneSets, revisions }, 'update');
  return { calls, ...ex };
}

const inactive: PlanAction = { kind: 'DeleteInactivePod', pod: { name: 'web-f0xxx', uid: 'uid-f0' }, phase: 'Failed', limit: 1, replacement: 'web-r0xxx' };

describe('executor: extension writes', () => {
  test('an inactive pod is deleted by uid under a scale expectation, with one DeletedInactivePod event', async () => {
    const h = harness();
    assert.deepEqual(await h.run([inactive]), { writes: 1 });
    assert.deepEqual(h.calls, [['deletePod', 'ns', 'web-f0xxx', 'uid-f0']]);
    assert.deepEqual(h.recorder.seen, [
      'Normal DeletedInactivePod: deleted Failed pod web-f0xxx: more than 1 inactive pods (cloneset-controller.io/inactive-pods-limit) and its replacement web-r0xxx is Ready',
    ]);
    assert.equal(h.scaleExpectations.check('ns/sample').satisfied, false, 'the next pass waits for the delete to show');
  });

  test('an inactive pod already gone (404) or replaced (409) is no failure and no event', async () => {
    for (const code of [
      [404, 'NotFound'],
      [409, 'Conflict'],
    ] as const) {
      const h = harness(status(code[0], code[1]));
      const outcome = await h.run([inactive]);
      assert.equal(outcome.failure, undefined);
      assert.deepEqual(h.recorder.seen, []);
    }
  });

  test('the progress-deadline patch is sent as planned; a failed resourceVersion test (422) means re-decide, no event', async () => {
    const patch = [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/spec/updateStrategy/rollingUpdate/paused', value: true },
    ];
    const action: PlanAction = {
      kind: 'PatchCloneSetForProgressDeadline',
      decision: 'pause',
      patch,
      message: 'revision r2 missed its progress deadline (60s): pausing the rollout',
    };
    const ok = harness();
    assert.deepEqual(await ok.run([action]), { writes: 1 });
    assert.deepEqual(ok.calls, [['patchCloneSet', 'ns', 'sample', patch, 'json']]);
    assert.deepEqual(ok.recorder.seen, ['Warning ProgressDeadlinePause: revision r2 missed its progress deadline (60s): pausing the rollout']);
    const stale = harness(status(422, 'Invalid'));
    const outcome = await stale.run([action]);
    assert.equal(outcome.failure, undefined);
    assert.equal(outcome.requeueAfterMs, 500);
    assert.deepEqual(stale.recorder.seen, []);
  });

  test('release and re-adoption of a retained PVC are JSON patches that test what they change', async () => {
    const h = harness();
    await h.run([
      { kind: 'ReleasePvc', pvc: { name: 'data-db-aaaaa', uid: 'uid-pvc' }, ownerRefIndex: 0, ownerUid: 'uid-cs', cloneSetName: 'db', why: 'scaled in' },
      {
        kind: 'AdoptPvc',
        pvc: { name: 'data-db-bbbbb', uid: 'uid-pvc2' },
        ownerRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'db', uid: 'uid-cs', controller: true, blockOwnerDeletion: true },
        cloneSetName: 'db',
        hasOwnerRefs: false,
      },
    ]);
    assert.deepEqual(h.calls, [
      [
        'patchPvc',
        'ns',
        'data-db-aaaaa',
        [
          { op: 'test', path: '/metadata/uid', value: 'uid-pvc' },
          { op: 'test', path: '/metadata/ownerReferences/0/uid', value: 'uid-cs' },
          { op: 'remove', path: '/metadata/ownerReferences/0' },
          { op: 'add', path: '/metadata/labels/cloneset-controller.io~1retained-by', value: 'db' },
        ],
        'json',
      ],
      [
        'patchPvc',
        'ns',
        'data-db-bbbbb',
        [
          { op: 'test', path: '/metadata/uid', value: 'uid-pvc2' },
          { op: 'test', path: '/metadata/labels/cloneset-controller.io~1retained-by', value: 'db' },
          {
            op: 'add',
            path: '/metadata/ownerReferences',
            value: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'db', uid: 'uid-cs', controller: true, blockOwnerDeletion: true }],
          },
          { op: 'remove', path: '/metadata/labels/cloneset-controller.io~1retained-by' },
        ],
        'json',
      ],
    ]);
    assert.deepEqual(h.recorder.seen, [
      'Normal RetainedPVC: retained PVC data-db-aaaaa (scaled in): released, labelled cloneset-controller.io/retained-by=db',
      'Normal AdoptedPVC: re-adopted retained PVC data-db-bbbbb: the pod with its instance id is back',
    ]);
    assert.equal(h.rvExpectations.isSatisfied('uid-x', '76').satisfied, false, 'the next pass waits for the cache to show the patched PVC');
  });

  test('a resize tests the request it saw; a refusal by the API server (403) is a Warning and fails the pass', async () => {
    const action: PlanAction = { kind: 'ResizePvc', pvc: { name: 'data-db-aaaaa', uid: 'uid-pvc' }, from: '1Gi', to: '2Gi' };
    const ok = harness();
    await ok.run([action]);
    assert.deepEqual(ok.calls, [
      [
        'patchPvc',
        'ns',
        'data-db-aaaaa',
        [
          { op: 'test', path: '/metadata/uid', value: 'uid-pvc' },
          { op: 'test', path: '/spec/resources/requests/storage', value: '1Gi' },
          { op: 'replace', path: '/spec/resources/requests/storage', value: '2Gi' },
        ],
        'json',
      ],
    ]);
    assert.deepEqual(ok.recorder.seen, ['Normal ResizingPVC: growing PVC data-db-aaaaa in place: storage 1Gi → 2Gi']);
    const refused = harness(status(403, 'Forbidden', 'Only bound persistent volume claims can be expanded'));
    const outcome = await refused.run([action]);
    assert.equal(outcome.failure?.type, 'FailedUpdate');
    assert.match(refused.recorder.seen[0] ?? '', /^Warning FailedResizePVC: failed to grow PVC data-db-aaaaa to 2Gi: /);
  });
});
