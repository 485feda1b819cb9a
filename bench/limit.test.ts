import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OWNER_API_VERSION, type CloneSet } from '../src/api/cloneset.ts';
import { benchCloneSet } from './cloneset-view.ts';
import { limitPod } from './limit.ts';

// The limit's owner as the API server answers its create: the bench CloneSet of 0 replicas, with a uid.
const owner = { ...(benchCloneSet('limit-ns', 0, undefined, 'limit') as CloneSet), metadata: { name: 'limit', namespace: 'limit-ns', uid: 'u-1' } };

describe("the limit's pods", () => {
  it("are the controller's pods: its labels, lifecycle annotation, readiness gate and owner reference", () => {
    const pod = limitPod(owner, OWNER_API_VERSION, 35);
    assert.equal(pod.metadata.name, 'limit-0000z');
    assert.deepEqual(Object.keys(pod.metadata.labels ?? {}).sort(), [
      'app',
      'apps.kruise.io/cloneset-instance-id',
      'cloneset',
      'controller-revision-hash',
      'lifecycle.apps.kruise.io/state',
      'pod-template-hash',
    ]);
    assert.equal(pod.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'PreparingNormal');
    assert.ok(pod.metadata.annotations?.['lifecycle.apps.kruise.io/timestamp']);
    assert.deepEqual(pod.spec.readinessGates, [{ conditionType: 'InPlaceUpdateReady' }]);
    assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: OWNER_API_VERSION, kind: 'CloneSet', name: 'limit', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
  });

  it('name their owner in the version the cluster serves (Kruise v1.8.2 serves v1alpha1 alone)', () => {
    const pod = limitPod(owner, 'apps.kruise.io/v1alpha1', 0);
    assert.equal(pod.metadata.ownerReferences?.[0]?.apiVersion, 'apps.kruise.io/v1alpha1');
    assert.equal(pod.metadata.ownerReferences?.[0]?.uid, 'u-1');
  });
});
