// Readiness beside a long scale-up (plan/index.ts `planReadinessBesideScaleUp`): while a pass is still creating,
// the pods that only wait for their InPlaceUpdateReady write get exactly the write the next pass would make.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../kube/types.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet, planReadinessBesideScaleUp, type Snapshot } from './index.ts';
import { aCloneSet, aPod, plannerConfig, revisions, sequentialIds, T0 } from './testing/builders.ts';

const snapshot = (cloneSet: CloneSet, pods: readonly Pod[]): Snapshot => ({ cloneSet, pods, pvcs: [], nodes: new Map(), nowMs: T0 });
const beside = (cs: CloneSet, pods: readonly Pod[]): readonly PlanAction[] => planReadinessBesideScaleUp(snapshot(cs, pods), revisions(cs), plannerConfig());
const described = (actions: readonly PlanAction[]): string[] =>
  actions.map((a) => (a.kind === 'SetInPlaceUpdateReady' ? `${a.pod.name}: InPlaceUpdateReady${a.lifecycle === undefined ? '' : ` + ${a.lifecycle.state}`}` : `${a.kind}`));

describe('readiness beside a long scale-up (docs/features.md#reconcile-pass)', () => {
  const cs = aCloneSet('sample').replicas(300).build();
  const fresh = (name: string) => aPod(cs).named(name).uid(`uid-${name}`).pending().state('PreparingNormal').inPlaceUpdateReady(undefined);

  test('a scheduled new pod gets its InPlaceUpdateReady and Normal in one write; an unscheduled one waits', () => {
    const pods = [fresh('sample-a').onNode('node-1').build(), fresh('sample-b').build(), fresh('sample-c').onNode('node-2').build()];
    assert.deepEqual(described(beside(cs, pods)), ['sample-a: InPlaceUpdateReady + Normal', 'sample-c: InPlaceUpdateReady + Normal']);
  });

  test('the writes are the ones the next pass would make once the scale-up is done', () => {
    const pods = [fresh('sample-a').onNode('node-1').build(), fresh('sample-b').build(), fresh('sample-c').onNode('node-2').build()];
    const cs3 = aCloneSet('sample').replicas(3).build();
    const nextPass = planCloneSet(snapshot(cs3, pods), revisions(cs3), plannerConfig(), sequentialIds()).actions;
    assert.deepEqual(described(beside(cs3, pods)), described(nextPass));
  });

  test('a pod already Ready, one with another refresh write, and one the in-place engine touched are left to the next pass', () => {
    const pods = [
      aPod(cs).named('sample-ready').onNode('node-1').running().ready().build(),
      fresh('sample-nohash').onNode('node-1').withoutLabel('pod-template-hash').build(),
      aPod(cs).named('sample-touched').onNode('node-1').running().inPlaceUpdateReady(false).build(),
    ];
    assert.deepEqual(beside(cs, pods), []);
    // …while the next pass does write their readiness (so it is the rule above that holds them back)
    const cs3 = aCloneSet('sample').replicas(3).build();
    const nextPass = planCloneSet(snapshot(cs3, pods), revisions(cs3), plannerConfig(), sequentialIds()).actions;
    assert.deepEqual(
      nextPass.filter((a) => a.kind === 'SetInPlaceUpdateReady').map((a) => ('pod' in a ? a.pod.name : '')),
      ['sample-nohash', 'sample-touched'],
    );
  });

  test('pods of another controller are not written', () => {
    assert.deepEqual(beside(cs, [fresh('sample-foreign').onNode('node-1').ownedBy('someone-else').build()]), []);
  });
});
