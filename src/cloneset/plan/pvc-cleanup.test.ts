// PVC cleanup when reuse is disabled (docs/features.md#pvcs, #reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go; kruise#1099).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet } from './index.ts';
import { planPvcCleanup } from './pvc-cleanup.ts';
import { aCloneSet, aPod, aPvc, fixedIds, plannerConfig, readyPods, revisions, T0 } from './testing/builders.ts';

function noReuse(cs: CloneSet): CloneSet {
  return { ...cs, spec: { ...cs.spec, scaleStrategy: { ...cs.spec.scaleStrategy, disablePVCReuse: true } } };
}

function planOf(cs: CloneSet, pods: readonly Pod[], pvcs: readonly PersistentVolumeClaim[], ...ids: string[]) {
  return planCloneSet({ cloneSet: cs, pods, pvcs, nodes: new Map(), nowMs: T0 }, revisions(cs), plannerConfig(), fixedIds(...ids));
}

const summary = (actions: readonly PlanAction[]): string[] =>
  actions.flatMap((a) => {
    switch (a.kind) {
      case 'ReownPvc':
        return [`reown ${a.pvc.name} -> ${a.podRef?.kind ?? ''}/${a.podRef?.name ?? ''}`];
      case 'DeletePvc':
        return [`delete ${a.pvc.name}`];
      case 'CreatePods':
        return a.pods.map((c) => `create ${c.pod.metadata.name ?? ''} with ${c.pvcs.map((p) => p.metadata.name ?? '').join(',')}`);
      case 'DeletePods':
        return a.pods.map((d) => `delete pod ${d.pod.name} with ${d.pvcNames.join(',')}`);
      default:
        return [];
    }
  });

describe('PVC cleanup with scaleStrategy.disablePVCReuse (docs/features.md#pvcs)', () => {
  const base = aCloneSet('sample').replicas(2).volumeClaimTemplate('data').build();

  test('with reuse enabled (the v1alpha1 default) nothing is cleaned up and the PVC list is untouched', () => {
    const pvcs = [aPvc(base).instanceId('lost1').build(), aPvc(base).instanceId('old0x').build()];
    const r = planPvcCleanup(base, readyPods(base, 1), pvcs);
    assert.deepEqual(r.actions, []);
    assert.equal(r.pvcs, pvcs);
  });

  test('a PVC of an active pod is kept, of an inactive pod handed to the pod, of no pod (or without id) deleted', () => {
    const cs = noReuse(base);
    const failed = aPod(cs).instanceId('fail1').failed().build();
    const terminating = aPod(cs).instanceId('term1').ready().terminating().build();
    const noId = aPvc(cs).instanceId('').build();
    const pvcs = [aPvc(cs).instanceId('gone1').build(), aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('fail1').build(), noId, aPvc(cs).instanceId('term1').build()];
    const r = planPvcCleanup(cs, [...readyPods(cs, 1), failed, terminating], pvcs);
    assert.deepEqual(
      summary(r.actions),
      ['reown data-sample-fail1 -> Pod/sample-fail1', 'reown data-sample-term1 -> Pod/sample-term1', 'delete data-sample-gone1', `delete ${noId.metadata.name ?? ''}`],
      're-ownings first, then deletions, each in list order',
    );
    assert.deepEqual(
      r.pvcs.map((c) => c.metadata.name),
      ['data-sample-old0x'],
    );
    const reown = r.actions[0];
    assert.ok(reown?.kind === 'ReownPvc');
    assert.deepEqual(reown.podRef, { apiVersion: 'v1', kind: 'Pod', name: 'sample-fail1', uid: failed.metadata.uid, controller: true, blockOwnerDeletion: true });
    assert.equal(reown.ownerRefIndex, 0);
    assert.equal(reown.ownerUid, 'uid-sample');
    assert.equal(reown.pvc.uid, 'uid-data-sample-fail1');
  });

  test('a replacement for a vanished pod gets a fresh id and a fresh PVC; the old PVC is deleted in the same pass', () => {
    const cs = noReuse(base);
    const p = planOf(cs, readyPods(cs, 1), [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('lost1').build()], 'lost1', 'fresh');
    assert.equal(p.phase, 'scale');
    assert.deepEqual(summary(p.actions), ['delete data-sample-lost1', 'create sample-fresh with data-sample-fresh']);
    // with reuse, the same world reuses the id and the PVC
    const reused = planOf(base, readyPods(base, 1), [aPvc(base).instanceId('old0x').build(), aPvc(base).instanceId('lost1').build()], 'fresh');
    assert.deepEqual(summary(reused.actions), ['create sample-lost1 with data-sample-lost1']);
  });

  test('a Failed pod: its PVC goes to the pod, the replacement gets a new id, the Failed pod stays', () => {
    const cs = noReuse(base);
    const failed = aPod(cs).instanceId('fail1').failed().build();
    const p = planOf(cs, [...readyPods(cs, 1), failed], [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('fail1').build()], 'fail1', 'fresh');
    assert.deepEqual(summary(p.actions), ['reown data-sample-fail1 -> Pod/sample-fail1', 'create sample-fresh with data-sample-fresh']);
  });

  test('cleanup also runs in a pass that only updates, and while the CloneSet is being deleted', () => {
    const cs = noReuse(base);
    const pvcs = [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build(), aPvc(cs).instanceId('lost1').build()];
    const idle = planOf(cs, readyPods(cs, 2), pvcs);
    assert.deepEqual(summary(idle.actions), ['delete data-sample-lost1']);
    const deleting = noReuse(aCloneSet('sample').replicas(2).volumeClaimTemplate('data').deleting().build());
    const d = planOf(deleting, readyPods(deleting, 2), pvcs);
    assert.deepEqual(summary(d.actions), ['delete data-sample-lost1']);
  });

  test('scale-in still deletes the victim PVCs with the pod (whatever the reuse setting)', () => {
    const cs = noReuse(aCloneSet('sample').replicas(1).volumeClaimTemplate('data').build());
    const pods = readyPods(cs, 2);
    const p = planOf(cs, pods, [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build()]);
    const deletes = summary(p.actions).filter((s) => s.startsWith('delete pod'));
    assert.equal(deletes.length, 1);
    assert.match(deletes[0] ?? '', /^delete pod sample-(old\dx) with data-sample-\1$/);
  });

  test('a pod that vanishes is replaced under a new id, its PVC deleted, and the next pass has nothing left to do', () => {
    const cs = noReuse(base);
    const [kept, gone] = readyPods(cs, 2);
    assert.ok(kept !== undefined && gone !== undefined);
    const pvcs = [aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build()];
    const first = planOf(cs, [kept], pvcs, 'old1x', 'fresh');
    assert.deepEqual(summary(first.actions), ['delete data-sample-old1x', 'create sample-fresh with data-sample-fresh']);
    // The writes of the first pass, as the cache shows them afterwards: the old PVC gone, the new pod and its PVC there.
    const created = aPod(cs).instanceId('fresh').build();
    const second = planOf(
      cs,
      [kept, created],
      [pvcs[0], aPvc(cs).instanceId('fresh').build()].filter((c) => c !== undefined),
      'other',
    );
    assert.deepEqual(summary(second.actions), []);
  });
});
