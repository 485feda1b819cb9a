// docs/features.md#in-place-update, #in-place-resources (Kruise pkg/util/inplaceupdate/inplace_update.go): the pod patches — resources through pods/resize or the pod spec, when a vertical update
// marks the pod not ready, and container batches by launch priority.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS } from '../../api/well-known.ts';
import type { Container, Pod } from '../../kube/types.ts';
import { rfc3339 } from '../plan/pod-template.ts';
import { T0 } from '../plan/testing/builders.ts';
import { applyPodPatch } from './testing/apply-patch.ts';
import { inPlaceUpdatePatch, needsNotReady, type PatchContext } from './pod-patch.ts';
import { refreshInPlace } from './plan.ts';
import { decodeState } from './state.ts';
import type { UpdateSpec } from './update-spec.ts';

const ctx = (o: Partial<PatchContext> = {}): PatchContext => ({ nowMs: T0, shortHashLabel: false, verticalScaling: true, resizeSubresource: true, ...o });

function pod(containers: readonly Container[]): Pod {
  return {
    metadata: { name: 'p', uid: 'u', resourceVersion: '5', labels: { 'controller-revision-hash': 'web-r1' } },
    spec: { containers, readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
    status: { containerStatuses: containers.map((c) => ({ name: c.name, image: c.image ?? '', imageID: `id-${c.image ?? ''}`, ready: true })) },
  };
}

const spec = (o: Partial<UpdateSpec>): UpdateSpec => ({
  revision: 'web-r2',
  containerImages: {},
  containerRefMetadata: {},
  containerResources: {},
  updateEnvFromMetadata: false,
  graceSeconds: 0,
  ...o,
});
const sized: Container = { name: 'app', image: 'a:1', resources: { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '200m', memory: '1Gi' } } };

describe('resources (gate InPlaceWorkloadVerticalScaling)', () => {
  const change = spec({ containerResources: { app: { requests: { cpu: '150m', memory: '1024Mi' }, limits: { cpu: '300m' } } } });

  test('servers ≥ 1.32: only the values that differ, in a pods/resize patch; the pod patch leaves the spec alone', () => {
    const p = inPlaceUpdatePatch(pod([sized]), change, ctx());
    assert.deepEqual(p.resize, { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] } });
    assert.equal(p.patch['spec'], undefined);
    assert.equal(p.state?.updateResources, true);
  });

  test('older servers: the new values go into the pod spec', () => {
    const p = inPlaceUpdatePatch(pod([sized]), change, ctx({ resizeSubresource: false }));
    assert.equal(p.resize, undefined);
    assert.deepEqual(p.patch['spec'], { containers: [{ name: 'app', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] });
  });

  test('a vertical-only update marks the pod not ready only for a RestartContainer resize policy of a changed resource', () => {
    assert.equal(needsNotReady(pod([sized]), change, true), false);
    const restartMemory: Container = { ...sized, resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] };
    assert.equal(needsNotReady(pod([restartMemory]), change, true), false, 'memory does not change (1Gi = 1024Mi)');
    const restartCpu: Container = { ...sized, resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] };
    assert.equal(needsNotReady(pod([restartCpu]), change, true), true);
    assert.equal(needsNotReady(pod([sized]), { ...change, containerImages: { app: 'a:2' } }, true), true, 'with an image change');
    assert.equal(needsNotReady(pod([sized]), change, false), true, 'gate off');
  });
});

describe('container batches (launch priority, docs/features.md#in-place-update)', () => {
  const barrier = (p: number): unknown[] => [{ name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'x', key: `p_${p}` } } }];
  const containers: Container[] = [
    { name: 'main', image: 'm:1', env: barrier(1) },
    { name: 'sidecar', image: 's:1', env: barrier(10) },
    { name: 'plain', image: 'x:1' },
  ];
  const change = spec({ containerImages: { main: 'm:2', sidecar: 's:2', plain: 'x:2' } });

  test('without the barrier env: env KRUISE_CONTAINER_PRIORITY orders the batches the same way', () => {
    const plainPod = pod([
      { name: 'main', image: 'm:1' },
      { name: 'sidecar', image: 's:1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] },
    ]);
    const p = inPlaceUpdatePatch(plainPod, spec({ containerImages: { main: 'm:2', sidecar: 's:2' } }), ctx());
    assert.deepEqual(p.patch['spec'], { containers: [{ name: 'sidecar', image: 's:2' }] });
    assert.deepEqual(p.state?.nextContainerImages, { main: 'm:2' });
    assert.deepEqual(p.state?.preCheckBeforeNext, { containersRequiredReady: ['sidecar'] });
  });

  test('annotation Ordered: one container per batch, in spec order; env-from-metadata follows its container', () => {
    const base = pod([
      { name: 'first', image: 'f:1' },
      { name: 'second', image: 's:1' },
    ]);
    const ordered: Pod = { ...base, metadata: { ...base.metadata, annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } } };
    const change = spec({
      containerImages: { first: 'f:2', second: 's:2' },
      containerRefMetadata: { second: { labels: { version: 'v2' } } },
      updateEnvFromMetadata: true,
    });
    const p = inPlaceUpdatePatch(ordered, change, ctx());
    assert.deepEqual(p.patch['spec'], { containers: [{ name: 'first', image: 'f:2' }] });
    assert.equal((p.patch['metadata'] as { labels: Record<string, unknown> }).labels['version'], undefined, 'the label second reads waits for its batch');
    assert.deepEqual(p.state?.nextContainerImages, { second: 's:2' });
    assert.deepEqual(p.state?.nextContainerRefMetadata, { second: { labels: { version: 'v2' } } });
    assert.deepEqual(p.state?.containerBatchesRecord, [{ timestamp: rfc3339(T0), containers: ['first'] }]);
  });

  test('no priority + the highest priority first; the rest waits in the state until they are ready', () => {
    const p = inPlaceUpdatePatch(pod(containers), change, ctx());
    assert.deepEqual(p.patch['spec'], {
      containers: [
        { name: 'sidecar', image: 's:2' },
        { name: 'plain', image: 'x:2' },
      ],
    });
    assert.deepEqual(p.state?.nextContainerImages, { main: 'm:2' });
    assert.deepEqual(p.state?.preCheckBeforeNext, { containersRequiredReady: ['plain', 'sidecar'] });
    assert.deepEqual(p.state?.containerBatchesRecord, [{ timestamp: rfc3339(T0), containers: ['plain', 'sidecar'] }]);
    assert.deepEqual(p.state?.lastContainerStatuses, { plain: { imageID: 'id-x:1' }, sidecar: { imageID: 'id-s:1' } });

    // The kubelet restarts the first batch; once those containers are ready, the refresh sends the next batch.
    let updated = applyPodPatch(pod(containers), p.patch);
    const restarted = (ready: boolean): Pod => ({
      ...updated,
      status: {
        containerStatuses: updated.spec.containers.map((c) => ({ name: c.name, image: c.image ?? '', imageID: `id-${c.image ?? ''}`, ready: ready || c.name === 'main' })),
      },
    });
    const rctx = { nowMs: T0 + 5000, gates: FEATURE_GATE_DEFAULTS, resizeSubresource: true };
    updated = restarted(false);
    assert.deepEqual(refreshInPlace(updated, rctx).actions, []);
    updated = restarted(true);
    const next = refreshInPlace(updated, rctx).actions[0];
    assert.ok(next?.kind === 'UpdatePodInPlace' && next.step === 'nextBatch');
    assert.deepEqual(next.patch['spec'], { containers: [{ name: 'main', image: 'm:2' }] });
    const state = decodeState(String((next.patch['metadata'] as { annotations: Record<string, string> }).annotations['apps.kruise.io/inplace-update-state']));
    assert.equal(state.nextContainerImages, undefined);
    assert.equal(state.preCheckBeforeNext, undefined);
    assert.deepEqual(state.lastContainerStatuses, { main: { imageID: 'id-m:1' }, plain: { imageID: 'id-x:1' }, sidecar: { imageID: 'id-s:1' } });
    assert.equal(state.containerBatchesRecord?.length, 2);
  });
});

describe('template metadata removed in place (docs/features.md#in-place-update)', () => {
  test('labels, annotations and finalizers the old revision had and the new one dropped leave the pod; foreign ones stay', () => {
    const base = pod([{ name: 'app', image: 'a:1' }]);
    const before: Pod = {
      ...base,
      metadata: {
        ...base.metadata,
        labels: { ...base.metadata.labels, extra: '1', mine: 'x' },
        annotations: { note: 'x', theirs: 'y' },
        finalizers: ['example.com/keep', 'example.com/gone', 'other.io/foreign'],
      },
    };
    const change = spec({
      metaDataPatch: {
        metadata: {
          labels: { extra: null },
          annotations: { note: null },
          '$deleteFromPrimitiveList/finalizers': ['example.com/gone'],
          '$setElementOrder/finalizers': ['example.com/keep'],
        },
      },
    });
    const p = inPlaceUpdatePatch(before, change, ctx());
    const md = p.patch['metadata'] as Record<string, unknown>;
    assert.deepEqual(md['$deleteFromPrimitiveList/finalizers'], ['example.com/gone']);
    const after = applyPodPatch(before, p.patch);
    assert.equal(after.metadata.labels?.['extra'], undefined);
    assert.equal(after.metadata.labels?.['mine'], 'x');
    assert.equal(after.metadata.annotations?.['note'], undefined);
    assert.equal(after.metadata.annotations?.['theirs'], 'y');
    assert.deepEqual(after.metadata.finalizers, ['example.com/keep', 'other.io/foreign']);
  });
});
