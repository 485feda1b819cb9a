// In-place updates against the real control plane (docs/features.md#update-types, #in-place-update, #image-pre-download; Kruise pkg/controller/cloneset/sync/cloneset_update.go): the pods keep their names, uids, IPs and
// PVCs, containers restart once, the not-ready budget holds (sampled from a watch stream), the grace period
// separates the not-ready mark from the new spec, changes that cannot be applied in place recreate the pod
// (InPlaceIfPossible) or are refused with a reason (InPlaceOnly), cpu/memory are resized through pods/resize,
// and ImagePullJobs are created for the new images when that kind is served.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CLONESETS_V1BETA1, CONTROLLER_REVISIONS, CRDS, NAMESPACES, PODS, PVCS, type ResourceRef } from '../../src/kube/resources.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../src/kube/types.ts';
import { activePods as pods, controllerPassed, eventsOf, getCloneSet, isReady, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';
import { PodWatch } from '../helpers/watch-sampler.ts';

const IMAGE_PULL_JOBS: ResourceRef = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs', namespaced: true };
const GATES = '--feature-gates=InPlaceWorkloadVerticalScaling=true,PreDownloadImageForInPlaceUpdate=true';

interface Options {
  readonly type?: 'InPlaceIfPossible' | 'InPlaceOnly' | 'ReCreate';
  readonly maxUnavailable?: number | string;
  readonly maxSurge?: number | string;
  readonly grace?: number;
  readonly claims?: readonly string[];
  readonly resources?: Record<string, unknown>;
  readonly annotations?: Record<string, string>;
}

function cloneSetOf(ns: string, name: string, replicas: number, o: Options = {}): CloneSet {
  return newCloneSet(ns, name, replicas, {
    annotations: o.annotations,
    container: { name: 'main', image: 'nginx:alpine', env: [{ name: 'MODE', value: 'a' }], ...(o.resources !== undefined ? { resources: o.resources } : {}) },
    claims: o.claims,
    spec: {
      updateStrategy: {
        type: o.type ?? 'InPlaceIfPossible',
        ...(o.maxUnavailable !== undefined ? { maxUnavailable: o.maxUnavailable } : {}),
        ...(o.maxSurge !== undefined ? { maxSurge: o.maxSurge } : {}),
        ...(o.grace !== undefined ? { inPlaceUpdateStrategy: { gracePeriodSeconds: o.grace } } : {}),
      },
    },
  });
}

/** Changes fields of the template's only container (a JSON merge patch replaces lists: the whole container is sent). */
async function patchContainer(client: KubeClient, ns: string, name: string, change: Record<string, unknown>, through: ResourceRef = CLONESETS): Promise<void> {
  const cs = await client.get<CloneSet>(CLONESETS, ns, name);
  const container = { ...cs.spec.template.spec.containers[0], ...change };
  await client.patch(through, ns, name, { spec: { template: { spec: { containers: [container] } } } }, 'merge');
}

const condition = (p: Pod, type: string): string | undefined => p.status?.conditions?.find((c) => c.type === type)?.status;
const imageOf = (p: Pod): string => p.spec.containers[0]?.image ?? '';
const byName = <T extends { metadata: { name?: string } }>(list: readonly T[]): Map<string, T> => new Map(list.map((o) => [o.metadata.name ?? '', o]));

/** Waits until the CloneSet's status says every pod is on the update revision and available. */
async function rolledOut(client: KubeClient, ns: string, name: string, replicas: number, timeoutMs = 120_000): Promise<CloneSet> {
  return eventually(
    `${name}: rolled out`,
    async () => {
      const cs = await getCloneSet(client, ns, name);
      const s = cs.status;
      return s !== undefined &&
        s.observedGeneration === cs.metadata.generation &&
        s.updatedReplicas === replicas &&
        s.updatedReadyReplicas === replicas &&
        s.availableReplicas === replicas &&
        s.currentRevision === s.updateRevision
        ? cs
        : undefined;
    },
    { timeoutMs },
  );
}

async function listRv(client: KubeClient, ns: string): Promise<string> {
  return (await client.list<Pod>(PODS, ns, { limit: 1 })).metadata.resourceVersion ?? '';
}

async function warningEvent(client: KubeClient, ns: string, name: string, reason: string): Promise<{ message?: string }> {
  return eventually(`${reason} event`, async () => (await eventsOf(client, ns, name)).find((e) => e.reason === reason));
}

describe('in-place update on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;
  let crdInstalled = false;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'inplace');
    // A minimal ImagePullJob CRD, so the controller discovers the kind at start-up (docs/features.md#image-pre-download; Kruise pkg/controller/cloneset/cloneset_predownload_image.go).
    await client
      .create(CRDS, undefined, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'imagepulljobs.apps.kruise.io' },
        spec: {
          group: 'apps.kruise.io',
          names: { kind: 'ImagePullJob', listKind: 'ImagePullJobList', plural: 'imagepulljobs', singular: 'imagepulljob' },
          scope: 'Namespaced',
          versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      })
      .then(
        () => {
          crdInstalled = true;
        },
        (e: unknown) => {
          if (!(e instanceof Error && /already exists/.test(e.message))) throw e;
        },
      );
    await eventually('ImagePullJob served', async () => (await client.list(IMAGE_PULL_JOBS, ns)) ?? undefined);
    controller = startController(ns, [GATES]);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    if (crdInstalled) await client.delete(CRDS, undefined, 'imagepulljobs.apps.kruise.io').catch(() => undefined);
    client.close();
  });

  it('updates 10 pods in place: same names, uids, IPs and PVCs, one restart each, never more than maxUnavailable not ready', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'web', 10, { maxUnavailable: 2, claims: ['data'] }));
    const before = await eventually('10 ready pods', () => readyPods(client, ns, 'web', 10), { timeoutMs: 120_000 });
    const cs0 = await rolledOut(client, ns, 'web', 10);
    const pvcsBefore = byName((await client.list<PersistentVolumeClaim>(PVCS, ns, { labelSelector: 'app=web' })).items);
    assert.equal(pvcsBefore.size, 10);
    const watch = new PodWatch(client, ns, 'web', await listRv(client, ns));
    const started = Date.now();
    await patchContainer(client, ns, 'web', { image: 'nginx:mainline' });
    const cs = await rolledOut(client, ns, 'web', 10, 180_000);
    const elapsed = Date.now() - started;
    await watch.stop();
    assert.notEqual(cs.status?.updateRevision, cs0.status?.updateRevision);
    const after = await pods(client, ns, 'web');
    const old = byName(before);
    assert.equal(after.length, 10);
    for (const p of after) {
      const o = old.get(p.metadata.name ?? '');
      assert.ok(o !== undefined, `pod ${p.metadata.name ?? ''} is new`);
      assert.equal(p.metadata.uid, o.metadata.uid);
      assert.equal(p.status?.podIP, o.status?.podIP);
      assert.equal(imageOf(p), 'nginx:mainline');
      assert.equal(p.status?.containerStatuses?.[0]?.image, 'nginx:mainline');
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 1);
      assert.equal(p.metadata.labels?.['controller-revision-hash'], cs.status?.updateRevision);
      assert.equal(p.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
      assert.equal(condition(p, 'InPlaceUpdateReady'), 'True');
      const state = JSON.parse(p.metadata.annotations?.['apps.kruise.io/inplace-update-state'] ?? '{}') as {
        revision?: string;
        lastContainerStatuses?: Record<string, { imageID?: string }>;
      };
      assert.equal(state.revision, cs.status?.updateRevision);
      assert.equal(state.lastContainerStatuses?.['main']?.imageID, o.status?.containerStatuses?.[0]?.imageID);
    }
    const pvcsAfter = byName((await client.list<PersistentVolumeClaim>(PVCS, ns, { labelSelector: 'app=web' })).items);
    assert.deepEqual([...pvcsAfter.keys()].sort(), [...pvcsBefore.keys()].sort());
    for (const [name, pvc] of pvcsAfter) assert.equal(pvc.metadata.uid, pvcsBefore.get(name)?.metadata.uid);
    const maxNotReady = watch.maxNotReady(before);
    assert.ok(maxNotReady <= 2, `${maxNotReady} pods were not ready at once (maxUnavailable 2)`);
    assert.ok(maxNotReady >= 1, 'the watch saw no pod go not ready');
    assert.equal(watch.events.filter((e) => e.type === 'DELETED' || e.type === 'ADDED').length, 0, 'no pod was deleted or created');
    process.stdout.write(`# 10 pods updated in place in ${elapsed} ms, max ${maxNotReady} not ready at once\n`);
    await warningEvent(client, ns, 'web', 'SuccessfulUpdatePodInPlace');
  });

  it('gracePeriodSeconds 5: the new spec comes at least 5 s after InPlaceUpdateReady=False', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'grace', 2, { maxUnavailable: 2, grace: 5 }));
    await eventually('2 ready pods', () => readyPods(client, ns, 'grace', 2), { timeoutMs: 90_000 });
    const cs0 = await rolledOut(client, ns, 'grace', 2);
    const watch = new PodWatch(client, ns, 'grace', await listRv(client, ns));
    await patchContainer(client, ns, 'grace', { image: 'nginx:mainline' });
    const cs = await rolledOut(client, ns, 'grace', 2, 90_000);
    await watch.stop();
    const notReadyAt = new Map<string, number>();
    const relabelledAt = new Map<string, number>();
    const newSpecAt = new Map<string, number>();
    for (const e of watch.events) {
      const name = e.pod.metadata.name ?? '';
      if (!notReadyAt.has(name) && condition(e.pod, 'InPlaceUpdateReady') === 'False') notReadyAt.set(name, e.at);
      if (!relabelledAt.has(name) && e.pod.metadata.labels?.['controller-revision-hash'] === cs.status?.updateRevision) {
        relabelledAt.set(name, e.at);
        // During the grace period: new revision label, lifecycle Updating, old image, the grace annotation.
        assert.equal(imageOf(e.pod), 'nginx:alpine');
        assert.equal(e.pod.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Updating');
        const grace = JSON.parse(e.pod.metadata.annotations?.['apps.kruise.io/inplace-update-grace'] ?? '{}') as {
          revision?: string;
          graceSeconds?: number;
          containerImages?: Record<string, string>;
        };
        assert.deepEqual(grace, { revision: cs.status?.updateRevision, containerImages: { main: 'nginx:mainline' }, graceSeconds: 5 });
      }
      if (!newSpecAt.has(name) && imageOf(e.pod) === 'nginx:mainline') newSpecAt.set(name, e.at);
    }
    assert.notEqual(cs.status?.updateRevision, cs0.status?.updateRevision);
    assert.equal(newSpecAt.size, 2);
    for (const [name, at] of newSpecAt) {
      const marked = notReadyAt.get(name);
      assert.ok(marked !== undefined, `${name}: InPlaceUpdateReady=False never seen`);
      assert.ok((relabelledAt.get(name) ?? 0) >= marked, `${name}: relabelled before the not-ready mark`);
      assert.ok(at - marked >= 5000, `${name}: new spec ${at - marked} ms after InPlaceUpdateReady=False`);
    }
  });

  it('an env change under InPlaceIfPossible recreates the pods', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'envc', 2, { maxUnavailable: 1 }));
    const before = await eventually('2 ready pods', () => readyPods(client, ns, 'envc', 2), { timeoutMs: 90_000 });
    await rolledOut(client, ns, 'envc', 2);
    await patchContainer(client, ns, 'envc', { env: [{ name: 'MODE', value: 'b' }] });
    await rolledOut(client, ns, 'envc', 2, 120_000);
    const after = await pods(client, ns, 'envc');
    const oldUids = new Set(before.map((p) => p.metadata.uid));
    assert.equal(after.length, 2);
    for (const p of after) {
      assert.ok(!oldUids.has(p.metadata.uid), `${p.metadata.name ?? ''} was not recreated`);
      assert.deepEqual(p.spec.containers[0]?.['env'], [{ name: 'MODE', value: 'b' }]);
    }
  });

  it('an env change under InPlaceOnly is refused with the reason, and no pod is recreated', async () => {
    // v1alpha1 admission refuses the change itself (Kruise's rule), and InPlaceOnly with maxSurge too; v1beta1
    // admission checks neither (docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1beta1/cloneset_types.go), so the change reaches the controller through v1beta1.
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'only', 2, { type: 'InPlaceOnly', maxUnavailable: 1 }));
    const before = await eventually('2 ready pods', () => readyPods(client, ns, 'only', 2), { timeoutMs: 90_000 });
    await rolledOut(client, ns, 'only', 2);
    await assert.rejects(patchContainer(client, ns, 'only', { env: [{ name: 'MODE', value: 'b' }] }), /only allowed to update images/);
    await patchContainer(client, ns, 'only', { env: [{ name: 'MODE', value: 'b' }] }, CLONESETS_V1BETA1);
    const failed = await eventually('FailedUpdate condition', async () => {
      const c = (await getCloneSet(client, ns, 'only')).status?.conditions?.find((x) => x.type === 'FailedUpdate');
      return c?.status === 'True' ? c : undefined;
    });
    assert.match(failed.message ?? '', /InPlaceOnly but can not update in-place/);
    assert.match(failed.message ?? '', /env/);
    const event = await warningEvent(client, ns, 'only', 'FailedUpdatePodInPlace');
    assert.match(event.message ?? '', /InPlaceOnly/);
    await controllerPassed(client, ns, 'only');
    const after = await pods(client, ns, 'only');
    assert.deepEqual(after.map((p) => p.metadata.uid).sort(), before.map((p) => p.metadata.uid).sort());
    assert.ok(after.every(isReady), 'the pods stay ready');
    assert.ok(after.every((p) => p.spec.containers[0]?.['env'] !== undefined && JSON.stringify(p.spec.containers[0]['env']).includes('"a"')));
  });

  it('resizes cpu and memory in place through pods/resize, without a restart', async () => {
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'size', 2, { maxUnavailable: 1, resources }));
    const before = await eventually('2 ready pods', () => readyPods(client, ns, 'size', 2), { timeoutMs: 90_000 });
    await rolledOut(client, ns, 'size', 2);
    // KWOK does not implement resize: this loop plays the kubelet's part of reporting the resources it applied.
    const kubelet = new AbortController();
    const reporting = (async () => {
      while (!kubelet.signal.aborted) {
        for (const p of await pods(client, ns, 'size')) {
          const c = p.spec.containers[0];
          const s = p.status?.containerStatuses?.[0];
          if (c === undefined || s === undefined || JSON.stringify(s['resources']) === JSON.stringify(c.resources)) continue;
          const statuses = (p.status?.containerStatuses ?? []).map((x) => ({ ...x, resources: p.spec.containers.find((y) => y.name === x.name)?.resources }));
          await client.patch(PODS, ns, p.metadata.name ?? '', { status: { containerStatuses: statuses } }, 'strategic', { subresource: 'status' }).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      await patchContainer(client, ns, 'size', { resources: { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } } });
      await rolledOut(client, ns, 'size', 2, 90_000);
    } finally {
      kubelet.abort();
      await reporting;
    }
    const after = await pods(client, ns, 'size');
    const old = byName(before);
    for (const p of after) {
      assert.equal(p.metadata.uid, old.get(p.metadata.name ?? '')?.metadata.uid);
      assert.deepEqual(p.spec.containers[0]?.resources, { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } });
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0);
      assert.equal(p.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
    }
  });

  it('creates ImagePullJobs for the new image before updating (PreDownloadImageForInPlaceUpdate)', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'pull', 5, { maxUnavailable: 1, annotations: { 'apps.kruise.io/image-predownload-parallelism': '3' } }));
    await eventually('5 ready pods', () => readyPods(client, ns, 'pull', 5), { timeoutMs: 90_000 });
    await rolledOut(client, ns, 'pull', 5);
    await patchContainer(client, ns, 'pull', { image: 'nginx:mainline' });
    const cs = await eventually('new update revision', async () => {
      const c = await getCloneSet(client, ns, 'pull');
      return c.status?.updateRevision !== c.status?.currentRevision ? c : undefined;
    });
    const rev = cs.status?.updateRevision ?? '';
    const job = await eventually('ImagePullJob', () =>
      client.get<{ metadata: { ownerReferences?: { uid: string }[] }; spec: Record<string, unknown> }>(IMAGE_PULL_JOBS, ns, `${rev}-main`),
    );
    assert.equal(job.spec['image'], 'nginx:mainline');
    assert.equal(job.spec['parallelism'], 3);
    assert.deepEqual(job.spec['completionPolicy'], { type: 'Always', ttlSecondsAfterFinished: 600 });
    assert.equal(job.metadata.ownerReferences?.[0]?.uid, cs.metadata.uid);
    const revision = await eventually('revision labelled', async () => {
      const r = await client.get<ControllerRevision>(CONTROLLER_REVISIONS, ns, rev);
      return r.metadata.labels?.['apps.kruise.io/pre-predownload-created'] === 'true' ? r : undefined;
    });
    assert.ok(revision);
    await warningEvent(client, ns, 'pull', 'CreatedImagePullJob');
    await rolledOut(client, ns, 'pull', 5, 120_000);
    await eventually('jobs deleted after the rollout', async () => ((await client.list(IMAGE_PULL_JOBS, ns)).items.length === 0 ? true : undefined));
  });
});
