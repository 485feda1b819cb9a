// computeStatus: counters, currentRevision, expectedUpdatedReplicas (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go) and the Progressing
// condition (docs/features.md#progress-deadline-and-conditions; Kruise pkg/controller/cloneset/cloneset_status.go), with a pinned clock.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { rfc3339 } from './pod-template.ts';
import { computeStatus, isStatusChanged, type StatusResult } from './status.ts';
import { aCloneSet, aPod, readyPods, T0 } from './testing/builders.ts';

const SEC = 1000;

function statusOf(cs: CloneSet, pods: readonly Pod[], opts: { now?: number; current?: string; update?: string } = {}): StatusResult {
  return computeStatus({
    cloneSet: cs,
    pods,
    currentRevision: `sample-${opts.current ?? 'r1'}`,
    updateRevision: `sample-${opts.update ?? 'r2'}`,
    collisionCount: 0,
    nowMs: opts.now ?? T0,
  });
}

describe('status counters (docs/features.md#status-counters)', () => {
  test('ready ignores the lifecycle, available needs Normal and minReadySeconds, updated matches the update revision', () => {
    const cs = aCloneSet('sample').replicas(4).minReadySeconds(10).build();
    const pods = [
      aPod(cs).instanceId('newok').ofRevision('r2').ready().build(), // ready, available, updated
      aPod(cs)
        .instanceId('newyg')
        .ofRevision('r2')
        .ready()
        .since(T0 - 5 * SEC)
        .build(), // ready for 5 s < 10 s
      aPod(cs).instanceId('oldpn').ofRevision('r1').ready().state('PreparingNormal').build(), // ready, not Normal
      aPod(cs).instanceId('oldnr').ofRevision('r1').running().build(), // not ready
      aPod(cs).instanceId('newip').ofRevision('r2').ready().inPlaceUpdateReady(false).build(), // gate False: not ready
      aPod(cs).instanceId('short').ofRevision('r2').shortHashLabel().ready().build(), // short-hash label still matches
    ];
    const { status, requeueAfterMs } = statusOf(cs, pods);
    assert.deepEqual(
      [status.replicas, status.readyReplicas, status.availableReplicas, status.updatedReplicas, status.updatedReadyReplicas, status.updatedAvailableReplicas],
      [6, 4, 2, 4, 3, 2],
    );
    assert.equal(status.expectedUpdatedReplicas, 4);
    assert.equal(status.labelSelector, 'app=sample');
    assert.equal(status.observedGeneration, 1);
    assert.equal(status.updateRevision, 'sample-r2');
    assert.equal(status.currentRevision, 'sample-r1');
    assert.equal(requeueAfterMs, 5 * SEC + 1, 'requeue when newyg crosses minReadySeconds');
  });

  test('expectedUpdatedReplicas = replicas − partition (percent rounds up)', () => {
    const cs = aCloneSet('sample').replicas(5).partition('40%').build();
    assert.equal(statusOf(cs, []).status.expectedUpdatedReplicas, 3);
  });

  test('expectedUpdatedReplicas stays 0 when the partition does not parse (a string without %)', () => {
    for (const bad of ['50', 'abc%', '%']) {
      const cs = aCloneSet('sample').replicas(5).partition(bad).build();
      assert.equal(statusOf(cs, []).status.expectedUpdatedReplicas, 0, bad);
    }
  });
});

describe('currentRevision (docs/features.md#status-counters)', () => {
  const cs = aCloneSet('sample').replicas(3).build();

  test('becomes the update revision once every pod is on it and the count is right, ready or not', () => {
    const pods = [...readyPods(cs, 2, 'r2'), aPod(cs).instanceId('young').ofRevision('r2').pending().build()];
    assert.equal(statusOf(cs, pods).status.currentRevision, 'sample-r2');
  });

  test('stays while one pod is still old', () => {
    assert.equal(statusOf(cs, [...readyPods(cs, 2, 'r2'), ...readyPods(cs, 1, 'r1')]).status.currentRevision, 'sample-r1');
  });

  test('stays while pods are missing, even if all present pods are updated', () => {
    assert.equal(statusOf(cs, readyPods(cs, 2, 'r2')).status.currentRevision, 'sample-r1');
  });

  test('stays while there are surplus pods (replicas above spec.replicas)', () => {
    assert.equal(statusOf(cs, readyPods(cs, 4, 'r2')).status.currentRevision, 'sample-r1');
  });
});

describe('when the status is written (docs/features.md#status-counters)', () => {
  test('a changed counter is written; a changed collisionCount alone is not', () => {
    const cs = aCloneSet('sample').replicas(1).build();
    const { status } = statusOf(cs, readyPods(cs, 1, 'r2'));
    assert.equal(isStatusChanged(status, { ...status, collisionCount: 3 }), false);
    assert.equal(isStatusChanged(status, { ...status, readyReplicas: 0 }), true);
    assert.equal(isStatusChanged(undefined, status), true);
  });
});

describe('Progressing condition (docs/features.md#progress-deadline-and-conditions), deadline 60 s, clock pinned at T0', () => {
  const progressing = (r: StatusResult): CloneSetCondition | undefined => r.status.conditions?.find((c) => c.type === 'Progressing');
  const condition = (reason: string, atMs: number, status: 'True' | 'False' = 'True'): CloneSetCondition => ({
    type: 'Progressing',
    status,
    reason,
    message: 'previous',
    lastUpdateTime: rfc3339(atMs),
    lastTransitionTime: rfc3339(atMs),
  });
  const base = () => aCloneSet('sample').replicas(3).progressDeadlineSeconds(60);
  const rollingPods = (cs: CloneSet) => [...readyPods(cs, 2, 'r1'), aPod(cs).instanceId('young').ofRevision('r2').running().build()];

  test('without progressDeadlineSeconds (or with MaxInt32) the condition is removed', () => {
    for (const cs of [
      aCloneSet('sample').replicas(3).conditions(condition('CloneSetUpdated', T0)).build(),
      aCloneSet('sample').replicas(3).progressDeadlineSeconds(2147483647).conditions(condition('CloneSetUpdated', T0)).build(),
    ]) {
      const r = statusOf(cs, rollingPods(cs));
      assert.equal(progressing(r), undefined);
      assert.equal(r.requeueAfterMs, undefined);
    }
  });

  test('case 1: all pods updated and available → True/CloneSetAvailable', () => {
    const cs = base().build();
    const r = statusOf(cs, readyPods(cs, 3, 'r2'));
    assert.deepEqual(progressing(r), {
      type: 'Progressing',
      status: 'True',
      reason: 'CloneSetAvailable',
      message: 'CloneSet is available',
      lastUpdateTime: rfc3339(T0),
      lastTransitionTime: rfc3339(T0),
    });
    assert.equal(r.requeueAfterMs, undefined);
  });

  test('case 2: paused → True/CloneSetPaused', () => {
    const cs = base().paused().build();
    assert.equal(progressing(statusOf(cs, rollingPods(cs)))?.reason, 'CloneSetPaused');
  });

  test('case 3: the updated pods the partition asks for are available → True/ProgressPartitionAvailable', () => {
    const cs = base().partition(2).build();
    const pods = [...readyPods(cs, 2, 'r1'), ...readyPods(cs, 1, 'r2')];
    const c = progressing(statusOf(cs, pods));
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'ProgressPartitionAvailable', 'CloneSet has been paused due to partition ready']);
  });

  test('case 5: a rollout starting now → True/CloneSetUpdated, requeue at the deadline + 1 s', () => {
    const cs = base().build();
    const r = statusOf(cs, rollingPods(cs));
    assert.deepEqual([progressing(r)?.status, progressing(r)?.reason, progressing(r)?.lastUpdateTime], ['True', 'CloneSetUpdated', rfc3339(T0)]);
    assert.equal(r.requeueAfterMs, 61 * SEC);
  });

  test('an existing CloneSetUpdated condition is kept as is: progress does not extend the deadline', () => {
    const cs = base()
      .conditions(condition('CloneSetUpdated', T0 - 30 * SEC))
      .build();
    const r = statusOf(cs, rollingPods(cs));
    assert.deepEqual(progressing(r), condition('CloneSetUpdated', T0 - 30 * SEC));
    assert.equal(r.requeueAfterMs, 31 * SEC);
  });

  test('with less than a second left the requeue comes 1 ms after the deadline, without the extra second', () => {
    const cs = base()
      .conditions(condition('CloneSetUpdated', T0 - 59 * SEC))
      .build();
    assert.equal(statusOf(cs, rollingPods(cs), { now: T0 + 500 }).requeueAfterMs, 501);
  });

  test('a pass on the very millisecond of the deadline is not yet past it, and comes back 1 ms later, when it is', () => {
    const cs = base()
      .conditions(condition('CloneSetUpdated', T0 - 60 * SEC))
      .build();
    const onTheDeadline = statusOf(cs, rollingPods(cs));
    assert.deepEqual([progressing(onTheDeadline)?.reason, onTheDeadline.requeueAfterMs], ['CloneSetUpdated', 1]);
    const after = statusOf(cs, rollingPods(cs), { now: T0 + 1 });
    assert.deepEqual([progressing(after)?.reason, after.requeueAfterMs], ['ProgressDeadlineExceeded', undefined]);
  });

  test('case 4: past the deadline → False/ProgressDeadlineExceeded naming the update revision, no requeue', () => {
    const cs = base()
      .conditions(condition('CloneSetUpdated', T0 - 61 * SEC))
      .build();
    const r = statusOf(cs, rollingPods(cs));
    const c = progressing(r);
    assert.deepEqual(
      [c?.status, c?.reason, c?.message, c?.lastTransitionTime],
      ['False', 'ProgressDeadlineExceeded', 'CloneSet revision sample-r2 has timed out progressing', rfc3339(T0)],
    );
    assert.equal(r.requeueAfterMs, undefined);
  });

  test('ProgressDeadlineExceeded is sticky: progress alone does not clear it, and the first message is kept', () => {
    const exceeded = { ...condition('ProgressDeadlineExceeded', T0 - 5 * SEC, 'False'), message: 'CloneSet revision sample-r0 has timed out progressing' };
    const cs = base().conditions(exceeded).build();
    assert.deepEqual(progressing(statusOf(cs, rollingPods(cs))), exceeded);
  });

  test('a new update revision (an undo, a new template) replaces ProgressDeadlineExceeded with a fresh CloneSetUpdated', () => {
    const exceeded = { ...condition('ProgressDeadlineExceeded', T0 - 5 * SEC, 'False'), message: 'CloneSet revision sample-r0 has timed out progressing' };
    const cs = base().conditions(exceeded).build();
    const observed = {
      ...cs,
      status: { ...(cs.status ?? { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 }), updateRevision: 'sample-r0' },
    };
    const r = statusOf(observed, rollingPods(observed));
    assert.deepEqual(progressing(r), {
      type: 'Progressing',
      status: 'True',
      reason: 'CloneSetUpdated',
      message: 'CloneSet is progressing due to revision changed from sample-r0 to sample-r2',
      lastUpdateTime: rfc3339(T0),
      lastTransitionTime: rfc3339(T0),
    });
    assert.equal(r.requeueAfterMs, 61 * SEC);
  });

  test('a new update revision restarts the clock of a CloneSetUpdated condition too', () => {
    const cs = base()
      .conditions(condition('CloneSetUpdated', T0 - 50 * SEC))
      .build();
    const observed = {
      ...cs,
      status: { ...(cs.status ?? { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 }), updateRevision: 'sample-r1' },
    };
    const r = statusOf(observed, rollingPods(observed));
    assert.equal(progressing(r)?.lastUpdateTime, rfc3339(T0));
    assert.equal(r.requeueAfterMs, 61 * SEC);
  });

  test('ProgressDeadlineExceeded gives way to CloneSetAvailable when the rollout completes', () => {
    const cs = base()
      .conditions(condition('ProgressDeadlineExceeded', T0 - 5 * SEC, 'False'))
      .build();
    assert.equal(progressing(statusOf(cs, readyPods(cs, 3, 'r2')))?.reason, 'CloneSetAvailable');
  });

  test('resuming after a long pause restarts the clock (the Paused reason replaced CloneSetUpdated)', () => {
    const cs = base()
      .conditions(condition('CloneSetPaused', T0 - 3_600 * SEC))
      .build();
    const r = statusOf(cs, rollingPods(cs));
    assert.equal(progressing(r)?.reason, 'CloneSetUpdated');
    assert.equal(progressing(r)?.lastUpdateTime, rfc3339(T0));
    assert.equal(r.requeueAfterMs, 61 * SEC);
  });

  test('a new rollout long after the CloneSet became available gets a fresh deadline', () => {
    const cs = base()
      .conditions(condition('CloneSetAvailable', T0 - 24 * 3_600 * SEC))
      .build();
    const r = statusOf(cs, rollingPods(cs));
    assert.equal(progressing(r)?.status, 'True');
    assert.equal(progressing(r)?.reason, 'CloneSetUpdated');
    assert.equal(r.requeueAfterMs, 61 * SEC);
  });

  test('a negative deadline times out as soon as any Progressing condition exists', () => {
    const cs = aCloneSet('sample').replicas(3).progressDeadlineSeconds(-1).conditions(condition('CloneSetAvailable', T0)).build();
    assert.equal(progressing(statusOf(cs, rollingPods(cs)))?.reason, 'ProgressDeadlineExceeded');
  });

  test('FailedScale is set once and keeps its first message', () => {
    const cs = base().build();
    const first = computeStatus({
      cloneSet: cs,
      pods: [],
      currentRevision: 'sample-r1',
      updateRevision: 'sample-r1',
      collisionCount: 0,
      nowMs: T0,
      failure: { type: 'FailedScale', message: 'quota' },
    });
    const again = computeStatus({
      cloneSet: { ...cs, status: first.status },
      pods: [],
      currentRevision: 'sample-r1',
      updateRevision: 'sample-r1',
      collisionCount: 0,
      nowMs: T0 + 60 * SEC,
      failure: { type: 'FailedScale', message: 'other' },
    });
    const failed = again.status.conditions?.filter((c) => c.type === 'FailedScale');
    assert.deepEqual(
      failed?.map((c) => [c.status, c.message, c.lastTransitionTime]),
      [['True', 'quota', rfc3339(T0)]],
    );
  });
});

describe('FailedScale / FailedUpdate recovery (beyond Kruise, whose conditions stick forever)', () => {
  const base = () => aCloneSet('sample');
  const failedTypes = (st: { conditions?: readonly { type: string }[] }): string[] => (st.conditions ?? []).map((c) => c.type).filter((t) => t.startsWith('Failed'));

  test('FailedScale stays while replicas are missing and goes once a pass without a failure sees them all', () => {
    const cs = base().replicas(2).build();
    const input = { currentRevision: 'sample-r1', updateRevision: 'sample-r1', collisionCount: 0, nowMs: T0 };
    const failed = computeStatus({ ...input, cloneSet: cs, pods: [], failure: { type: 'FailedScale', message: 'exceeded quota' } }).status;
    const stillShort = computeStatus({ ...input, cloneSet: { ...cs, status: failed }, pods: readyPods(cs, 1) }).status;
    assert.deepEqual(failedTypes(stillShort), ['FailedScale']);
    const recovered = computeStatus({ ...input, cloneSet: { ...cs, status: stillShort }, pods: readyPods(cs, 2) }).status;
    assert.deepEqual(failedTypes(recovered), []);
    assert.equal(isStatusChanged(stillShort, { ...stillShort, conditions: recovered.conditions ?? [] }), true, 'the removal is written');
  });

  test('FailedUpdate goes once every replica is on the update revision', () => {
    const cs = base().replicas(1).build();
    const input = { currentRevision: 'sample-r1', updateRevision: 'sample-r1', collisionCount: 0, nowMs: T0 };
    const failed = computeStatus({ ...input, cloneSet: cs, pods: readyPods(cs, 1), failure: { type: 'FailedUpdate', message: 'conflict' } }).status;
    assert.deepEqual(failedTypes(failed), ['FailedUpdate']);
    assert.deepEqual(failedTypes(computeStatus({ ...input, cloneSet: { ...cs, status: failed }, pods: readyPods(cs, 1) }).status), []);
  });
});

// Progressing over a whole rollout (a rollout that times out, then a new revision with a fresh deadline) is a scenario
// on the simulation: sim/scenarios.test.ts "Progressing over a whole rollout".
