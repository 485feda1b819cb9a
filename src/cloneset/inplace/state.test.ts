// docs/features.md#in-place-update (Kruise apis/apps/pub/inplace_update.go): the exact JSON of the in-place annotations (Kruise's Go struct order and omitempty rules).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeGraceSpec, decodeState, encodeGraceSpec, encodeState, readState, StateParseError, type InPlaceUpdateState } from './state.ts';
import type { UpdateSpec } from './update-spec.ts';

const NOW = '2025-01-02T03:04:05Z';

describe('apps.kruise.io/inplace-update-state', () => {
  test('after an image-only update without grace (Kruise unit test)', () => {
    const state: InPlaceUpdateState = {
      revision: 'rev_new',
      updateTimestamp: NOW,
      lastContainerStatuses: { c1: { imageID: 'image-id-xyz' } },
      updateImages: true,
      containerBatchesRecord: [{ timestamp: NOW, containers: ['c1'] }],
    };
    assert.equal(
      encodeState(state),
      `{"revision":"rev_new","updateTimestamp":"${NOW}","lastContainerStatuses":{"c1":{"imageID":"image-id-xyz"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"${NOW}","containers":["c1"]}]}`,
    );
    assert.deepEqual(decodeState(encodeState(state)), state);
  });

  test('with a grace period: lastContainerStatuses null, no batches yet', () => {
    assert.equal(
      encodeState({ revision: 'rev_new', updateTimestamp: NOW, lastContainerStatuses: null, updateImages: true }),
      `{"revision":"rev_new","updateTimestamp":"${NOW}","lastContainerStatuses":null,"updateImages":true}`,
    );
  });

  test('every field in Go struct order, map keys sorted, empty imageID as {}, empty batch as []', () => {
    const state: InPlaceUpdateState = {
      revision: 'r',
      updateTimestamp: NOW,
      lastContainerStatuses: { b: {}, a: { imageID: 'x' } },
      updateEnvFromMetadata: true,
      updateResources: true,
      updateImages: true,
      nextContainerImages: { z: 'img:2', y: 'img:1' },
      nextContainerRefMetadata: { y: { labels: { k: 'v' }, annotations: { n: 'm' } } },
      nextContainerResources: { y: { requests: { cpu: '1' }, limits: { memory: '1Gi' } } },
      preCheckBeforeNext: { containersRequiredReady: ['a', 'b'] },
      containerBatchesRecord: [{ timestamp: NOW, containers: [] }],
    };
    assert.equal(
      encodeState(state),
      '{"revision":"r","updateTimestamp":"2025-01-02T03:04:05Z","lastContainerStatuses":{"a":{"imageID":"x"},"b":{}},' +
        '"updateEnvFromMetadata":true,"updateResources":true,"updateImages":true,"nextContainerImages":{"y":"img:1","z":"img:2"},' +
        '"nextContainerRefMetadata":{"y":{"creationTimestamp":null,"labels":{"k":"v"},"annotations":{"n":"m"}}},' +
        '"nextContainerResources":{"y":{"limits":{"memory":"1Gi"},"requests":{"cpu":"1"}}},' +
        '"preCheckBeforeNext":{"containersRequiredReady":["a","b"]},"containerBatchesRecord":[{"timestamp":"2025-01-02T03:04:05Z","containers":[]}]}',
    );
    assert.deepEqual(decodeState(encodeState(state)), state);
  });

  test('unparsable values are reported, the legacy key is read', () => {
    assert.throws(() => decodeState('{"revision":1}'), StateParseError);
    assert.throws(() => decodeState('not json'), StateParseError);
    const pod = { metadata: { annotations: { 'inplace-update-state': `{"revision":"old","updateTimestamp":"${NOW}","lastContainerStatuses":null}` } }, spec: { containers: [] } };
    const read = readState(pod);
    assert.ok(read?.ok === true);
    assert.equal(read.value.revision, 'old');
  });
});

describe('apps.kruise.io/inplace-update-grace', () => {
  test('the UpdateSpec (Kruise unit test example)', () => {
    const spec: UpdateSpec = {
      revision: 'rev_new',
      containerImages: { c1: 'foo2' },
      containerRefMetadata: {},
      containerResources: {},
      updateEnvFromMetadata: false,
      graceSeconds: 3630,
    };
    assert.equal(encodeGraceSpec(spec), '{"revision":"rev_new","containerImages":{"c1":"foo2"},"graceSeconds":3630}');
    assert.deepEqual(decodeGraceSpec(encodeGraceSpec(spec)), spec);
  });

  test('metaDataPatch is the base64 of the patch bytes', () => {
    const spec: UpdateSpec = {
      revision: 'r',
      containerImages: {},
      containerRefMetadata: { c: { labels: { v: '2' } } },
      containerResources: { c: { requests: { cpu: '2' } } },
      metaDataPatch: { metadata: { labels: { a: '2', gone: null } } },
      updateEnvFromMetadata: true,
      graceSeconds: 5,
    };
    const text = encodeGraceSpec(spec);
    const b64 = Buffer.from('{"metadata":{"labels":{"a":"2","gone":null}}}').toString('base64');
    assert.equal(
      text,
      `{"revision":"r","containerRefMetadata":{"c":{"creationTimestamp":null,"labels":{"v":"2"}}},"containerResources":{"c":{"requests":{"cpu":"2"}}},"metaDataPatch":"${b64}","updateEnvFromMetadata":true,"graceSeconds":5}`,
    );
    assert.deepEqual(decodeGraceSpec(text), spec);
  });

  test('finalizer directives survive the grace annotation, keys in Go map order', () => {
    const spec: UpdateSpec = {
      revision: 'r',
      containerImages: {},
      containerRefMetadata: {},
      containerResources: {},
      metaDataPatch: { metadata: { labels: { gone: null }, '$setElementOrder/finalizers': ['a'], '$deleteFromPrimitiveList/finalizers': ['b'] } },
      updateEnvFromMetadata: false,
      graceSeconds: 5,
    };
    const text = encodeGraceSpec(spec);
    const patch = Buffer.from(String((JSON.parse(text) as { metaDataPatch?: string }).metaDataPatch), 'base64').toString('utf8');
    assert.equal(patch, '{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"],"$setElementOrder/finalizers":["a"],"labels":{"gone":null}}}');
    assert.deepEqual(decodeGraceSpec(text), spec);
  });
});
