// The executor's lifecycle writes (docs/features.md#lifecycle-states, #markpodnotready; Kruise pkg/util/lifecycle/lifecycle_utils.go): the lifecycle label patch (with hook handlers merged in),
// and KruisePodReady through pods/status as a strategic merge patch keyed by condition type — never a PUT.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiError } from '../kube/api-error.ts';
import type { Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { Ports } from './ports.ts';
import { apiError, executorFor } from './testing/executor-fixture.ts';

const T = Date.parse('2025-01-02T03:04:05Z');

function harness(statusError?: ApiError) {
  const clock = new FakeClock(T);
  const calls: { verb: string; name: string; patch: unknown; type: string }[] = [];
  let rv = 100;
  const answer = (): Pod => ({ metadata: { name: 'p', resourceVersion: String(++rv) }, spec: { containers: [] } });
  const unexpected = async (): Promise<never> => Promise.reject(new Error('unexpected'));
  const pods: Ports['pods'] = {
    createPod: unexpected,
    getPod: unexpected,
    deletePod: unexpected,
    patchPod: async (_ns, name, patch, type) => {
      calls.push({ verb: 'patch', name, patch, type });
      return answer();
    },
    patchPodStatus: async (_ns, name, patch, type) => {
      calls.push({ verb: 'status', name, patch, type });
      if (statusError !== undefined) throw statusError;
      return answer();
    },
    patchPodResize: unexpected,
  };
  const { rvExpectations, run } = executorFor(clock, { pods }, 'update');
  return { calls, rvExpectations, run };
}

const pod = { name: 'sample-abcde', uid: 'uid-p', resourceVersion: '42' };

describe('executor: lifecycle writes', () => {
  test('a state change is a strategic merge of the label and the timestamp annotation', async () => {
    const h = harness();
    assert.deepEqual(await h.run([{ kind: 'PatchPodLifecycle', pod, state: 'PreparingDelete' }]), { writes: 1 });
    assert.deepEqual(h.calls, [
      {
        verb: 'patch',
        name: 'sample-abcde',
        type: 'strategic',
        patch: { metadata: { labels: { 'lifecycle.apps.kruise.io/state': 'PreparingDelete' }, annotations: { 'lifecycle.apps.kruise.io/timestamp': '2025-01-02T03:04:05Z' } } },
      },
    ]);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '100').satisfied, false, 'the cache must catch up with the write');
  });

  test('InPlaceUpdateReady with a lifecycle transition is one pods/status patch: condition, label and timestamp', async () => {
    const h = harness();
    assert.deepEqual(await h.run([{ kind: 'SetInPlaceUpdateReady', pod, lifecycle: { state: 'Normal' } }]), { writes: 1 });
    assert.deepEqual(h.calls, [
      {
        verb: 'status',
        name: 'sample-abcde',
        type: 'strategic',
        patch: {
          metadata: { labels: { 'lifecycle.apps.kruise.io/state': 'Normal' }, annotations: { 'lifecycle.apps.kruise.io/timestamp': '2025-01-02T03:04:05Z' } },
          status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: '2025-01-02T03:04:05Z' }] },
        },
      },
    ]);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '100').satisfied, false, 'the cache must catch up with the lifecycle write');
  });

  test('a guarded InPlaceUpdateReady with a lifecycle transition carries the cached resourceVersion', async () => {
    const h = harness();
    await h.run([{ kind: 'SetInPlaceUpdateReady', pod, guardResourceVersion: true, lifecycle: { state: 'Updated' } }]);
    assert.deepEqual(h.calls[0]?.patch, {
      metadata: { labels: { 'lifecycle.apps.kruise.io/state': 'Updated' }, annotations: { 'lifecycle.apps.kruise.io/timestamp': '2025-01-02T03:04:05Z' }, resourceVersion: '42' },
      status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: '2025-01-02T03:04:05Z' }] },
    });
  });

  test('Updated → PreparingUpdate puts the hook handlers back (finalizers merged by the strategic patch)', async () => {
    const h = harness();
    await h.run([{ kind: 'PatchPodLifecycle', pod, state: 'PreparingUpdate', addLabels: { 'example.com/drain': 'true' }, addFinalizers: ['example.io/blocker'] }]);
    assert.deepEqual(h.calls[0]?.patch, {
      metadata: {
        labels: { 'lifecycle.apps.kruise.io/state': 'PreparingUpdate', 'example.com/drain': 'true' },
        annotations: { 'lifecycle.apps.kruise.io/timestamp': '2025-01-02T03:04:05Z' },
        finalizers: ['example.io/blocker'],
      },
    });
  });

  test('KruisePodReady goes through pods/status as a strategic merge keyed by type, stamped with now, and is expected', async () => {
    const h = harness();
    const message = '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]';
    await h.run([
      {
        kind: 'PatchPodConditions',
        pod,
        conditions: [
          { type: 'KruisePodReady', status: 'False', message },
          { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'x' },
        ],
      },
    ]);
    assert.deepEqual(h.calls, [
      {
        verb: 'status',
        name: 'sample-abcde',
        type: 'strategic',
        patch: {
          status: {
            conditions: [
              { type: 'KruisePodReady', status: 'False', message, lastTransitionTime: '2025-01-02T03:04:05Z' },
              { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'x', lastTransitionTime: '2025-01-02T03:04:05Z' },
            ],
          },
        },
      },
    ]);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '100').satisfied, false);
    assert.equal(h.rvExpectations.isSatisfied('uid-p', '101').satisfied, true);
  });

  test('a pod gone meanwhile is not a failure; other errors stop the plan before the label is written', async () => {
    const gone = harness(apiError(404, 'NotFound', 'gone'));
    assert.deepEqual(await gone.run([{ kind: 'PatchPodConditions', pod, conditions: [{ type: 'KruisePodReady', status: 'True' }] }]), { writes: 0 });
    const broken = harness(apiError(500, 'InternalError', 'boom'));
    const out = await broken.run([
      { kind: 'PatchPodConditions', pod, conditions: [{ type: 'KruisePodReady', status: 'False' }] },
      { kind: 'PatchPodLifecycle', pod, state: 'PreparingDelete' },
    ]);
    assert.equal(out.failure?.type, 'FailedUpdate');
    assert.deepEqual(
      broken.calls.map((c) => c.verb),
      ['status'],
      'markPodNotReady failed: the state is not changed (docs/features.md#lifecycle-states)',
    );
  });
});
