// Conversion through the real API server: objects are stored as v1beta1 in Kruise's shape, and what Kruise's mapping
// changes on the way back (here an empty in-place strategy; pre-download fields that come back as annotations) is
// as it was when the object is read through the version it was written in.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { CloneSetV1beta1 } from '../../src/api/cloneset-v1beta1.ts';
import { ANNOTATION_LOST_FIELDS } from '../../src/api/conversion.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CLONESETS_V1BETA1, NAMESPACES } from '../../src/kube/resources.ts';
import { newCloneSet } from '../helpers/cloneset.ts';
import { newNamespace, testClient } from '../helpers/kube.ts';

describe('CloneSet conversion through the API server', () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'conversion');
  });
  after(async () => {
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('stores a v1alpha1 object in Kruise v1beta1 shape and reads it back through v1alpha1 as written', async () => {
    const written = newCloneSet(ns, 'web', 0, {
      spec: {
        updateStrategy: { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: '20%', maxSurge: 0, inPlaceUpdateStrategy: {} },
      },
    });
    await client.create<CloneSet>(CLONESETS, ns, written);
    const stored = await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'web');
    assert.deepEqual(stored.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 1, maxUnavailable: '20%', maxSurge: 0, inPlaceUpdateStrategy: {} },
    });
    assert.deepEqual(stored.spec.scaleStrategy, { enablePVCReuse: true });
    assert.ok(stored.metadata.annotations?.[ANNOTATION_LOST_FIELDS] !== undefined, 'what the way back loses is remembered');

    const read = await client.get<CloneSet>(CLONESETS, ns, 'web');
    assert.deepEqual(read.spec.updateStrategy, written.spec.updateStrategy, 'Kruise would drop inPlaceUpdateStrategy: {}');
    assert.equal(read.metadata.annotations?.[ANNOTATION_LOST_FIELDS], undefined, 'the v1alpha1 reader does not see the annotation');
  });

  it('pre-download fields written through v1beta1 stay fields, without annotations, after a write through v1alpha1', async () => {
    const strategy = {
      podUpdatePolicy: 'InPlaceIfPossible',
      partition: 0,
      maxUnavailable: '20%',
      maxSurge: 0,
      inPlaceUpdateStrategy: { imagePreDownloadParallelism: 3, imagePreDownloadTimeoutSeconds: 60 },
    } as const;
    await client.create<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'pull', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'pull' } },
        template: { metadata: { labels: { app: 'pull' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: strategy },
      },
    });
    const alpha = await client.get<CloneSet>(CLONESETS, ns, 'pull');
    assert.equal(
      alpha.metadata.annotations?.['apps.kruise.io/image-predownload-parallelism'],
      '3',
      'v1alpha1 shows them as the annotations (docs/features.md#v1beta1-and-conversion)',
    );
    assert.equal(alpha.metadata.annotations?.['apps.kruise.io/image-predownload-timeout-seconds'], '60');
    // A v1alpha1 client changes something else (a label) and writes the whole object back.
    await client.update(CLONESETS, ns, 'pull', { ...alpha, metadata: { ...alpha.metadata, labels: { team: 'a' } } });
    const stored = await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'pull');
    assert.equal(stored.metadata.labels?.['team'], 'a');
    assert.deepEqual(stored.spec.updateStrategy?.rollingUpdate?.inPlaceUpdateStrategy, strategy.inPlaceUpdateStrategy);
    const left = Object.keys(stored.metadata.annotations ?? {}).filter((k) => k.startsWith('apps.kruise.io/image-predownload'));
    assert.deepEqual(left, [], 'Kruise would keep the annotations on the stored object');
  });
});
