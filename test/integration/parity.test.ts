// Kruise parity on a real API server: container launch priority in in-place updates (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go),
// template labels/annotations/finalizers removed from pods in place (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go), adoption of pods that
// reference the CloneSet without being controlled by it (docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/cloneset_controller.go), and pod creates refused by a ResourceQuota
// (kube-controller-manager runs the resourcequota controller): FailedCreate, FailedScale, recovery.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS, type ResourceRef } from '../../src/kube/resources.ts';
import type { Container, Pod } from '../../src/kube/types.ts';
import { activePods, eventsOf, getCloneSet, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';
import { PodWatch } from '../helpers/watch-sampler.ts';

const RESOURCE_QUOTAS: ResourceRef = { group: '', version: 'v1', plural: 'resourcequotas', namespaced: true };
const CONFIG_MAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };

interface InPlaceState {
  revision?: string;
  nextContainerImages?: Record<string, string>;
  preCheckBeforeNext?: { containersRequiredReady?: string[] };
  containerBatchesRecord?: { timestamp: string; containers: string[] }[];
}

const STATE = 'apps.kruise.io/inplace-update-state';
const stateOf = (p: Pod): InPlaceState | undefined => {
  const raw = p.metadata.annotations?.[STATE];
  return raw === undefined ? undefined : (JSON.parse(raw) as InPlaceState);
};
const imageOf = (p: Pod, c: string): string | undefined => p.spec.containers.find((x) => x.name === c)?.image;
const statusOf = (p: Pod, c: string) => p.status?.containerStatuses?.find((s) => s.name === c);

async function listRv(client: KubeClient, ns: string): Promise<string> {
  return (await client.list<Pod>(PODS, ns, { limit: 1 })).metadata.resourceVersion ?? '';
}

/** A two-container CloneSet updated in place; `priorityEnv` / `ordered` set the launch priority. */
function twoContainers(ns: string, name: string, o: { priorityEnv?: boolean; ordered?: boolean }): CloneSet {
  const cs = newCloneSet(ns, name, 1, { spec: { updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } } });
  const app: Container = { name: 'app', image: 'nginx:alpine' };
  const proxy: Container = { name: 'proxy', image: 'envoy:v1', ...(o.priorityEnv === true ? { env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] } : {}) };
  const t = cs.spec.template;
  return {
    ...cs,
    spec: {
      ...cs.spec,
      template: {
        metadata: { ...t.metadata, ...(o.ordered === true ? { annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } } : {}) },
        // Ordered: spec order is launch order, so the proxy goes first either way.
        spec: { ...t.spec, containers: o.ordered === true ? [proxy, app] : [app, proxy] },
      },
    },
  };
}

describe('Kruise parity on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'parity');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    // Pods of the removal test may still carry a test finalizer: drop them so the namespace can go.
    for (const p of (await client.list<Pod>(PODS, ns)).items) {
      if ((p.metadata.finalizers ?? []).length > 0) await client.patch(PODS, ns, p.metadata.name ?? '', { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
    }
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  for (const [form, opts] of [
    ['env KRUISE_CONTAINER_PRIORITY', { priorityEnv: true }],
    ['annotation Ordered', { ordered: true }],
  ] as const) {
    it(`launch priority (${form}): the higher-priority container is updated first, the other only once it is ready`, async () => {
      const name = form.startsWith('env') ? 'prio-env' : 'prio-ordered';
      await client.create(CLONESETS, ns, twoContainers(ns, name, opts));
      const [before] = await eventually('1 ready pod', () => readyPods(client, ns, name, 1), { timeoutMs: 90_000 });
      assert.ok(before !== undefined);
      assert.ok(
        before.spec.containers.every((c) => !JSON.stringify(c['env'] ?? []).includes('KRUISE_CONTAINER_BARRIER')),
        'nothing injected into the pod',
      );
      const watch = new PodWatch(client, ns, name, await listRv(client, ns));
      const cs = await client.get<CloneSet>(CLONESETS, ns, name);
      const containers = cs.spec.template.spec.containers.map((c) => ({ ...c, image: c.name === 'app' ? 'nginx:mainline' : 'envoy:v2' }));
      await client.patch(CLONESETS, ns, name, { spec: { template: { spec: { containers } } } }, 'merge');
      const done = await eventually(
        'both containers updated and ready',
        async () => {
          const [p] = await activePods(client, ns, name);
          const s = p === undefined ? undefined : stateOf(p);
          return p !== undefined && s?.containerBatchesRecord?.length === 2 && statusOf(p, 'app')?.ready === true && statusOf(p, 'app')?.image === 'nginx:mainline' ? p : undefined;
        },
        { timeoutMs: 90_000 },
      );
      await watch.stop();
      assert.equal(done.metadata.uid, before.metadata.uid, 'updated in place');

      // Batch 1: only the proxy, with the app waiting in the state annotation (Kruise's exact JSON).
      const firstBatch = watch.events.find((e) => imageOf(e.pod, 'proxy') === 'envoy:v2');
      assert.ok(firstBatch !== undefined, 'the proxy was never updated');
      assert.equal(imageOf(firstBatch.pod, 'app'), 'nginx:alpine', 'the app was updated together with the proxy');
      const s1 = stateOf(firstBatch.pod);
      assert.ok(s1 !== undefined);
      const proxyImageId = statusOf(before, 'proxy')?.imageID ?? '';
      const t1 = s1.containerBatchesRecord?.[0]?.timestamp ?? '';
      assert.equal(
        firstBatch.pod.metadata.annotations?.[STATE],
        `{"revision":"${s1.revision ?? ''}","updateTimestamp":"${t1}","lastContainerStatuses":{"proxy":{"imageID":"${proxyImageId}"}},"updateImages":true,` +
          `"nextContainerImages":{"app":"nginx:mainline"},"preCheckBeforeNext":{"containersRequiredReady":["proxy"]},"containerBatchesRecord":[{"timestamp":"${t1}","containers":["proxy"]}]}`,
      );
      // Batch 2 only after the kubelet reported the restarted proxy ready.
      const secondBatch = watch.events.findIndex((e) => imageOf(e.pod, 'app') === 'nginx:mainline');
      const proxyReady = watch.events.findIndex((e) => statusOf(e.pod, 'proxy')?.image === 'envoy:v2' && statusOf(e.pod, 'proxy')?.ready === true);
      assert.ok(proxyReady >= 0 && secondBatch > proxyReady, `app updated at event ${secondBatch}, proxy ready at event ${proxyReady}`);
      const final = stateOf(done);
      assert.deepEqual(
        final?.containerBatchesRecord?.map((b) => b.containers),
        [['proxy'], ['app']],
      );
      assert.equal(final?.nextContainerImages, undefined);
      assert.equal(final?.preCheckBeforeNext, undefined);
    });
  }

  it('labels, annotations and finalizers removed from the template are removed from the pods in place; foreign ones stay', async () => {
    const cs = newCloneSet(ns, 'removal', 1, { podFinalizers: ['example.com/keep', 'example.com/gone'], spec: { updateStrategy: { type: 'InPlaceIfPossible' } } });
    const template = { ...cs.spec.template, metadata: { ...cs.spec.template.metadata, labels: { app: 'removal', extra: '1' }, annotations: { note: 'x' } } };
    await client.create(CLONESETS, ns, { ...cs, spec: { ...cs.spec, template } });
    const [pod] = await eventually('1 ready pod', () => readyPods(client, ns, 'removal', 1), { timeoutMs: 90_000 });
    assert.ok(pod !== undefined);
    // What someone else put on the pod is not the template's to remove.
    await client.patch(
      PODS,
      ns,
      pod.metadata.name ?? '',
      { metadata: { labels: { theirs: 'y' }, annotations: { theirs: 'y' }, finalizers: ['example.com/keep', 'example.com/gone', 'other.io/foreign'] } },
      'merge',
    );
    await client.patch(
      CLONESETS,
      ns,
      'removal',
      [
        { op: 'remove', path: '/spec/template/metadata/labels/extra' },
        { op: 'remove', path: '/spec/template/metadata/annotations/note' },
        { op: 'replace', path: '/spec/template/metadata/finalizers', value: ['example.com/keep'] },
      ],
      'json',
    );
    const updated = await eventually(
      'the pod on the new revision',
      async () => {
        const [p] = await activePods(client, ns, 'removal');
        const c = await getCloneSet(client, ns, 'removal');
        return p !== undefined &&
          c.status !== undefined &&
          c.status.observedGeneration === c.metadata.generation &&
          p.metadata.labels?.['controller-revision-hash'] === c.status.updateRevision &&
          c.status.updatedReadyReplicas === 1
          ? p
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(updated.metadata.uid, pod.metadata.uid, 'updated in place');
    assert.equal(updated.metadata.labels?.['extra'], undefined);
    assert.equal(updated.metadata.annotations?.['note'], undefined);
    assert.deepEqual(updated.metadata.finalizers, ['example.com/keep', 'other.io/foreign']);
    assert.equal(updated.metadata.labels?.['theirs'], 'y');
    assert.equal(updated.metadata.annotations?.['theirs'], 'y');
  });

  it('adopts a pod that references the CloneSet without a controller reference, and never one owned by another controller', async () => {
    // Its own namespace, with the controller started only after the pods exist: the adoption is then the only
    // way the CloneSet can reach 2 replicas without creating 2 pods.
    const ans = await newNamespace(client, 'adopt');
    let adoptController: ControllerProcess | undefined;
    try {
      const cs = await client.create<CloneSet>(CLONESETS, ans, newCloneSet(ans, 'adopt', 2));
      const owner = await client.create<{ metadata: { uid?: string } }>(CONFIG_MAPS, ans, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other-owner' } });
      const podOf = (name: string, ownerReferences: unknown[]): Pod => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'adopt' }, ownerReferences } as Pod['metadata'],
        spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] },
      });
      const loose = await client.create<Pod>(
        PODS,
        ans,
        podOf('loose', [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'adopt', uid: cs.metadata.uid, controller: false }]),
      );
      await client.create<Pod>(
        PODS,
        ans,
        podOf('foreign', [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'other-owner', uid: owner.metadata.uid, controller: true },
          { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'adopt', uid: cs.metadata.uid, controller: false },
        ]),
      );
      adoptController = startController(ans);
      const adopted = await eventually('the loose pod adopted', async () => {
        const p = await client.get<Pod>(PODS, ans, 'loose');
        return p.metadata.ownerReferences?.some((r) => r.controller === true) === true ? p : undefined;
      });
      assert.equal(adopted.metadata.uid, loose.metadata.uid);
      assert.deepEqual(
        adopted.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]),
        [['CloneSet', 'adopt', cs.metadata.uid, true, true]],
      );
      await eventually('status.replicas 2', async () => ((await getCloneSet(client, ans, 'adopt')).status?.replicas === 2 ? true : undefined));
      // The adopted pod carries no revision label, so the rollout may replace it right after (ReCreate, as Kruise
      // does): wait for 2 controlled pods rather than reading them once at status.replicas 2.
      await eventually('2 active pods controlled by the CloneSet', async () => {
        const owned = (await activePods(client, ans, 'adopt')).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === cs.metadata.uid && r.controller === true));
        return owned.length === 2 ? true : undefined;
      });
      const foreign = await client.get<Pod>(PODS, ans, 'foreign');
      assert.deepEqual(
        foreign.metadata.ownerReferences?.map((r) => [r.kind, r.controller]),
        [
          ['ConfigMap', true],
          ['CloneSet', false],
        ],
      );
    } finally {
      await adoptController?.stop();
      await client.delete(NAMESPACES, undefined, ans).catch(() => undefined);
    }
  });

  it('a ResourceQuota refusing pod creates: FailedCreate event and FailedScale condition; once it grows, all replicas and the condition clears', async () => {
    const qns = await newNamespace(client, 'quota');
    let quotaController: ControllerProcess | undefined;
    try {
      await client.create(RESOURCE_QUOTAS, qns, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '2' } } });
      // The quota admission refuses every pod until the resourcequota controller has computed the quota's status.
      await eventually('quota status computed', async () => {
        const q = await client.get<{ status?: { hard?: Record<string, string> } }>(RESOURCE_QUOTAS, qns, 'pods');
        return q.status?.hard?.['pods'] === '2' ? true : undefined;
      });
      quotaController = startController(qns);
      await client.create(CLONESETS, qns, newCloneSet(qns, 'quota', 4));
      const event = await eventually('FailedCreate event', async () => (await eventsOf(client, qns, 'quota')).find((e) => e.reason === 'FailedCreate'));
      assert.equal(event.type, 'Warning');
      assert.match(event.message ?? '', /exceeded quota/);
      const failed = await eventually('FailedScale condition', async () => (await getCloneSet(client, qns, 'quota')).status?.conditions?.find((c) => c.type === 'FailedScale'));
      assert.equal(failed.status, 'True');
      assert.match(failed.message ?? '', /exceeded quota/);
      assert.equal((await activePods(client, qns, 'quota')).length, 2);

      await client.patch(RESOURCE_QUOTAS, qns, 'pods', { spec: { hard: { pods: '4' } } }, 'merge');
      const recovered = await eventually(
        '4 ready replicas, FailedScale gone',
        async () => {
          const c = await getCloneSet(client, qns, 'quota');
          return c.status?.readyReplicas === 4 && c.status.replicas === 4 && c.status.conditions?.some((x) => x.type === 'FailedScale') !== true ? c : undefined;
        },
        { timeoutMs: 120_000 },
      );
      assert.equal(recovered.status?.replicas, 4);
      assert.equal((await activePods(client, qns, 'quota')).length, 4);
    } finally {
      await quotaController?.stop();
      await client.delete(NAMESPACES, undefined, qns).catch(() => undefined);
    }
  });
});
