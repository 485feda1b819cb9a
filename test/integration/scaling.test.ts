// Scaling against the real control plane (docs/features.md#scaling, #expectations; Kruise pkg/controller/cloneset/core/cloneset_core.go): per-pod PVCs and their reuse or cleanup, selective
// deletion (podsToDelete, specified-delete label, deletion cost), scale-up rate limiting, the short-hash gate and
// Failed pods. Each `it` asserts what a user can observe: pods, names, labels, PVCs and their owners, status.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetSpec } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS, PVCS } from '../../src/kube/resources.ts';
import type { PersistentVolumeClaim, Pod } from '../../src/kube/types.ts';
import { isPodAvailable } from '../../src/cloneset/plan/pod-predicates.ts';
import { rankPodsForDeletion } from '../../src/cloneset/plan/pod-ranking.ts';
import { activePods, allPods, eventsOf, getCloneSet, isActive, isReady, names, newCloneSet, pvcsOf } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';
import { PodWatch } from '../helpers/watch-sampler.ts';

const ID = 'apps.kruise.io/cloneset-instance-id';

type Options = Pick<CloneSetSpec, 'scaleStrategy' | 'minReadySeconds'> & { readonly claims?: readonly string[] };

function cloneSetOf(ns: string, name: string, replicas: number, o: Options = {}): CloneSet {
  const { claims, ...spec } = o;
  return newCloneSet(ns, name, replicas, { claims, spec });
}

const idOf = (o: Pod | PersistentVolumeClaim): string => o.metadata.labels?.[ID] ?? '';

/** `n` active pods, all Ready, lifecycle Normal and counted by the status: a settled CloneSet. */
async function settled(client: KubeClient, ns: string, name: string, n: number, timeoutMs = 90_000): Promise<Pod[]> {
  return eventually(
    `${n} settled pods of ${name}`,
    async () => {
      const pods = await activePods(client, ns, name);
      if (pods.length !== n || !pods.every(isReady)) return undefined;
      if (!pods.every((p) => p.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'Normal')) return undefined;
      const s = (await getCloneSet(client, ns, name)).status;
      return s?.replicas === n && s.readyReplicas === n ? pods : undefined;
    },
    { timeoutMs },
  );
}

describe('scaling on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'scaling');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('volumeClaimTemplates: one PVC per template per pod, labelled and owned by the CloneSet, mounted by the pod; GC cascades them with the CloneSet', async () => {
    const cs = await client.create<CloneSet>(CLONESETS, ns, cloneSetOf(ns, 'vol', 3, { claims: ['data', 'logs'] }));
    const pods = await settled(client, ns, 'vol', 3);
    const pvcs = await eventually('6 PVCs', async () => {
      const list = await pvcsOf(client, ns, 'vol');
      return list.length === 6 ? list : undefined;
    });
    const expectedNames = pods.flatMap((p) => ['data', 'logs'].map((t) => `${t}-vol-${idOf(p)}`)).sort();
    assert.deepEqual(names(pvcs), expectedNames);
    for (const pvc of pvcs) {
      const id = idOf(pvc);
      assert.match(id, /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(pvc.metadata.labels, { app: 'vol', [ID]: id });
      assert.deepEqual(pvc.metadata.ownerReferences, [
        { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'vol', uid: cs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.deepEqual(pvc.spec?.['resources'], { requests: { storage: '1Gi' } });
    }
    for (const pod of pods) {
      const id = idOf(pod);
      assert.equal(pod.metadata.name, `vol-${id}`);
      assert.deepEqual(
        (pod.spec.volumes ?? [])
          .filter((v) => v.persistentVolumeClaim !== undefined)
          .map((v) => [v.name, v.persistentVolumeClaim?.claimName])
          .sort(),
        [
          ['data', `data-vol-${id}`],
          ['logs', `logs-vol-${id}`],
        ],
      );
    }
    // Background cascading deletion: the garbage collector deletes pods and PVCs owned by the CloneSet.
    await client.delete(CLONESETS, ns, 'vol');
    await eventually(
      'pods and PVCs of vol collected',
      async () => {
        const [p, c] = await Promise.all([allPods(client, ns, 'vol'), pvcsOf(client, ns, 'vol')]);
        return p.length === 0 && c.length === 0 ? true : undefined;
      },
      { timeoutMs: 90_000 },
    );
  });

  it('scale-in deletes the removed pods together with their PVCs; the others keep theirs', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'shrink', 3, { claims: ['data'] }));
    await settled(client, ns, 'shrink', 3);
    const before = await pvcsOf(client, ns, 'shrink');
    assert.equal(before.length, 3);
    await client.patch(CLONESETS, ns, 'shrink', { spec: { replicas: 1 } }, 'merge');
    const [survivor] = await settled(client, ns, 'shrink', 1);
    assert.ok(survivor);
    const after = await eventually('only the survivor PVC left', async () => {
      const list = await pvcsOf(client, ns, 'shrink');
      return list.length === 1 ? list : undefined;
    });
    assert.deepEqual(names(after), [`data-shrink-${idOf(survivor)}`]);
    assert.equal(after[0]?.metadata.uid, before.find((c) => c.metadata.name === after[0]?.metadata.name)?.metadata.uid, 'the survivor keeps its PVC');
  });

  it('a pod deleted by hand comes back with the same instance id and the same PVC (uid unchanged)', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'reuse', 2, { claims: ['data'] }));
    const pods = await settled(client, ns, 'reuse', 2);
    const victim = pods[0];
    assert.ok(victim);
    const id = idOf(victim);
    const pvcBefore = await client.get<PersistentVolumeClaim>(PVCS, ns, `data-reuse-${id}`);
    await client.delete(PODS, ns, victim.metadata.name ?? '');
    const back = await eventually(
      'a new pod with the same name',
      async () => {
        const all = await settled(client, ns, 'reuse', 2, 5_000).catch(() => undefined);
        const again = all?.find((p) => p.metadata.name === victim.metadata.name);
        return again !== undefined && again.metadata.uid !== victim.metadata.uid ? again : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(idOf(back), id);
    const pvcAfter = await client.get<PersistentVolumeClaim>(PVCS, ns, `data-reuse-${id}`);
    assert.equal(pvcAfter.metadata.uid, pvcBefore.metadata.uid, 'the same PVC, not a new one');
    assert.equal(pvcAfter.metadata.deletionTimestamp, undefined);
    assert.equal(back.spec.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName, `data-reuse-${id}`);
    assert.equal((await pvcsOf(client, ns, 'reuse')).length, 2);
  });

  it('with disablePVCReuse a pod deleted by hand is replaced under a new id with a new PVC, and its old PVC is deleted', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'noreuse', 2, { claims: ['data'], scaleStrategy: { disablePVCReuse: true } }));
    const pods = await settled(client, ns, 'noreuse', 2);
    const victim = pods[0];
    assert.ok(victim);
    const oldId = idOf(victim);
    const oldPvc = await client.get<PersistentVolumeClaim>(PVCS, ns, `data-noreuse-${oldId}`);
    await client.delete(PODS, ns, victim.metadata.name ?? '');
    const replaced = await eventually(
      'a replacement under a new id',
      async () => {
        const all = await settled(client, ns, 'noreuse', 2, 5_000).catch(() => undefined);
        return all !== undefined && !all.some((p) => idOf(p) === oldId) ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const pvcs = await eventually(
      'the old PVC gone, one PVC per pod',
      async () => {
        const list = await pvcsOf(client, ns, 'noreuse');
        return list.length === 2 && !list.some((c) => c.metadata.uid === oldPvc.metadata.uid) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(names(pvcs), names(replaced.map((p) => ({ metadata: { name: `data-noreuse-${idOf(p)}` } }))));
    await assert.rejects(client.get(PVCS, ns, oldPvc.metadata.name ?? ''), /not found/i);
  });

  it('turning disablePVCReuse on deletes an owned PVC that has no pod, and keeps the PVCs of the pods', async () => {
    const cs = await client.create<CloneSet>(CLONESETS, ns, cloneSetOf(ns, 'toggle', 2, { claims: ['data'] }));
    const pods = await settled(client, ns, 'toggle', 2);
    // A PVC left behind by a pod that vanished (as Kruise ≤ 1.9 created it, owned through apps.kruise.io/v1alpha1:
    // still ours): with reuse it waits for the next scale-up.
    const orphan = await client.create<PersistentVolumeClaim>(PVCS, ns, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data-toggle-zzzzz',
        labels: { app: 'toggle', [ID]: 'zzzzz' },
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'toggle', uid: cs.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await client.patch(CLONESETS, ns, 'toggle', { spec: { scaleStrategy: { disablePVCReuse: true } } }, 'merge');
    const left = await eventually('the orphan PVC deleted', async () => {
      const list = await pvcsOf(client, ns, 'toggle');
      return list.some((c) => c.metadata.uid === orphan.metadata.uid) ? undefined : list;
    });
    assert.deepEqual(names(left), pods.map((p) => `data-toggle-${idOf(p)}`).sort());
    assert.ok(left.every((c) => c.metadata.deletionTimestamp === undefined));
    assert.deepEqual(names(await activePods(client, ns, 'toggle')), names(pods), 'the pods are untouched');
  });

  it('scale 5 → 3 with podsToDelete [X] removes X and the next pod in deletion order; X then leaves the list', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'pick', 5));
    const pods = await settled(client, ns, 'pick', 5);
    const [x, ...others] = pods;
    assert.ok(x);
    // Distinct deletion costs make the deletion order of the others unambiguous: the cheapest goes first.
    const cheapest = others[2];
    assert.ok(cheapest);
    await Promise.all(
      others.map((p, i) =>
        client.patch(
          PODS,
          ns,
          p.metadata.name ?? '',
          {
            metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': p === cheapest ? '1' : String(10 + i) } },
          },
          'merge',
        ),
      ),
    );
    await client.patch(CLONESETS, ns, 'pick', { spec: { replicas: 3, scaleStrategy: { podsToDelete: [x.metadata.name] } } }, 'merge');
    const left = await settled(client, ns, 'pick', 3);
    assert.deepEqual(names(left), names(others.filter((p) => p !== cheapest)));
    await eventually('podsToDelete truncated', async () => {
      const list = (await getCloneSet(client, ns, 'pick')).spec.scaleStrategy?.podsToDelete ?? [];
      return list.length === 0 ? true : undefined;
    });
  });

  it('a pod listed in podsToDelete with unchanged replicas is deleted and replaced', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'listed', 3));
    const pods = await settled(client, ns, 'listed', 3);
    const victim = pods[1];
    assert.ok(victim);
    await client.patch(CLONESETS, ns, 'listed', { spec: { scaleStrategy: { podsToDelete: [victim.metadata.name] } } }, 'merge');
    const after = await eventually(
      'victim replaced',
      async () => {
        const all = await settled(client, ns, 'listed', 3, 5_000).catch(() => undefined);
        return all !== undefined && !all.some((p) => p.metadata.name === victim.metadata.name) ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(after.filter((p) => pods.some((q) => q.metadata.uid === p.metadata.uid)).length, 2, 'the two others are untouched');
    await eventually('podsToDelete truncated', async () => {
      const list = (await getCloneSet(client, ns, 'listed')).spec.scaleStrategy?.podsToDelete ?? [];
      return list.length === 0 ? true : undefined;
    });
  });

  it('the apps.kruise.io/specified-delete label deletes and replaces a pod', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'labelled', 3));
    const pods = await settled(client, ns, 'labelled', 3);
    const victim = pods[2];
    assert.ok(victim);
    await client.patch(PODS, ns, victim.metadata.name ?? '', { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } }, 'merge');
    const after = await eventually(
      'victim replaced',
      async () => {
        const all = await settled(client, ns, 'labelled', 3, 5_000).catch(() => undefined);
        return all !== undefined && !all.some((p) => p.metadata.uid === victim.metadata.uid) ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(after.filter((p) => pods.some((q) => q.metadata.uid === p.metadata.uid)).length, 2);
    assert.ok(!after.some((p) => p.metadata.labels?.['apps.kruise.io/specified-delete'] !== undefined));
  });

  it('a pod with pod-deletion-cost "-100" is deleted before its peers on scale-in', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'cost', 4));
    const pods = await settled(client, ns, 'cost', 4);
    // The pod the deletion order would keep longest without the annotation, so the annotation must matter.
    const ranked = rankPodsForDeletion(pods, { minReadySeconds: 0, nowMs: Date.now(), nodes: new Map(), topologySpreadConstraints: [] });
    const cheap = ranked[ranked.length - 1];
    assert.ok(cheap);
    await client.patch(PODS, ns, cheap.metadata.name ?? '', { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } } }, 'merge');
    await client.patch(CLONESETS, ns, 'cost', { spec: { replicas: 3 } }, 'merge');
    const left = await settled(client, ns, 'cost', 3);
    assert.deepEqual(names(left), names(pods.filter((p) => p !== cheap)));
  });

  it('scale-up 0 → 10 with scaleStrategy.maxUnavailable 2 never has more than 2 unavailable pods (watched), and warns ScaleUpLimited', async () => {
    const minReadySeconds = 2;
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'limited', 0, { minReadySeconds, scaleStrategy: { maxUnavailable: 2 } }));
    const list = await client.list<Pod>(PODS, ns, { labelSelector: 'app=limited' });
    const watch = new PodWatch(client, ns, 'limited', list.metadata?.resourceVersion ?? '', 300);
    try {
      await client.patch(CLONESETS, ns, 'limited', { spec: { replicas: 10 } }, 'merge');
      await eventually(
        '10 available pods',
        async () => {
          const s = (await getCloneSet(client, ns, 'limited')).status;
          return s?.availableReplicas === 10 ? true : undefined;
        },
        { timeoutMs: 120_000 },
      );
    } finally {
      await watch.stop();
    }
    let peak = 0;
    const samples: string[] = [];
    const live = watch.replay([], (e, pods) => {
      // Pods only ever become more available as time passes: the count peaks at an event, so sampling at every
      // event of the stream (at its arrival time) sees the peak.
      const unavailable = [...pods.values()].filter((p) => isActive(p) && !isPodAvailable(p, minReadySeconds, e.at)).length;
      if (unavailable > peak) samples.push(`${e.type} ${e.pod.metadata.name ?? ''}: ${unavailable} unavailable of ${pods.size}`);
      peak = Math.max(peak, unavailable);
    });
    assert.equal(live.size, 10, 'the watch saw all 10 pods');
    assert.ok(peak <= 2, `at most 2 unavailable pods at any time; saw ${samples.join('; ')}`);
    assert.equal(peak, 2, 'the limit was reached (pods came up two at a time)');
    const warning = (await eventsOf(client, ns, 'limited')).find((e) => e.reason === 'ScaleUpLimited');
    assert.equal(warning?.type, 'Warning');
    assert.match(warning?.message ?? '', /scaleUp is limited because of scaleStrategy\.maxUnavailable, limit: [012]/);
  });

  it('a Failed pod is not counted: a replacement is created and the Failed pod is kept', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'failing', 3));
    const pods = await settled(client, ns, 'failing', 3);
    const victim = pods[0];
    assert.ok(victim);
    await client.patch(PODS, ns, victim.metadata.name ?? '', { status: { phase: 'Failed' } }, 'merge', { subresource: 'status' });
    const active = await eventually(
      '3 active pods besides the Failed one',
      async () => {
        const all = await settled(client, ns, 'failing', 3, 5_000).catch(() => undefined);
        return all !== undefined && !all.some((p) => p.metadata.uid === victim.metadata.uid) ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(active.length, 3);
    assert.ok(!active.some((p) => idOf(p) === idOf(victim)), 'the replacement has a new id');
    const failed = await client.get<Pod>(PODS, ns, victim.metadata.name ?? '');
    assert.equal(failed.metadata.uid, victim.metadata.uid);
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(failed.metadata.deletionTimestamp, undefined, 'the Failed pod is not deleted');
    const s = (await getCloneSet(client, ns, 'failing')).status;
    assert.equal(s?.replicas, 3);
    assert.equal(s?.readyReplicas, 3);
  });
});

describe('feature gate CloneSetShortHash', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'shorthash');
    controller = startController(ns, ['--feature-gates=CloneSetShortHash=true']);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('labels pods with the bare hash, and still counts a pod carrying the full revision name as updated', async () => {
    const cs = cloneSetOf(ns, 'sample', 3);
    // The manual's sample template, so the revision is the well-known sample-d4d4fb5bd.
    await client.create(CLONESETS, ns, { ...cs, metadata: { ...cs.metadata, labels: { app: 'sample' } } });
    const pods = await settled(client, ns, 'sample', 3);
    const revision = (await getCloneSet(client, ns, 'sample')).status?.updateRevision ?? '';
    assert.match(revision, /^sample-[a-z0-9]+$/);
    const hash = revision.slice('sample-'.length);
    for (const p of pods) {
      assert.equal(p.metadata.labels?.['controller-revision-hash'], hash);
      assert.equal(p.metadata.labels?.['pod-template-hash'], hash);
    }
    const full = pods[0];
    assert.ok(full);
    await client.patch(PODS, ns, full.metadata.name ?? '', { metadata: { labels: { 'controller-revision-hash': revision } } }, 'merge');
    await client.patch(CLONESETS, ns, 'sample', { spec: { replicas: 4 } }, 'merge');
    const after = await settled(client, ns, 'sample', 4);
    const s = await eventually('4 updated replicas', async () => {
      const st = (await getCloneSet(client, ns, 'sample')).status;
      return st?.updatedReplicas === 4 && st.updatedReadyReplicas === 4 ? st : undefined;
    });
    assert.equal(s.updateRevision, revision);
    const kept = after.find((p) => p.metadata.uid === full.metadata.uid);
    assert.ok(kept, 'the pod with the full label was neither recreated nor replaced');
    assert.equal(kept.metadata.labels?.['controller-revision-hash'], revision);
  });
});

describe('readiness beside a long scale-up (docs/features.md#reconcile-pass)', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'scaling-beside');
    // 10 pod requests per second: the 120 creates of the scale-up take over 10 s in one pass.
    controller = startController(ns, ['--kube-api-qps=10', '--kube-api-burst=10']);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('scale-up 0 → 120: the first pods get their InPlaceUpdateReady write while the same pass is still creating the last ones', async () => {
    await client.create<CloneSet>(CLONESETS, ns, cloneSetOf(ns, 'big', 120));
    const pods = await settled(client, ns, 'big', 120, 180_000);
    const seconds = (t: string | null | undefined): number => Date.parse(t ?? '') / 1000;
    const lastCreated = Math.max(...pods.map((p) => seconds(p.metadata.creationTimestamp)));
    const readyWrites = pods.map((p) => seconds(p.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.lastTransitionTime)).sort((a, b) => a - b);
    const firstReadyWrite = readyWrites[0] ?? Number.NaN;
    // Kruise's order alone (a pass scales or updates) writes the first readiness only after the last create.
    assert.ok(
      firstReadyWrite <= lastCreated - 3,
      `first InPlaceUpdateReady at ${new Date(firstReadyWrite * 1000).toISOString()}, last create at ${new Date(lastCreated * 1000).toISOString()}`,
    );
  });
});
