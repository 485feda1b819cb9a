// What the caches keep (cache-transforms.ts): nodes as metadata, foreign pods as identity + labels + owners,
// CloneSet pods with everything the planner and the in-place engine read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node, Pod } from '../kube/types.ts';
import { Interner, podTransform, transformNode, transformPod } from './cache-transforms.ts';

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

  test('a pod that refers to a CloneSet without controlling it (an adoption candidate) is kept whole too', () => {
    const v1beta1 = { ...cloneSetRef, apiVersion: 'apps.kruise.io/v1beta1', controller: false };
    const pod: Pod = { metadata: { ...meta, ownerReferences: [v1beta1] }, spec, status };
    assert.equal(transformPod(pod).spec.containers[0]?.image, 'nginx:1');
    assert.equal(transformPod(pod).metadata.annotations?.['note'], 'x');
  });
});
