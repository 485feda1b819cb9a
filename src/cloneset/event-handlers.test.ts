// Pod updates that wake the CloneSet (event-handlers.ts changesNothingRead): every field the cached pod keeps
// counts — one test per kind of change that must still trigger, including the two Kruise's event-handler
// optimisation lost (kruise#2057, kruise#2473) — and an update that changes only what the cache drops does not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../kube/types.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import { FakeClock } from '../runtime/clock.ts';
import { ObjectStore } from '../runtime/store.ts';
import type { CloneSet } from '../api/cloneset.ts';
import { podTransform } from './cache-transforms.ts';
import { changesNothingRead, cloneSetHandlers, newPodEventCounts, podHandlers } from './event-handlers.ts';

const owner = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs1', controller: true };
const base: Pod = {
  metadata: {
    name: 'web-abcde',
    namespace: 'ns',
    uid: 'p1',
    resourceVersion: '10',
    ownerReferences: [owner],
    labels: { app: 'web', 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
    annotations: {},
    finalizers: ['example.io/hook'],
  },
  spec: { containers: [{ name: 'main', image: 'nginx:1' }], nodeName: 'n1', readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
  status: {
    phase: 'Running',
    podIP: '10.0.0.1',
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'InPlaceUpdateReady', status: 'True' },
    ],
    containerStatuses: [{ name: 'main', image: 'nginx:1', imageID: 'sha-1', ready: true, restartCount: 0, state: { running: { startedAt: 't1' } } }],
  },
};
const t = podTransform();
/** The pod as the cache holds it after `change`, with a newer resourceVersion. */
const next = (change: (p: Pod) => Pod): Pod => t(change({ ...base, metadata: { ...base.metadata, resourceVersion: '11' } }));
const status = base.status ?? {};

function triggers(name: string, change: (p: Pod) => Pod): void {
  test(name, () => assert.equal(changesNothingRead(t(base), next(change)), false));
}

describe('pod updates that wake the CloneSet', () => {
  triggers('a lifecycle state label', (p) => ({ ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, 'lifecycle.apps.kruise.io/state': 'Normal' } } }));
  triggers('a hook finalizer removed (preNormal released, kruise#2057)', (p) => ({ ...p, metadata: { ...p.metadata, finalizers: [] } }));
  triggers('an annotation (in-place update state)', (p) => ({ ...p, metadata: { ...p.metadata, annotations: { 'apps.kruise.io/inplace-update-state': '{}' } } }));
  triggers('Running → Failed (kruise#2473)', (p) => ({ ...p, status: { ...status, phase: 'Failed' } }));
  triggers('readiness (Ready False)', (p) => ({
    ...p,
    status: {
      ...status,
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'InPlaceUpdateReady', status: 'True' },
      ],
    },
  }));
  triggers('deletion', (p) => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2025-01-01T00:00:00Z' } }));
  triggers('a new imageID (in-place completion)', (p) => ({
    ...p,
    status: { ...status, containerStatuses: [{ name: 'main', image: 'nginx:2', imageID: 'sha-2', ready: true, restartCount: 1 }] },
  }));
  triggers("Ready's lastTransitionTime (minReadySeconds, availability)", (p) => ({
    ...p,
    status: {
      ...status,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:09Z' },
        { type: 'InPlaceUpdateReady', status: 'True' },
      ],
    },
  }));
  triggers("InPlaceUpdateReady's reason (an update still to come)", (p) => ({
    ...p,
    status: {
      ...status,
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'InPlaceUpdateReady', status: 'True', reason: 'StartInPlaceUpdate' },
      ],
    },
  }));
  triggers('a new containerID (runtime-containers-meta)', (p) => ({
    ...p,
    status: { ...status, containerStatuses: [{ ...(status.containerStatuses?.[0] ?? { name: 'main' }), containerID: 'containerd://2' }] },
  }));
  triggers("a container's resources (in-place resize completion)", (p) => ({
    ...p,
    status: { ...status, containerStatuses: [{ ...(status.containerStatuses?.[0] ?? { name: 'main' }), resources: { limits: { cpu: '2' } } }] },
  }));
  triggers('the resize status', (p) => ({ ...p, status: { ...status, resize: 'InProgress' } }));
  triggers('scheduling (nodeName)', (p) => ({ ...p, spec: { ...p.spec, nodeName: 'n2' } }));
  triggers('the owner reference (released)', (p) => ({ ...p, metadata: { ...p.metadata, ownerReferences: [] } }));

  test('a status update that changes only what the cache drops (pod IP, container state) wakes nothing', () => {
    const moved = next((p) => ({
      ...p,
      status: { ...status, podIP: '10.0.0.2', containerStatuses: [{ ...(status.containerStatuses?.[0] ?? { name: 'main' }), state: { running: { startedAt: 't2' } } }] },
    }));
    assert.equal(changesNothingRead(t(base), moved), true);
  });

  test("a status update that moves only times the controller does not read (InPlaceUpdateReady's, started) wakes nothing", () => {
    const moved = next((p) => ({
      ...p,
      status: {
        ...status,
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:09Z' },
        ],
        containerStatuses: [{ ...(status.containerStatuses?.[0] ?? { name: 'main' }), started: true }],
      },
    }));
    assert.equal(changesNothingRead(t(base), moved), true);
  });

  test('the pod handler enqueues its CloneSet for a change it reads and not for one it does not', () => {
    const keys: string[] = [];
    const clock = new FakeClock(0);
    const h = podHandlers(
      (k) => keys.push(k),
      new ScaleExpectations(clock, 1000),
      new ResourceVersionExpectations(clock, 1000),
      new ObjectStore<CloneSet>({ namespace: (o) => [o.metadata.namespace ?? ''] }),
    );
    h.onUpdate?.(
      t(base),
      next((p) => ({ ...p, status: { ...status, podIP: '10.0.0.9' } })),
    );
    assert.deepEqual(keys, []);
    h.onUpdate?.(
      t(base),
      next((p) => ({ ...p, status: { ...status, phase: 'Failed' } })),
    );
    assert.deepEqual(keys, ['ns/web']);
  });

  test('every pod event is counted by what it did: enqueued when it woke a CloneSet, ignored otherwise (cloneset_pod_events_total)', () => {
    const keys: string[] = [];
    const clock = new FakeClock(0);
    const counts = newPodEventCounts();
    const h = podHandlers(
      (k) => keys.push(k),
      new ScaleExpectations(clock, 1000),
      new ResourceVersionExpectations(clock, 1000),
      new ObjectStore<CloneSet>({ namespace: (o) => [o.metadata.namespace ?? ''] }),
      counts,
    );
    h.onAdd?.(t(base));
    h.onUpdate?.(
      t(base),
      next((p) => ({ ...p, status: { ...status, podIP: '10.0.0.9' } })),
    );
    h.onUpdate?.(
      t(base),
      next((p) => ({ ...p, status: { ...status, containerStatuses: [{ ...(status.containerStatuses?.[0] ?? { name: 'main' }), state: { running: { startedAt: 't2' } } }] } })),
    );
    h.onUpdate?.(
      t(base),
      next((p) => ({
        ...p,
        status: {
          ...status,
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'InPlaceUpdateReady', status: 'True' },
          ],
        },
      })),
    );
    const orphan = t({ ...base, metadata: { ...base.metadata, uid: 'p2', ownerReferences: [] } });
    h.onAdd?.(orphan); // no CloneSet selects it
    h.onDelete?.(t(base), { finalStateUnknown: false });
    assert.deepEqual(counts, { add: { enqueued: 1, ignored: 1 }, update: { enqueued: 1, ignored: 2 }, delete: { enqueued: 1, ignored: 0 } });
    assert.deepEqual(keys, ['ns/web', 'ns/web', 'ns/web']);
  });
});

describe('CloneSet updates: a change of the status only waits for the batch period, any other wakes at once', () => {
  const cloneSet: CloneSet = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'cs1', resourceVersion: '20', generation: 2, labels: { app: 'web' }, annotations: {} },
    spec: {
      replicas: 1000,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }] } },
    },
    status: { replicas: 1000, readyReplicas: 10, availableReplicas: 10, updatedReplicas: 1000, updatedReadyReplicas: 10, observedGeneration: 2 },
  };
  const woken = (old: CloneSet, cs: CloneSet): string[] => {
    const calls: string[] = [];
    cloneSetHandlers(
      (key) => calls.push(`now ${key}`),
      undefined,
      (key) => calls.push(`batched ${key}`),
    ).onUpdate?.(old, cs);
    return calls;
  };
  const rv21 = (cs: CloneSet): CloneSet => ({ ...cs, metadata: { ...cs.metadata, resourceVersion: '21' } });
  const status = cloneSet.status ?? assert.fail('the fixture has a status');

  test('a status write (readyReplicas 10 → 20) wakes the CloneSet after the batch period', () => {
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, status: { ...status, readyReplicas: 20 } })), ['batched ns/web']);
  });
  test('a spec change (replicas) wakes it at once', () => {
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, spec: { ...cloneSet.spec, replicas: 5 } })), ['now ns/web']);
  });
  test('a template change with the same replicas wakes it at once', () => {
    const template = { ...cloneSet.spec.template, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } };
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, spec: { ...cloneSet.spec, template } })), ['now ns/web']);
  });
  test('an annotation (an opt-in extension is configured by one) wakes it at once', () => {
    const metadata = { ...cloneSet.metadata, annotations: { 'cloneset-controller.io/example': 'x' } };
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, metadata })), ['now ns/web']);
  });
  test('a label change wakes it at once', () => {
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, metadata: { ...cloneSet.metadata, labels: { app: 'web', tier: 'x' } } })), ['now ns/web']);
  });
  test('the deletion (deletionTimestamp set) wakes it at once', () => {
    const metadata = { ...cloneSet.metadata, deletionTimestamp: '2026-11-28T10:00:00Z' };
    assert.deepEqual(woken(cloneSet, rv21({ ...cloneSet, metadata })), ['now ns/web']);
  });
  test('without a batched wake-up every update wakes it at once', () => {
    const calls: string[] = [];
    cloneSetHandlers((key) => calls.push(key)).onUpdate?.(cloneSet, rv21({ ...cloneSet, status: { ...status, readyReplicas: 20 } }));
    assert.deepEqual(calls, ['ns/web']);
  });
});
