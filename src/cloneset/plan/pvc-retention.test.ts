// The PVC retention policy (docs/features.md#pvc-retention-policy; kruise#1876), pass by pass through the planner.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet } from './index.ts';
import { aCloneSet, aPvc, fixedIds, plannerConfig, readyPods, revisions, T0 } from './testing/builders.ts';

const RETAINED_BY = 'cloneset-controller.io/retained-by';

function annotated(cs: CloneSet, annotations: Record<string, string>): CloneSet {
  return { ...cs, metadata: { ...cs.metadata, annotations } };
}

/** A PVC as a release leaves it: no owner reference, labelled retained-by. */
function released(pvc: PersistentVolumeClaim, by = 'sample'): PersistentVolumeClaim {
  return { ...pvc, metadata: { ...pvc.metadata, ownerReferences: [], labels: { ...pvc.metadata.labels, [RETAINED_BY]: by } } };
}

function planOf(cs: CloneSet, pods: readonly Pod[], pvcs: readonly PersistentVolumeClaim[], retainedPvcs: readonly PersistentVolumeClaim[] = [], ...ids: string[]) {
  return planCloneSet({ cloneSet: cs, pods, pvcs, retainedPvcs, nodes: new Map(), nowMs: T0 }, revisions(cs), plannerConfig(), fixedIds(...ids));
}

const summary = (actions: readonly PlanAction[]): string[] =>
  actions.flatMap((a) => {
    switch (a.kind) {
      case 'ReleasePvc':
        return [`release ${a.pvc.name}${a.ownerRefIndex !== undefined ? ` (owner ref ${a.ownerRefIndex})` : ''}`];
      case 'AdoptPvc':
        return [`adopt ${a.pvc.name}`];
      case 'DeletePvc':
        return [`delete pvc ${a.pvc.name}`];
      case 'ReownPvc':
        return [`reown ${a.pvc.name}`];
      case 'CreatePods':
        return a.pods.map((c) => `create ${c.pod.metadata.name ?? ''} with ${c.pvcs.map((p) => p.metadata.name ?? '').join(',')}`);
      case 'DeletePods':
        return a.pods.map((d) => `delete pod ${d.pod.name} with [${d.pvcNames.join(',')}]`);
      default:
        return [];
    }
  });

describe('PVC retention policy (cloneset-controller.io/pvc-retention-when-scaled / -when-deleted)', () => {
  const base = aCloneSet('sample').replicas(2).volumeClaimTemplate('data').build();
  const pods = readyPods(base, 3);
  const pvcs = pods.map((p) =>
    aPvc(base)
      .instanceId(p.metadata.labels?.['apps.kruise.io/cloneset-instance-id'] ?? '')
      .build(),
  );
  // The deletion order scales in old0x first (same revision, state and readiness: the lowest name).
  const survivors = pods.slice(1);
  const survivorPvcs = pvcs.slice(1);
  const victimPvc = pvcs[0] as PersistentVolumeClaim;

  test('without the annotations a scale-in deletes the pod with its PVC (Kruise)', () => {
    assert.deepEqual(summary(planOf(base, pods, pvcs).actions), ['delete pod sample-old0x with [data-sample-old0x]']);
  });

  const retainScaled = annotated(base, { 'cloneset-controller.io/pvc-retention-when-scaled': 'Retain' });

  test('whenScaled=Retain, step 1: scale-in releases the PVC first, then deletes only the pod', () => {
    assert.deepEqual(summary(planOf(retainScaled, pods, pvcs).actions), ['release data-sample-old0x (owner ref 0)', 'delete pod sample-old0x with []']);
  });

  test('step 2: once released and the pod gone, nothing more is done — the PVC is never deleted', () => {
    const after = planOf(retainScaled, survivors, survivorPvcs, [released(victimPvc)]);
    assert.deepEqual(summary(after.actions), []);
  });

  test('restart half-way, pod deleted but the PVC not yet released: the next pass releases it', () => {
    assert.deepEqual(summary(planOf(retainScaled, survivors, pvcs).actions), ['release data-sample-old0x (owner ref 0)']);
  });

  test('restart half-way, PVC released but the pod not yet deleted: the pass re-adopts it and scales in again, releasing it again', () => {
    const plan = planOf(retainScaled, pods, survivorPvcs, [released(victimPvc)]);
    assert.deepEqual(summary(plan.actions), ['delete pod sample-old0x with []', 'adopt data-sample-old0x']);
  });

  test('step 3: scaling up again reuses the retained instance id, so the new pod mounts the retained PVC; the next pass re-adopts it', () => {
    const up = annotated({ ...base, spec: { ...base.spec, replicas: 3 } }, { 'cloneset-controller.io/pvc-retention-when-scaled': 'Retain' });
    const retained = released(victimPvc);
    assert.deepEqual(summary(planOf(up, survivors, survivorPvcs, [retained], 'fresh').actions), ['create sample-old0x with data-sample-old0x']);
    const adopted = planOf(up, pods, survivorPvcs, [retained]).actions.find((a) => a.kind === 'AdoptPvc');
    assert.deepEqual(adopted?.kind === 'AdoptPvc' ? adopted.ownerRef : undefined, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      name: 'sample',
      uid: base.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  test('a PVC retained from another CloneSet name, or not matching the selector, is not ours', () => {
    const foreign = released(victimPvc, 'other');
    const up = annotated({ ...base, spec: { ...base.spec, replicas: 3 } }, {});
    assert.deepEqual(summary(planOf(up, survivors, survivorPvcs, [foreign], 'fresh').actions), ['create sample-fresh with data-sample-fresh']);
  });

  const retainDeleted = annotated(aCloneSet('sample').replicas(3).volumeClaimTemplate('data').build(), { 'cloneset-controller.io/pvc-retention-when-deleted': 'Retain' });

  test('whenDeleted=Retain: new PVCs are created released, owned ones are released, none is ever owned by the CloneSet', () => {
    const plan = planOf(retainDeleted, survivors, pvcs.slice(1, 2), [], 'fresh');
    assert.deepEqual(summary(plan.actions), ['create sample-fresh with data-sample-fresh', 'release data-sample-old1x (owner ref 0)']);
    const create = plan.actions.find((a) => a.kind === 'CreatePods');
    const pvc = create?.kind === 'CreatePods' ? create.pods[0]?.pvcs[0] : undefined;
    assert.deepEqual(pvc?.metadata.ownerReferences, []);
    assert.equal(pvc?.metadata.labels?.[RETAINED_BY], 'sample');
  });

  test('whenDeleted=Retain with whenScaled=Delete: a scale-in deletes the released PVC with its pod', () => {
    const cs = annotated(base, { 'cloneset-controller.io/pvc-retention-when-deleted': 'Retain' });
    const all = pvcs.map((c) => released(c));
    assert.deepEqual(summary(planOf(cs, pods, [], all).actions), ['delete pod sample-old0x with [data-sample-old0x]']);
  });

  test('with disablePVCReuse, whenScaled=Retain releases what the clean-up would delete and hands nothing to inactive pods', () => {
    const cs = annotated({ ...base, spec: { ...base.spec, scaleStrategy: { disablePVCReuse: true } } }, { 'cloneset-controller.io/pvc-retention-when-scaled': 'Retain' });
    const orphan = aPvc(cs).instanceId('lost1').build();
    const plan = planOf(cs, survivors, [...survivorPvcs, orphan]);
    assert.deepEqual(summary(plan.actions), ['release data-sample-lost1 (owner ref 0)']);
  });
});
