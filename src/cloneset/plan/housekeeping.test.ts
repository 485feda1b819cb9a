// History truncation (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go) and podsToDelete truncation (docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go), decided purely.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerRevision } from '../../kube/types.ts';
import { revisionsToTruncate } from './history.ts';
import { truncatedPodsToDelete } from './pods-to-delete.ts';
import { aCloneSet, aPod } from './testing/builders.ts';

const rev = (name: string, revision: number): ControllerRevision => ({ metadata: { name }, revision });

describe('revision history truncation', () => {
  test("deletes the oldest unused revisions beyond revisionHistoryLimit, never current, update or a pod's revision", () => {
    const cs = { ...aCloneSet('sample').build() };
    const limited = { ...cs, spec: { ...cs.spec, revisionHistoryLimit: 1 } };
    const revisions = [rev('sample-r5', 5), rev('sample-r1', 1), rev('sample-r2', 2), rev('sample-r3', 3), rev('sample-r4', 4)];
    const pods = [aPod(limited).ofRevision('sample-r2').instanceId('aaaaa').build()];
    const victims = revisionsToTruncate(limited, revisions, pods, { current: 'sample-r4', update: 'sample-r5' });
    assert.deepEqual(
      victims.map((r) => r.metadata.name),
      ['sample-r1'],
    );
  });

  test('keeps everything while unused revisions are within the limit (default 10)', () => {
    const cs = aCloneSet('sample').build();
    const revisions = Array.from({ length: 12 }, (_, i) => rev(`sample-r${i}`, i));
    assert.deepEqual(revisionsToTruncate(cs, revisions, [], { current: 'sample-r10', update: 'sample-r11' }), []);
  });
});

describe('podsToDelete truncation', () => {
  test('drops names that are no longer claimed pods and keeps the others in order', () => {
    const cs = aCloneSet('sample').podsToDelete('sample-gone1', 'sample-bbbbb', 'sample-gone2').build();
    const claimed = [aPod(cs).instanceId('bbbbb').build(), aPod(cs).instanceId('ccccc').build()];
    assert.deepEqual(truncatedPodsToDelete(cs, claimed), ['sample-bbbbb']);
  });

  test('says nothing to do when every listed name still exists', () => {
    const cs = aCloneSet('sample').podsToDelete('sample-bbbbb').build();
    assert.equal(truncatedPodsToDelete(cs, [aPod(cs).instanceId('bbbbb').build()]), undefined);
  });
});
