// The executor's in-place writes: the resourceVersion precondition, 409 as "re-plan" (no failure), the resize
// subresource before the pod patch, RV expectations after every write, and the events.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiError } from '../../kube/api-error.ts';
import type { Pod } from '../../kube/types.ts';
import { FakeClock } from '../../runtime/clock.ts';
import type { PlanAction } from '../plan/actions.ts';
import type { Ports } from '../ports.ts';
import { inPlaceGuardOf } from './pod-patch.ts';
import { apiError, executorFor } from '../testing/executor-fixture.ts';

/** `conflicts`: how many pod patches answer 409 before one succeeds; `live`: what a live GET returns. */
function harness(fail: { patch?: ApiError; resize?: ApiError; conflicts?: number; live?: Pod } = {}) {
  const clock = new FakeClock(0);
  const calls: { verb: string; name: string; patch: unknown }[] = [];
  let rv = 100;
  let conflicts = fail.conflicts ?? 0;
  const answer = (): Pod => ({ metadata: { name: 'p', resourceVersion: String(++rv) }, spec: { containers: [] } });
  const pods: Ports['pods'] = {
    createPod: async () => Promise.reject(new Error('unexpected')),
    deletePod: async () => Promise.reject(new Error('unexpected')),
    getPod: async (_ns, name) => {
      calls.push({ verb: 'get', name, patch: undefined });
      if (fail.live === undefined) throw apiError(404, 'NotFound');
      return fail.live;
    },
    patchPod: async (_ns, name, patch) => {
      calls.push({ verb: 'patch', name, patch });
      if (conflicts > 0) {
        conflicts--;
        throw apiError(409, 'Conflict');
      }
      if (fail.patch !== undefined) throw fail.patch;
      return answer();
    },
    patchPodStatus: async (_ns, name, patch) => {
      calls.push({ verb: 'status', name, patch });
      return answer();
    },
    patchPodResize: async (_ns, name, patch) => {
      calls.push({ verb: 'resize', name, patch });
      if (fail.resize !== undefined) throw fail.resize;
      return answer();
    },
  };
  const { recorder, rvExpectations, run } = executorFor(clock, { pods }, 'update');
  return { calls, recorder, rvExpectations, run };
}

const pod = { name: 'sample-abcde', uid: 'uid-p', resourceVersion: '42' };

/** The cached pod the update step planned from: on revision r1, marked not ready for its in-place update. */
function notReadyPod(resourceVersion: string): Pod {
  return {
    metadata: { name: 'sample-abcde', uid: 'uid-p', resourceVersion, labels: { 'controller-revision-hash': 'sample-r1', 'lifecycle.apps.kruise.io/state': 'Normal' } },
    spec: { containers: [{ name: 'main', image: 'nginx:1' }] },
    status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' }] },
  };
}
const update: PlanAction = {
  kind: 'UpdatePodInPlace',
  pod,
  step: 'update',
  revision: 'sample-r2',
  patch: { metadata: { labels: { 'controller-revision-hash': 'sample-r2' } }, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } },
};

describe('executor: in-place writes', () => {
  test('the pod patch carries the cached resourceVersion; success → RV expectation + SuccessfulUpdatePodInPlace', async () => {
    const h = harness();
    const out = await h.run([update]);
    assert.deepEqual(out, { writes: 1 });
    assert.deepEqual(h.calls, [
      {
        verb: 'patch',
        name: 'sample-abcde',
        patch: { metadata: { labels: { 'controller-revision-hash': 'sample-r2' }, resourceVersion: '42' }, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } },
      },
    ]);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '100').satisfied, false);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '101').satisfied, true);
    assert.deepEqual(h.recorder.seen, ['Normal SuccessfulUpdatePodInPlace: successfully update pod sample-abcde in-place(revision sample-r2)']);
  });

  test('409 (the cache is stale): nothing written, no failure, no event — a short requeue re-plans', async () => {
    const h = harness({ patch: apiError(409, 'Conflict') });
    assert.deepEqual(await h.run([update]), { writes: 0, requeueAfterMs: 500 });
    assert.deepEqual(h.recorder.seen, []);
  });

  test('409 after a kubelet status write: the live pod still has the guard → patched again with its resourceVersion', async () => {
    // The kubelet answered the not-ready mark by rewriting Ready: the resourceVersion moved, nothing the update rests on did.
    const cached = notReadyPod('42');
    const h = harness({ conflicts: 1, live: { ...cached, metadata: { ...cached.metadata, resourceVersion: '57' } } });
    assert.deepEqual(await h.run([{ ...update, guard: inPlaceGuardOf(cached) }]), { writes: 1, requeueAfterMs: 500 });
    assert.deepEqual(
      h.calls.map((c) => c.verb),
      ['patch', 'get', 'patch'],
    );
    assert.deepEqual((h.calls[2]?.patch as { metadata: { resourceVersion: string } } | undefined)?.metadata.resourceVersion, '57');
    assert.deepEqual(h.recorder.seen, ['Normal SuccessfulUpdatePodInPlace: successfully update pod sample-abcde in-place(revision sample-r2)']);
  });

  test('409 and the live pod lost its not-ready mark (or changed revision, state, containers): no retry, the pass re-plans', async () => {
    const cached = notReadyPod('42');
    const marked = cached.status?.conditions ?? [];
    const changes: Pod[] = [
      { ...cached, metadata: { ...cached.metadata, resourceVersion: '57' }, status: { conditions: marked.map((c) => ({ ...c, status: 'True' })) } },
      { ...cached, metadata: { ...cached.metadata, resourceVersion: '57', labels: { 'controller-revision-hash': 'sample-r2' } } },
      { ...cached, metadata: { ...cached.metadata, resourceVersion: '57', labels: { ...cached.metadata.labels, 'lifecycle.apps.kruise.io/state': 'PreparingDelete' } } },
      { ...cached, metadata: { ...cached.metadata, resourceVersion: '57' }, spec: { containers: [{ name: 'main', image: 'nginx:3' }] } },
    ];
    for (const live of changes) {
      const h = harness({ conflicts: 1, live });
      assert.deepEqual(await h.run([{ ...update, guard: inPlaceGuardOf(cached) }]), { writes: 0, requeueAfterMs: 500 });
      assert.deepEqual(
        h.calls.map((c) => c.verb),
        ['patch', 'get'],
      );
      assert.deepEqual(h.recorder.seen, []);
    }
  });

  test('the guarded retry is bounded: after 3 conflicts in a row the pass re-plans', async () => {
    const cached = notReadyPod('42');
    const h = harness({ conflicts: 5, live: cached });
    assert.deepEqual(await h.run([{ ...update, guard: inPlaceGuardOf(cached) }]), { writes: 0, requeueAfterMs: 500 });
    assert.deepEqual(
      h.calls.map((c) => c.verb),
      ['patch', 'get', 'patch', 'get', 'patch'],
    );
  });

  test('another error fails the pass with FailedUpdatePodInPlace', async () => {
    const h = harness({ patch: apiError(422, 'Invalid') });
    const out = await h.run([update]);
    assert.equal(out.failure?.type, 'FailedUpdate');
    assert.match(h.recorder.seen[0] ?? '', /^Warning FailedUpdatePodInPlace: failed to update pod sample-abcde in-place\(revision sample-r2\): /);
  });

  test("resize first, with the same precondition; the pod patch then expects the resize's resourceVersion", async () => {
    const h = harness();
    const resize = { spec: { containers: [{ name: 'main', resources: { requests: { cpu: '2' } } }] } };
    const out = await h.run([{ ...update, resize }]);
    assert.deepEqual(out, { writes: 2 });
    assert.deepEqual(
      h.calls.map((c) => c.verb),
      ['resize', 'patch'],
    );
    assert.deepEqual(h.calls[0]?.patch, { ...resize, metadata: { resourceVersion: '42' } });
    assert.equal((h.calls[1]?.patch as { metadata: { resourceVersion: string } } | undefined)?.metadata.resourceVersion, '101');
  });

  test('the not-ready mark goes to pods/status and sets an RV expectation; a guarded True carries the resourceVersion', async () => {
    const h = harness();
    const status = { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' }] } };
    await h.run([
      { kind: 'MarkPodNotReadyForInPlaceUpdate', pod, revision: 'sample-r2', patch: status },
      { kind: 'SetInPlaceUpdateReady', pod, guardResourceVersion: true },
    ]);
    assert.deepEqual(h.calls[0], { verb: 'status', name: 'sample-abcde', patch: status });
    assert.equal((h.calls[1]?.patch as { metadata: { resourceVersion: string } } | undefined)?.metadata.resourceVersion, '42');
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '101').satisfied, false);
  });

  test('FailUpdate fails the pass with its message', async () => {
    const h = harness();
    const out = await h.run([{ kind: 'FailUpdate', message: 'find Pod p update strategy is InPlaceOnly but can not update in-place: x' }]);
    assert.equal(out.failure?.error.message, 'find Pod p update strategy is InPlaceOnly but can not update in-place: x');
  });
});
