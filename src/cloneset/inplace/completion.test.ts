// docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update_defaults.go): when an in-place update counts as done, from the container statuses (no kruise-daemon) and, when
// present, the runtime-containers-meta annotation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../api/well-known.ts';
import type { ContainerStatus, Pod } from '../../kube/types.ts';
import { ANNOTATION_RUNTIME_CONTAINERS_META, containersComplete, envFromMetadataHash, plainContainerHash, podUpdateComplete } from './completion.ts';
import { encodeState, type InPlaceUpdateState } from './state.ts';

const NOW = '2025-01-02T03:04:05Z';
const gates = (g: Partial<FeatureGates> = {}): FeatureGates => ({ ...FEATURE_GATE_DEFAULTS, ...g });

function pod(image: string, statuses: readonly ContainerStatus[], annotations: Record<string, string> = {}): Pod {
  return { metadata: { name: 'p', annotations }, spec: { containers: [{ name: 'app', image }] }, status: { containerStatuses: statuses } };
}

const state = (extra: Partial<InPlaceUpdateState> = {}): InPlaceUpdateState => ({
  revision: 'r2',
  updateTimestamp: NOW,
  lastContainerStatuses: { app: { imageID: 'sha-old' } },
  updateImages: true,
  ...extra,
});

describe('containersComplete (docs/features.md#in-place-update)', () => {
  test('the kubelet still reports the old image: not complete', () => {
    const r = containersComplete(pod('nginx:2', [{ name: 'app', image: 'nginx:1', imageID: 'sha-old' }]), state(), gates());
    assert.deepEqual(r, { complete: false, reason: 'container app imageID not changed' });
  });
  test('a new imageID: complete (even before the container is ready again)', () => {
    assert.deepEqual(containersComplete(pod('nginx:2', [{ name: 'app', image: 'nginx:2', imageID: 'sha-new', ready: false }]), state(), gates()), { complete: true });
  });
  test('same imageID but the status already names the new image (same digest): complete', () => {
    assert.deepEqual(containersComplete(pod('nginx:2', [{ name: 'app', image: 'nginx:2', imageID: 'sha-old' }]), state(), gates()), { complete: true });
  });
  test('a spec image without a tag is compared as :latest', () => {
    assert.deepEqual(containersComplete(pod('nginx', [{ name: 'app', image: 'nginx:latest', imageID: 'sha-old' }]), state(), gates()), { complete: true });
  });
  test('no status for a recorded container: not complete', () => {
    const r = containersComplete(pod('nginx:2', []), state(), gates());
    assert.equal(r.complete, false);
  });
  test('a pure label update (no recorded container) completes at once', () => {
    assert.deepEqual(containersComplete(pod('nginx:1', []), state({ lastContainerStatuses: null, updateImages: false }), gates()), { complete: true });
  });

  describe('resources (gate InPlaceWorkloadVerticalScaling)', () => {
    const sized: Pod = {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'app', image: 'i', resources: { requests: { cpu: '200m' } } }] },
      status: { containerStatuses: [{ name: 'app', image: 'i', imageID: 'x', resources: { requests: { cpu: '100m' } } }] },
    };
    const resized: Pod = { ...sized, status: { containerStatuses: [{ name: 'app', image: 'i', imageID: 'x', resources: { requests: { cpu: '0.2' } } }] } };
    const s = state({ lastContainerStatuses: null, updateImages: false, updateResources: true });
    test('not complete until the status reports the new resources', () => {
      assert.equal(containersComplete(sized, s, gates({ InPlaceWorkloadVerticalScaling: true })).complete, false);
      assert.deepEqual(containersComplete(resized, s, gates({ InPlaceWorkloadVerticalScaling: true })), { complete: true });
    });
    test('without the gate the resources are not looked at', () => {
      assert.deepEqual(containersComplete(sized, s, gates()), { complete: true });
    });
  });

  describe('runtime-containers-meta (kruise-daemon)', () => {
    const p2 = pod('nginx:2', [{ name: 'app', image: 'nginx:1', imageID: 'sha-old', containerID: 'c-1' }]);
    const meta = (hashes: Record<string, number>, containerID = 'c-1'): Pod => ({
      ...p2,
      metadata: { ...p2.metadata, annotations: { [ANNOTATION_RUNTIME_CONTAINERS_META]: JSON.stringify({ containers: [{ name: 'app', containerID, hashes }] }) } },
    });
    test('the plain hash of the running container equals the spec hash: complete', () => {
      assert.deepEqual(containersComplete(meta({ plainHash: plainContainerHash({ name: 'app', image: 'nginx:2' }) }), state(), gates()), { complete: true });
    });
    test('a different containerID falls back to the image check', () => {
      assert.equal(containersComplete(meta({ plainHash: plainContainerHash({ name: 'app', image: 'nginx:2' }) }, 'c-0'), state(), gates()).complete, false);
    });
    test('env from metadata needs the annotation and the env hash', () => {
      const s = state({ updateEnvFromMetadata: true, lastContainerStatuses: null });
      assert.equal(containersComplete(p2, s, gates()).complete, false);
      const withEnv = meta({ extractedEnvFromMetadataHash: envFromMetadataHash(p2, { name: 'app', image: 'nginx:2' }) });
      assert.deepEqual(containersComplete(withEnv, s, gates()), { complete: true });
    });
  });
});

describe('podUpdateComplete', () => {
  const done = pod('nginx:2', [{ name: 'app', image: 'nginx:2', imageID: 'sha-new' }]);
  test('no state annotation: complete', () => {
    assert.deepEqual(podUpdateComplete(done, gates()), { complete: true });
  });
  test('in the grace period: not complete', () => {
    const p = { ...done, metadata: { annotations: { 'apps.kruise.io/inplace-update-state': encodeState(state()), 'apps.kruise.io/inplace-update-grace': '{"revision":"r2"}' } } };
    assert.equal(podUpdateComplete(p, gates()).complete, false);
  });
  test('a next batch pending: not complete', () => {
    const p = { ...done, metadata: { annotations: { 'apps.kruise.io/inplace-update-state': encodeState(state({ nextContainerImages: { b: 'x' } })) } } };
    assert.deepEqual(podUpdateComplete(p, gates()), { complete: false, reason: 'existing containers to in-place update in next batches' });
  });
  test('state present and the containers updated: complete', () => {
    const p = { ...done, metadata: { annotations: { 'apps.kruise.io/inplace-update-state': encodeState(state()) } } };
    assert.deepEqual(podUpdateComplete(p, gates()), { complete: true });
  });
});
