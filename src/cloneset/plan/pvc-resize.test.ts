// Growing PVCs in place (docs/features.md#pvc-resize-in-place; kruise#1670, kruise#905, kruise#1087), step by step:
// template grows → claims patched → the volume plugin reports progress → capacity reached; refusals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim, StorageClass } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { compareQuantities, planPvcResize } from './pvc-resize.ts';
import { parseQuantity } from '../../api/go-quantity.ts';
import { aCloneSet, aPvc, T0 } from './testing/builders.ts';

const classes = new Map<string, StorageClass>([
  ['expandable', { metadata: { name: 'expandable' }, allowVolumeExpansion: true }],
  ['fixed', { metadata: { name: 'fixed' }, allowVolumeExpansion: false }],
]);

function cloneSet(storage: string, opts: { annotated?: boolean; previous?: CloneSetCondition } = {}): CloneSet {
  const cs = aCloneSet('db').replicas(2).volumeClaimTemplate('data').build();
  const vct = (cs.spec.volumeClaimTemplates ?? []).map((t) => ({ ...t, spec: { ...t.spec, storageClassName: 'expandable', resources: { requests: { storage } } } }));
  return {
    ...cs,
    metadata: { ...cs.metadata, ...(opts.annotated === false ? {} : { annotations: { 'cloneset-controller.io/pvc-resize-policy': 'InPlace' } }) },
    spec: { ...cs.spec, volumeClaimTemplates: vct },
    ...(opts.previous !== undefined
      ? { status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2, conditions: [opts.previous] } }
      : {}),
  };
}

function claim(cs: CloneSet, id: string, request: string, o: { capacity?: string; className?: string; conditions?: string[] } = {}): PersistentVolumeClaim {
  const pvc = aPvc(cs).instanceId(id).build();
  return {
    ...pvc,
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: o.className ?? 'expandable', resources: { requests: { storage: request } } },
    status: {
      phase: 'Bound',
      ...(o.capacity !== undefined ? { capacity: { storage: o.capacity } } : {}),
      ...(o.conditions !== undefined ? { conditions: o.conditions.map((type) => ({ type, status: 'True' })) } : {}),
    },
  };
}

const resizes = (actions: readonly PlanAction[]): string[] => actions.flatMap((a) => (a.kind === 'ResizePvc' ? [`${a.pvc.name} ${a.from}->${a.to}`] : []));

describe('in-place PVC resize (cloneset-controller.io/pvc-resize-policy: InPlace)', () => {
  test('quantities compare exactly across units', () => {
    assert.equal(compareQuantities(parseQuantity('2Gi'), parseQuantity('2048Mi')), 0);
    assert.equal(compareQuantities(parseQuantity('1G'), parseQuantity('1Gi')), -1);
    assert.equal(compareQuantities(parseQuantity('1.5Gi'), parseQuantity('1Gi')), 1);
  });

  test('without the annotation a grown template changes nothing (Kruise: only new pods get the size)', () => {
    const cs = cloneSet('2Gi', { annotated: false });
    const r = planPvcResize(cs, [claim(cs, 'aaaaa', '1Gi', { capacity: '1Gi' })], classes, T0);
    assert.deepEqual(r.actions, []);
    assert.equal(r.condition, undefined);
  });

  test('step 1: the template grows from 1Gi to 2Gi → each claim of an expandable class is patched, the condition says Resizing', () => {
    const cs = cloneSet('2Gi');
    const r = planPvcResize(cs, [claim(cs, 'aaaaa', '1Gi', { capacity: '1Gi' }), claim(cs, 'bbbbb', '1Gi', { capacity: '1Gi' })], classes, T0);
    assert.deepEqual(resizes(r.actions), ['data-db-aaaaa 1Gi->2Gi', 'data-db-bbbbb 1Gi->2Gi']);
    assert.equal(r.condition?.reason, 'Resizing');
    assert.equal(r.condition?.status, 'False');
    assert.equal(r.condition?.message, '0 of 2 PVCs have the requested size; data-db-aaaaa: 1Gi → 2Gi requested; data-db-bbbbb: 1Gi → 2Gi requested');
    assert.equal(r.requeueAfterMs, 5000);
  });

  test('restart half-way (one claim patched, one not): only the other one is patched', () => {
    const cs = cloneSet('2Gi');
    const r = planPvcResize(cs, [claim(cs, 'aaaaa', '2Gi', { capacity: '1Gi' }), claim(cs, 'bbbbb', '1Gi', { capacity: '1Gi' })], classes, T0);
    assert.deepEqual(resizes(r.actions), ['data-db-bbbbb 1Gi->2Gi']);
  });

  test("step 2: requests met, the volume plugin still working → no write; the claims' conditions show in the message", () => {
    const cs = cloneSet('2Gi');
    const r = planPvcResize(
      cs,
      [claim(cs, 'aaaaa', '2Gi', { capacity: '1Gi', conditions: ['FileSystemResizePending'] }), claim(cs, 'bbbbb', '2Gi', { capacity: '1Gi', conditions: ['Resizing'] })],
      classes,
      T0,
    );
    assert.deepEqual(r.actions, []);
    assert.equal(
      r.condition?.message,
      '0 of 2 PVCs have the requested size; data-db-aaaaa: capacity 1Gi of 2Gi (FileSystemResizePending); data-db-bbbbb: capacity 1Gi of 2Gi (Resizing)',
    );
  });

  test('step 3: status.capacity reached on every claim → PVCResize True/Resized and one PVCResized event', () => {
    const cs = cloneSet('2Gi', { previous: { type: 'PVCResize', status: 'False', reason: 'Resizing', message: 'x' } });
    const r = planPvcResize(cs, [claim(cs, 'aaaaa', '2Gi', { capacity: '2Gi' }), claim(cs, 'bbbbb', '2Gi', { capacity: '2048Mi' })], classes, T0);
    assert.deepEqual(r.actions, []);
    assert.deepEqual([r.condition?.status, r.condition?.reason, r.condition?.message], ['True', 'Resized', 'all 2 PVCs have the size their template asks for']);
    assert.deepEqual(r.events, [{ type: 'Normal', reason: 'PVCResized', message: 'all 2 PVCs have the size their template asks for' }]);
    assert.equal(r.requeueAfterMs, undefined);
  });

  test('a shrink is refused with a Warning event and a condition, never by deleting anything; told once', () => {
    const cs = cloneSet('1Gi');
    const pvcs = [claim(cs, 'aaaaa', '2Gi', { capacity: '2Gi' })];
    const r = planPvcResize(cs, pvcs, classes, T0);
    const why = 'data-db-aaaaa: the template asks for 1Gi, less than its 2Gi (a PVC cannot shrink; nothing is deleted)';
    assert.deepEqual(r.actions, []);
    assert.deepEqual([r.condition?.status, r.condition?.reason, r.condition?.message], ['False', 'ResizeRefused', why]);
    assert.deepEqual(r.events, [{ type: 'Warning', reason: 'PVCResizeRefused', message: why }]);
    const again = planPvcResize(
      {
        ...cs,
        status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, conditions: r.condition !== undefined ? [r.condition] : [] },
      },
      pvcs,
      classes,
      T0 + 1000,
    );
    assert.deepEqual(again.events, []);
  });

  test('a class without allowVolumeExpansion (or unknown) is refused', () => {
    const cs = cloneSet('2Gi');
    const r = planPvcResize(cs, [claim(cs, 'aaaaa', '1Gi', { className: 'fixed' }), claim(cs, 'bbbbb', '1Gi', { className: 'gone' })], classes, T0);
    assert.deepEqual(r.actions, []);
    assert.equal(
      r.condition?.message,
      'data-db-aaaaa: StorageClass "fixed" does not allow volume expansion (allowVolumeExpansion); data-db-bbbbb: StorageClass "gone" is not known',
    );
  });
});
