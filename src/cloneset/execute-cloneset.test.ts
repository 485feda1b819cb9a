// The executor's writes to the CloneSet and its revisions (execute-cloneset.ts), planned by plan/pass.ts.
// History truncation (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go): the oldest revisions no pod uses go first; current, update and revisions that
// claimed active pods still run are never deleted, whatever revisionHistoryLimit says.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetStatus } from '../api/cloneset.ts';
import type { ControllerRevision, Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { Ports } from './ports.ts';
import type { ResolvedRevisions } from './plan/index.ts';
import { planPassEnd } from './plan/pass.ts';
import { aCloneSet, aPod } from './plan/testing/builders.ts';
import { apiError, cloneSet as fixtureCloneSet, executorFor } from './testing/executor-fixture.ts';

async function truncateHistory(cs: CloneSet, revs: readonly ControllerRevision[], pods: readonly Pod[], revisions: ResolvedRevisions, ports: Ports): Promise<void> {
  const end = planPassEnd({ cloneSet: cs, claimed: pods, revisions, listed: revs, nowMs: 0 });
  const history = end.actions.filter((a) => a.kind === 'TruncateHistory');
  await executorFor(new FakeClock(0), ports, 'idle').run(history);
}

const rev = (name: string, revision: number): ControllerRevision => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: '2025-01-01T00:00:00Z' },
  revision,
} as ControllerRevision);

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
