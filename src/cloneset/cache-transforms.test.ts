// What the caches keep (cache-transforms.ts): nodes as metadata, foreign pods as identity + labels + owners,
// CloneSet pods with everything the planner and the in-place engine read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node, Pod, PodCondition } from '../kube/types.ts';
import { Interner, podTransform, transformNode, transformPod } from './cache-transforms.ts';
import { podCondition } from './plan/pod-predicates.ts';

const meta = {
  name: 'web-abcde',
  namespace: 'ns',
  uid: 'u1',
  resourceVersion: '7',
  generateName: 'web-',
  creationTimestamp: '2025-01-02T03:04:05Z',
  labels: { app: 'web' },
  annotations: { note: 'x' },
  finalizers: ['example.io/f'],
  managedFields: [{ manager: 'kubectl' }],
};
const spec = {
  containers: [{ name: 'main', image: 'nginx:1', env: [{ name: 'A', value: 'b' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
  nodeName: 'node-1',
  readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
  volumes: [{ name: 'kube-api-access-x', projected: {} }],
  tolerations: [{ key: 'k', operator: 'Exists' }],
  schedulerName: 'default-scheduler',
};
const status = {
  phase: 'Running' as const,
  conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-02T03:04:06Z' }],
  containerStatuses: [{ name: 'main', image: 'nginx:1', imageID: 'sha', containerID: 'c://1', ready: true, restartCount: 2, state: { running: {} }, lastState: {} }],
  podIP: '10.0.0.1',
  hostIP: '192.168.0.1',
  startTime: '2025-01-02T03:04:05Z',
  qosClass: 'BestEffort',
};
const cloneSetRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs1', controller: true };

describe('cache transforms', () => {
  test('the containers, owner references and gates of pods of one revision are stored once', () => {
    const t = podTransform(new Interner());
    const pod = (name: string, mount: string): Pod => ({
      metadata: { ...meta, name, ownerReferences: [{ ...cloneSetRef }] },
      spec: {
        ...spec,
        containers: [{ ...spec.containers[0], name: 'main', volumeMounts: [{ name: mount, mountPath: '/v' }] }],
        readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      },
      status,
    });
    const [a, b] = [t(pod('a', 'kube-api-access-1')), t(pod('b', 'kube-api-access-2'))];
    assert.equal(a.spec.containers, b.spec.containers);
    assert.equal(a.metadata.ownerReferences, b.metadata.ownerReferences);
    assert.equal(a.spec.readinessGates, b.spec.readinessGates);
    assert.ok(Object.isFrozen(a.spec.containers[0]));
    assert.notEqual(a.metadata, b.metadata);
  });

  test('an interner that is full starts over (values stay correct)', () => {
    const interner = new Interner(2);
    const values = [['x'], ['y'], ['z'], ['x']].map((v) => interner.share(v));
    assert.deepEqual(values, [['x'], ['y'], ['z'], ['x']]);
  });

  test('a node keeps its name, uid, resourceVersion and labels only', () => {
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', uid: 'n', resourceVersion: '3', labels: { zone: 'a' }, annotations: { big: 'x' } },
      spec: { podCIDR: '10.0.0.0/24' },
      status: { capacity: { cpu: '4' } },
    };
    assert.deepEqual(transformNode(node), { metadata: { name: 'n1', uid: 'n', resourceVersion: '3', labels: { zone: 'a' } } });
  });

  test('a pod that names no CloneSet keeps identity, labels, owners and deletion only', () => {
    const rsRef = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs1', controller: true };
    const pod: Pod = { metadata: { ...meta, ownerReferences: [rsRef], deletionTimestamp: '2025-01-02T03:05:00Z' }, spec, status };
    assert.deepEqual(transformPod(pod), {
      metadata: {
        name: 'web-abcde',
        namespace: 'ns',
        uid: 'u1',
        resourceVersion: '7',
        labels: { app: 'web' },
        ownerReferences: [rsRef],
        deletionTimestamp: '2025-01-02T03:05:00Z',
      },
      spec: { containers: [] },
    });
  });

  test('a CloneSet pod keeps its metadata (not managedFields), containers without volume mounts, node, gates and the status the controller reads', () => {
    const pod: Pod = { metadata: { ...meta, ownerReferences: [cloneSetRef] }, spec, status };
    const { managedFields: _m, ...keptMeta } = meta;
    assert.deepEqual(transformPod(pod), {
      metadata: { ...keptMeta, ownerReferences: [cloneSetRef] },
      spec: { containers: [{ name: 'main', image: 'nginx:1', env: [{ name: 'A', value: 'b' }] }], nodeName: 'node-1', readinessGates: spec.readinessGates },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-02T03:04:06Z' }],
        containerStatuses: [{ name: 'main', image: 'nginx:1', imageID: 'sha', containerID: 'c://1', ready: true, restartCount: 2 }],
      },
    });
  });

  test('an interner keeps its long-lived values while moments come and go, and forgets the oldest moment first', () => {
    const interner = new Interner(2, 2);
    const containers = interner.share(['main']);
    const first = interner.shareMoment(['10:00:00']);
    for (const t of ['10:00:01', '10:00:02']) interner.shareMoment([t]);
    assert.equal(interner.share(['main']), containers);
    assert.equal(interner.shareMoment(['10:00:02']), interner.shareMoment(['10:00:02']));
    assert.notEqual(interner.shareMoment(['10:00:00']), first);
  });

  describe('the status of a CloneSet pod', () => {
    const at = (s: number): string => `2025-06-01T10:00:${String(s).padStart(2, '0')}Z`;
    const cond = (type: string, s: string, t: number, extra: Record<string, unknown> = {}) => ({ type, status: s, lastProbeTime: null, lastTransitionTime: at(t), ...extra });
    const resources = { limits: { cpu: '200m' }, requests: { cpu: '100m' } };
    const imageID = 'docker.io/library/nginx@sha256:a865b50583a5cfaf02446227e1739cdea20a579697311f8ca073d68a33117344';
    /** A pod as the API server returns it once Ready, with its own container and per-pod times. */
    const ready = (name: string, readySince: number, scheduled = 0): Pod => ({
      metadata: { ...meta, name, uid: name, ownerReferences: [{ ...cloneSetRef }] },
      spec: structuredClone(spec),
      status: {
        phase: 'Running',
        observedGeneration: 1,
        conditions: [
          cond('PodReadyToStartContainers', 'True', scheduled + 1, { observedGeneration: 1 }),
          cond('Initialized', 'True', scheduled + 1),
          cond('Ready', 'True', readySince),
          cond('ContainersReady', 'True', readySince),
          cond('PodScheduled', 'True', scheduled),
          cond('InPlaceUpdateReady', 'True', scheduled + 1),
        ],
        containerStatuses: [
          {
            name: 'main',
            state: { running: { startedAt: at(readySince) } },
            lastState: {},
            ready: true,
            restartCount: 1,
            image: 'nginx:1',
            imageID,
            containerID: `containerd://${name}`,
            started: true,
            resources: structuredClone(resources),
            allocatedResources: { cpu: '100m' },
            volumeMounts: [{ name: `kube-api-access-${name}`, mountPath: '/var/run/secrets' }],
            user: { linux: { uid: 0, gid: 0 } },
          },
        ],
        hostIP: '192.168.0.1',
        podIP: `10.0.0.${readySince}`,
        startTime: at(scheduled + 1),
        qosClass: 'Burstable',
      },
    });
    /** Scheduled, not started: what a pod shows before the kubelet reports. */
    const pending = (name: string, scheduled: number): Pod => ({
      metadata: { ...meta, name, uid: name, ownerReferences: [{ ...cloneSetRef }] },
      spec: structuredClone(spec),
      status: { phase: 'Pending', conditions: [cond('PodScheduled', 'True', scheduled), cond('InPlaceUpdateReady', 'True', scheduled + 1)], qosClass: 'Burstable' },
    });

    test("a Ready pod keeps what the planner and the in-place engine read: phase, the conditions, Ready's time, the container status", () => {
      assert.deepEqual(transformPod(ready('a', 7), new Interner()).status, {
        phase: 'Running',
        conditions: [
          { type: 'PodReadyToStartContainers', status: 'True' },
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'True', lastTransitionTime: at(7) },
          { type: 'ContainersReady', status: 'True' },
          { type: 'PodScheduled', status: 'True' },
          { type: 'InPlaceUpdateReady', status: 'True' },
        ],
        containerStatuses: [{ name: 'main', image: 'nginx:1', imageID, containerID: 'containerd://a', ready: true, restartCount: 1, resources }],
      });
    });

    test("the reasons and messages the controller reads stay (InPlaceUpdateReady's reason, KruisePodReady's message); a Ready False has no time", () => {
      const p = pending('a', 0);
      const conditions = [
        cond('InPlaceUpdateReady', 'False', 3, { reason: 'StartInPlaceUpdate' }),
        cond('KruisePodReady', 'False', 3, { message: '[{"userAgent":"Lifecycle","key":"preDelete"}]' }),
        cond('Ready', 'False', 3, { reason: 'ReadinessGatesNotReady', message: 'gates' }),
      ];
      assert.deepEqual(transformPod({ ...p, status: { ...p.status, conditions } }, new Interner()).status?.conditions, [
        { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' },
        { type: 'KruisePodReady', status: 'False', message: '[{"userAgent":"Lifecycle","key":"preDelete"}]' },
        { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'gates' },
      ]);
    });

    test("Ready's time as the readers see it: since when Ready is True (unknown when null), not read while False", () => {
      const p = ready('a', 7);
      const withReady = (c: Record<string, unknown>): Pod => ({ ...p, status: { ...p.status, conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, ...c }] } });
      const since = (q: Pod) => podCondition(transformPod(q, new Interner()), 'Ready')?.lastTransitionTime;
      assert.equal(since(withReady({ lastTransitionTime: at(7) })), at(7));
      assert.equal(since(withReady({ lastTransitionTime: null })), null);
      assert.equal(since(withReady({ status: 'False', lastTransitionTime: at(7) })), undefined);
    });

    test('equal parts are stored once: conditions without times in every pod, conditions of the same second, resources', () => {
      const t = podTransform(new Interner());
      const [a, b, c] = [t(ready('a', 7, 0)), t(ready('b', 7, 1)), t(ready('c', 9, 2))];
      const conditionsOf = (p: Pod): readonly PodCondition[] => p.status?.conditions ?? [];
      const [ca, cb, cc] = [conditionsOf(a), conditionsOf(b), conditionsOf(c)];
      assert.equal(ca[0], cc[0]);
      assert.equal(ca[4], cc[4]);
      assert.equal(ca[2], cb[2]);
      assert.notEqual(ca[2], cc[2]);
      assert.equal(ca, cb);
      assert.equal(a.status?.containerStatuses?.[0]?.['resources'], c.status?.containerStatuses?.[0]?.['resources']);
      assert.notEqual(a.status?.containerStatuses, c.status?.containerStatuses);
      assert.ok(Object.isFrozen(ca[0]));
    });

    test("a pending pod's status is stored once for all the pods that show it", () => {
      const t = podTransform(new Interner());
      const [a, b] = [t(pending('a', 0)), t(pending('b', 5))];
      assert.deepEqual(a.status, {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'InPlaceUpdateReady', status: 'True' },
        ],
      });
      assert.equal(a.status, b.status);
    });

    test('without an interner nothing is shared and the status is the same', () => {
      const [a, b] = [transformPod(pending('a', 0)), transformPod(pending('b', 0))];
      assert.notEqual(a.status, b.status);
      assert.deepEqual(a.status, b.status);
    });
  });

  test('a pod that refers to a CloneSet without controlling it (an adoption candidate) is kept whole too', () => {
    const v1beta1 = { ...cloneSetRef, apiVersion: 'apps.kruise.io/v1beta1', controller: false };
    const pod: Pod = { metadata: { ...meta, ownerReferences: [v1beta1] }, spec, status };
    assert.equal(transformPod(pod).spec.containers[0]?.image, 'nginx:1');
    assert.equal(transformPod(pod).metadata.annotations?.['note'], 'x');
  });
});
