// The executor's writes to the CloneSet and its revisions (execute-cloneset.ts), planned by plan/pass.ts.
// History truncation (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go): the oldest revisions no pod uses go first; current, update and revisions that
// claimed active pods still run are never deleted, whatever revisionHistoryLimit says.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetStatus } from '../api/cloneset.ts';
import type { ControllerRevision, Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { Ports } from './ports.ts';
import type { PlanAction } from './plan/actions.ts';
import type { ResolvedRevisions } from './plan/index.ts';
import { planPassEnd } from './plan/pass.ts';
import { aCloneSet, aPod } from './plan/testing/builders.ts';
import { apiError, cloneSet as fixtureCloneSet, executorFor } from './testing/executor-fixture.ts';

async function truncateHistory(cs: CloneSet, revs: readonly ControllerRevision[], pods: readonly Pod[], revisions: ResolvedRevisions, ports: Ports): Promise<void> {
  const end = planPassEnd({ cloneSet: cs, claimed: pods, revisions, listed: revs, nowMs: 0 });
  const history = end.actions.filter((a) => a.kind === 'TruncateHistory');
  await executorFor(new FakeClock(0), ports, 'idle').run(history);
}

const rev = (name: string, revision: number): ControllerRevision =>
  ({
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: '2025-01-01T00:00:00Z' },
    revision,
  }) as ControllerRevision;

function portsRecording(deleted: string[], failOn?: string): Ports {
  const unused = (): never => {
    throw new Error('not used by truncateHistory');
  };
  return {
    revisions: {
      createRevision: unused,
      updateRevision: unused,
      getRevision: unused,
      patchRevision: unused,
      deleteRevision: async (_ns: string, name: string, _uid?: string) => {
        if (name === failOn) throw new Error('boom');
        deleted.push(name);
      },
    },
  } as unknown as Ports;
}

const withLimit = (limit: number): CloneSet => {
  const cs = aCloneSet('sample').build();
  return { ...cs, spec: { ...cs.spec, revisionHistoryLimit: limit } };
};

const resolved = (current: string, update: string): ResolvedRevisions => ({
  current: { name: current, template: { spec: { containers: [] } } },
  update: { name: update, template: { spec: { containers: [] } } },
  collisionCount: 0,
});

describe('history truncation (docs/features.md#revisions)', () => {
  const revs = [rev('sample-r1', 1), rev('sample-r2', 2), rev('sample-r3', 3), rev('sample-r4', 4), rev('sample-r5', 5)];

  test('revisionHistoryLimit 2: the live revision stays and the 2 newest others are kept', async () => {
    const cs = withLimit(2);
    const pods: Pod[] = [aPod(cs).instanceId('a1234').ofRevision('r5').ready().build()];
    const deleted: string[] = [];
    await truncateHistory(cs, revs, pods, resolved('sample-r5', 'sample-r5'), portsRecording(deleted));
    assert.deepEqual(deleted, ['sample-r1', 'sample-r2']);
  });

  test('a revision still used by a pod is live even when it is neither current nor update (limit 0)', async () => {
    const cs = withLimit(0);
    // A partitioned rollout r1 → r3 interrupted by r5: pods run r1 (current), r3 and r5 (update).
    const pods: Pod[] = ['r1', 'r3', 'r5'].map((r, i) => aPod(cs).instanceId(`p${i}xxx`).ofRevision(r).ready().build());
    const deleted: string[] = [];
    await truncateHistory(cs, revs, pods, resolved('sample-r1', 'sample-r5'), portsRecording(deleted));
    assert.deepEqual(deleted, ['sample-r2', 'sample-r4']);
  });

  test('the first failed delete stops the truncation and fails nothing', async () => {
    const cs = withLimit(0);
    const deleted: string[] = [];
    await truncateHistory(cs, revs, [], resolved('sample-r5', 'sample-r5'), portsRecording(deleted, 'sample-r2'));
    assert.deepEqual(deleted, ['sample-r1']);
  });
});

describe('revision, status and podsToDelete writes', () => {
  const status: CloneSetStatus = { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1 };
  const cs = { ...fixtureCloneSet, metadata: { ...fixtureCloneSet.metadata, resourceVersion: '10' } };
  const candidate = (data: unknown): ControllerRevision => ({ metadata: { name: 'sample-abc', namespace: 'ns' }, data, revision: 2 }) as ControllerRevision;
  const writesOf = (calls: string[]) =>
    ({
      revisions: {
        createRevision: async (_ns: string, name: string) => {
          calls.push(`create ${name}`);
          throw apiError(409, 'AlreadyExists');
        },
        getRevision: async () => candidate({ spec: { template: { spec: { containers: [{ name: 'other' }] } } } }),
      },
      cloneSets: {
        updateStatus: async (_cs: CloneSet, s: CloneSetStatus) => {
          calls.push(`status collisionCount=${s.collisionCount ?? 'none'}`);
          return { ...cs, metadata: { ...cs.metadata, resourceVersion: '11' }, status: s };
        },
      },
      pods: {
        createPod: async () => {
          calls.push('create pod');
          return {};
        },
      },
    }) as unknown as Ports;

  test('a hash collision writes the next collisionCount, expects its resourceVersion, and ends the pass before anything else', async () => {
    const calls: string[] = [];
    const e = executorFor(new FakeClock(0), writesOf(calls), 'scale');
    const create: PlanAction = {
      kind: 'CreateRevision',
      revision: candidate({ spec: { template: { spec: { containers: [{ name: 'main' }] } } } }),
      collisionStatus: { ...status, collisionCount: 1 },
    };
    const pods: PlanAction = { kind: 'CreatePods', pods: [] };
    const outcome = await e.run([create, pods]);
    assert.deepEqual(outcome, { writes: 0, ended: true, requeueAfterMs: 500 });
    assert.deepEqual(calls, ['create sample-abc', 'status collisionCount=1']);
    assert.equal(e.rvExpectations.isSatisfied('uid-cs', '10').satisfied, false, 'the next pass waits for the cache to show collisionCount');
    assert.deepEqual(e.scaleExpectations.pending('ns/sample').create, [], 'the colliding revision is not ours to wait for');
  });

  test('AlreadyExists with the same data bytes is our own earlier create: the pass goes on and waits for the revision in the cache', async () => {
    const same = candidate({ spec: { template: { spec: { containers: [{ name: 'other' }] } } } });
    const calls: string[] = [];
    const e = executorFor(new FakeClock(0), writesOf(calls), 'scale');
    const outcome = await e.run([{ kind: 'CreateRevision', revision: same, collisionStatus: { ...status, collisionCount: 1 } }]);
    assert.equal(outcome.ended, undefined);
    assert.equal(outcome.failure, undefined);
    assert.deepEqual(calls, ['create sample-abc']);
    assert.deepEqual(e.scaleExpectations.pending('ns/sample').create, ['revision/sample-abc']);
  });

  test("a status write sets the CloneSet's resourceVersion expectation; a 409 is no failure but a short requeue", async () => {
    const ok = executorFor(new FakeClock(0), writesOf([]), 'idle');
    assert.deepEqual(await ok.run([{ kind: 'UpdateStatus', status }]), { writes: 1 });
    assert.equal(ok.rvExpectations.isSatisfied('uid-cs', '10').satisfied, false);
    assert.equal(ok.rvExpectations.isSatisfied('uid-cs', '11').satisfied, true);
    const stale = executorFor(new FakeClock(0), { cloneSets: { updateStatus: async () => Promise.reject(apiError(409, 'Conflict')) } } as unknown as Ports, 'idle');
    assert.deepEqual(await stale.run([{ kind: 'UpdateStatus', status }]), { writes: 0, requeueAfterMs: 500 });
  });

  test('a podsToDelete truncation whose test failed (the user changed the list) is housekeeping: logged, requeued, no failure', async () => {
    const e = executorFor(new FakeClock(0), { cloneSets: { patchCloneSet: async () => Promise.reject(apiError(422, 'Invalid')) } } as unknown as Ports, 'idle');
    assert.deepEqual(await e.run([{ kind: 'TruncatePodsToDelete', expected: ['a', 'b'], kept: ['a'] }]), { writes: 0, requeueAfterMs: 500 });
  });
});
