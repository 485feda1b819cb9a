// The executor's pod deletes when the answer is lost (execute-scale.ts `deleteSettlingLostAnswers`): the delete
// may have landed, so the expectation stays and the same delete (uid precondition) is sent again until it has an
// answer; lowering the expectation instead would let the next pass pick a second victim.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError } from '../kube/api-error.ts';
import { FakeClock } from '../runtime/clock.ts';
import { LOST_ANSWER_RESENDS } from './execute-scale.ts';
import type { PlanAction } from './plan/actions.ts';
import type { Ports } from './ports.ts';
import { apiError, executorFor } from './testing/executor-fixture.ts';

const scaleIn: PlanAction = { kind: 'DeletePods', pods: [{ pod: { name: 'sample-abcde', uid: 'uid-p' }, pvcNames: [], cause: 'ScaleIn' }] };

type Answer = 'deleted' | 'lost' | Error;

function harness(answers: Answer[]) {
  const calls: string[] = [];
  const unexpected = async (): Promise<never> => Promise.reject(new Error('unexpected'));
  const pods: Ports['pods'] = {
    deletePod: async (_ns, name, uid) => {
      calls.push(`delete ${name} uid=${uid}`);
      const a = answers.shift() ?? 'deleted';
      if (a === 'deleted') return;
      if (a === 'lost') throw new ConnectionError('https://127.0.0.1:6443', 'DELETE /api/v1/namespaces/ns/pods/sample-abcde', new Error('socket hang up'));
      throw a;
    },
    createPod: unexpected,
    getPod: unexpected,
    patchPod: unexpected,
    patchPodStatus: unexpected,
    patchPodResize: unexpected,
  };
  const e = executorFor(new FakeClock(0), { pods }, 'scale');
  return { calls, pending: () => e.scaleExpectations.pending('ns/sample').delete, recorder: e.recorder, pauses: e.pauses, run: () => e.run([scaleIn]) };
}

describe('executor: a pod delete whose answer was lost', () => {
  test('is sent again; 404 then means the first landed: deleted, and still expected until the watch shows it', async () => {
    const h = harness(['lost', apiError(404, 'NotFound')]);
    const outcome = await h.run();
    assert.deepEqual(outcome, { writes: 1 });
    assert.deepEqual(h.calls, ['delete sample-abcde uid=uid-p', 'delete sample-abcde uid=uid-p']);
    assert.deepEqual(h.pauses, [100]);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
    assert.deepEqual(h.recorder.seen, ['Normal SuccessfulDelete: succeed to delete pod sample-abcde']);
  });

  test('is sent again; a pod already terminating with our uid answers 200 again: deleted, still expected', async () => {
    const h = harness(['lost', 'lost', 'deleted']);
    assert.deepEqual(await h.run(), { writes: 1 });
    assert.equal(h.calls.length, 3);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
  });

  test(`still no answer after ${String(LOST_ANSWER_RESENDS)} resends: the pass fails and the expectation stays (the pod may be going)`, async () => {
    const h = harness(Array.from({ length: LOST_ANSWER_RESENDS + 1 }, (): Answer => 'lost'));
    const outcome = await h.run();
    assert.ok(outcome.failure?.error instanceof ConnectionError);
    assert.equal(h.calls.length, LOST_ANSWER_RESENDS + 1);
    assert.deepEqual(h.pending(), ['pod/sample-abcde']);
  });

  test('a delete the server refused (403) certainly did not happen: the expectation is lowered and the pass fails', async () => {
    const h = harness([apiError(403, 'Forbidden')]);
    assert.equal((await h.run()).failure?.type, 'FailedScale');
    assert.deepEqual(h.pending(), []);
  });

  test('a pod gone at the first try (404) or replaced (409, uid precondition) is not a failure and not expected', async () => {
    for (const err of [apiError(404, 'NotFound'), apiError(409, 'Conflict')]) {
      const h = harness([err]);
      const outcome = await h.run();
      assert.equal(outcome.failure, undefined, err.reason);
      assert.equal(outcome.writes, 0);
      assert.deepEqual(h.pending(), [], err.reason);
    }
  });
});
