// Instance ids (docs/features.md#pvcs; Kruise pkg/controller/cloneset/sync/cloneset_scale.go) and the reuse of a PVC by the replacement of a pod deleted by hand (manual, "Support PVCs").
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allocateInstanceIds } from './instance-ids.ts';
import { planCloneSet } from './index.ts';
import { aCloneSet, aPod, aPvc, fixedIds, plannerConfig, readyPods, revisions, T0 } from './testing/builders.ts';

describe('instance ids', () => {
  const cs = aCloneSet('sample').replicas(3).volumeClaimTemplate('data').build();

  test('a PVC whose pod is terminating is awaited: no id this pass, then the same id once the pod is gone', () => {
    const active = readyPods(cs, 2);
    const going = aPod(cs).instanceId('gone1').ready().terminating().build();
    const pvcs = [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build(), aPvc(cs).instanceId('gone1').build()];
    assert.deepEqual(allocateInstanceIds(1, active, [...active, going], pvcs, fixedIds('fresh')), []);
    assert.deepEqual(allocateInstanceIds(2, active, [...active, going], pvcs, fixedIds('fresh')), ['fresh'], 'other slots are filled as usual');
    assert.deepEqual(allocateInstanceIds(1, active, active, pvcs, fixedIds('fresh')), ['gone1']);
  });

  test('through the planner: a hand-deleted pod is replaced under its id with its PVC once it is gone', () => {
    const active = readyPods(cs, 2);
    const going = aPod(cs).instanceId('gone1').ready().terminating().build();
    const pvcs = [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build(), aPvc(cs).instanceId('gone1').build()];
    const plan = (pods: typeof active) => planCloneSet({ cloneSet: cs, pods, pvcs, nodes: new Map(), nowMs: T0 }, revisions(cs), plannerConfig(), fixedIds('fresh'));
    assert.deepEqual(
      plan([...active, going]).actions.filter((a) => a.kind === 'CreatePods'),
      [],
    );
    const creates = plan(active).actions.flatMap((a) => (a.kind === 'CreatePods' ? a.pods : []));
    assert.deepEqual(
      creates.map((c) => c.pod.metadata.name),
      ['sample-gone1'],
    );
  });

  test('a Failed pod keeps its id and its PVC: the replacement takes a fresh id at once', () => {
    const active = readyPods(cs, 2);
    const failed = aPod(cs).instanceId('fail1').failed().build();
    const pvcs = [aPvc(cs).instanceId('fail1').build()];
    assert.deepEqual(allocateInstanceIds(1, active, [...active, failed], pvcs, fixedIds('fail1', 'fresh')), ['fresh']);
  });

  test('a terminating pod without a PVC does not hold its replacement back', () => {
    const active = readyPods(cs, 2);
    const going = aPod(cs).instanceId('gone1').ready().terminating().build();
    assert.deepEqual(allocateInstanceIds(1, active, [...active, going], [], fixedIds('gone1', 'fresh')), ['fresh']);
  });
});
