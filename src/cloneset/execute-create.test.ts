// The executor's pod creates when the answer is lost (execute-scale.ts `createPodSettlingLostAnswers`): a create
// whose connection dropped after it was sent may have landed, and the same named create sent again settles it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError } from '../kube/api-error.ts';
import type { Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import { LOST_ANSWER_RESENDS } from './execute-scale.ts';
import type { PlanAction } from './plan/actions.ts';
import type { Ports } from './ports.ts';
import { apiError, executorFor } from './testing/executor-fixture.ts';

/** A controller reference to the fixture's CloneSet (uid-cs). */
const ours = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'sample', uid: 'uid-cs', controller: true };
const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sample-abcde', namespace: 'ns', ownerReferences: [ours] }, spec: { containers: [] } };
const create: PlanAction = { kind: 'CreatePods', pods: [{ pod, pvcs: [], revision: 'sample-rev' }] };

/** The answer of one create attempt: 'created', 'lost' (the connection dropped after sending), or an error. */
type Answer = 'created' | 'lost' | Error;

/** Pod ports whose creates answer in turn as `answers` say; `existing` is what a read of the pod returns. */
function harness(answers: Answer[], existing?: Pod) {
  const calls: string[] = [];
  const pods: Ports['pods'] = {
    createPod: async (_ns, p) => {
      calls.push(`create ${p.metadata.name ?? ''}`);
      const a = answers.shift() ?? 'created';
      if (a === 'created') return p;
      if (a === 'lost') throw new ConnectionError('https://127.0.0.1:6443', 'POST /api/v1/namespaces/ns/pods', new Error('socket hang up'));
      throw a;
    },
    getPod: async (_ns, name) => {
      calls.push(`get ${name}`);
      if (existing === undefined) throw apiError(404, 'NotFound');
      return existing;
    },
    deletePod: async () => Promise.reject(new Error('unexpected')),
    patchPod: async () => Promise.reject(new Error('unexpected')),
    patchPodStatus: async () => Promise.reject(new Error('unexpected')),
    patchPodResize: async () => Promise.reject(new Error('unexpected')),
  };
  const e = executorFor(new FakeClock(0), { pods }, 'scale');
  const pending = (): readonly string[] => e.scaleExpectations.pending('ns/sample').create;
  return { calls, pending, recorder: e.recorder, pauses: e.pauses, run: () => e.run([create]) };
}

describe('executor: a pod create whose answer was lost', () => {
  test('is sent again; AlreadyExists for a pod this CloneSet controls means the first landed: created, still expected', async () => {
    const h = harness(['lost', apiError(409, 'AlreadyExists')], pod);
    const outcome = await h.run();
    assert.equal(outcome.failure, undefined);
    assert.deepEqual(h.calls, ['create sample-abcde', 'create sample-abcde', 'get sample-abcde']);
    assert.deepEqual(h.pauses, [100]);
    // The pass waits for the watch to show the pod instead of planning without it (and creating one more).
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
    assert.deepEqual(h.recorder.seen, ['Normal SuccessfulCreate: succeed to create pod sample-abcde']);
  });

  test('is sent again; a 201 means the first did not land: one pod, created', async () => {
    const h = harness(['lost', 'created']);
    assert.equal((await h.run()).failure, undefined);
    assert.deepEqual(h.calls, ['create sample-abcde', 'create sample-abcde']);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
  });

  test('a 504 (the server may still be processing it) is settled the same way', async () => {
    const h = harness([apiError(504, 'Timeout'), apiError(409, 'AlreadyExists')], pod);
    assert.equal((await h.run()).failure, undefined);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
  });

  test('AlreadyExists for a pod someone else controls is a failed create: not expected any more, FailedCreate', async () => {
    const foreign: Pod = { ...pod, metadata: { ...pod.metadata, ownerReferences: [{ ...ours, uid: 'uid-other' }] } };
    const h = harness(['lost', apiError(409, 'AlreadyExists')], foreign);
    const outcome = await h.run();
    assert.equal(outcome.failure?.type, 'FailedScale');
    assert.deepEqual(h.pending(), []);
    assert.match(h.recorder.seen[0] ?? '', /^Warning FailedCreate: failed to create pod: /);
  });

  test('AlreadyExists for a terminating pod of ours (an earlier incarnation under a reused instance id) is a failed create', async () => {
    const terminating: Pod = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-11-26T00:00:00Z' } };
    const h = harness([apiError(409, 'AlreadyExists')], terminating);
    assert.equal((await h.run()).failure?.type, 'FailedScale');
    assert.deepEqual(h.pending(), []);
  });

  test(`still no answer after ${String(LOST_ANSWER_RESENDS)} resends: the error goes up and the pod stays expected (it may exist)`, async () => {
    const h = harness(Array.from({ length: LOST_ANSWER_RESENDS + 1 }, (): Answer => 'lost'));
    const outcome = await h.run();
    assert.ok(outcome.failure?.error instanceof ConnectionError);
    assert.equal(h.calls.length, LOST_ANSWER_RESENDS + 1);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
    // 100 ms doubling up to 2 s between resends: about 9 s in all before giving up
    assert.deepEqual(h.pauses, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    assert.equal(
      h.pauses.reduce((a, b) => a + b, 0),
      9100,
    );
  });

  test('an answer that says the create was refused (422) is not sent again', async () => {
    const h = harness([apiError(422, 'Invalid')]);
    assert.equal((await h.run()).failure?.type, 'FailedScale');
    assert.deepEqual(h.calls, ['create sample-abcde']);
    assert.deepEqual(h.pending(), []);
  });
});
