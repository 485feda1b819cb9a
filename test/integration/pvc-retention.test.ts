// The PVC retention policy (docs/features.md#pvc-retention-policy; kruise#1876) on a real API server: retained PVCs
// are released (no CloneSet owner reference, labelled cloneset-controller.io/retained-by) and never deleted, also when
// the controller is SIGKILLed half-way through a scale-in; the pod that gets the same instance id again mounts the
// same claim (same uid) and the CloneSet re-adopts it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { PersistentVolumeClaim, Pod } from '../../src/kube/types.ts';
import { activePods, allPods, eventsOf, getCloneSet, isReady, names, newCloneSet, pvcsOf } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const ID = 'apps.kruise.io/cloneset-instance-id';
const RETAINED_BY = 'cloneset-controller.io/retained-by';
const idOf = (o: Pod | PersistentVolumeClaim): string => o.metadata.labels?.[ID] ?? '';
const ownedBy = (pvc: PersistentVolumeClaim, uid: string | undefined): boolean => (pvc.metadata.ownerReferences ?? []).some((r) => r.uid === uid);

async function settled(client: KubeClient, ns: string, name: string, n: number): Promise<Pod[]> {
  return eventually(
    `${n} settled pods of ${name}`,
    async () => {
      const pods = await activePods(client, ns, name);
      if (pods.length !== n || !pods.every(isReady)) return undefined;
      const all = await allPods(client, ns, name);
      const s = (await getCloneSet(client, ns, name)).status;
      return all.length === n && s?.replicas === n && s.readyReplicas === n ? pods : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

async function scale(client: KubeClient, ns: string, name: string, replicas: number): Promise<void> {
  await client.patch(CLONESETS, ns, name, { spec: { replicas } }, 'merge');
}

describe('PVC retention policy on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'retention');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('whenScaled=Retain: scale 3 → 1 keeps both PVCs released (SIGKILL half-way), scale back to 3 mounts and re-adopts the very same claims', async () => {
    const cs = await client.create<CloneSet>(
      CLONESETS,
      ns,
      newCloneSet(ns, 'db', 3, {
        claims: ['data'],
        annotations: { 'cloneset-controller.io/pvc-retention-when-scaled': 'Retain' },
      }),
    );
    await settled(client, ns, 'db', 3);
    const original = await eventually('3 owned PVCs', async () => {
      const list = await pvcsOf(client, ns, 'db');
      return list.length === 3 && list.every((c) => ownedBy(c, cs.metadata.uid)) ? list : undefined;
    });
    const uids = new Map(original.map((c) => [c.metadata.name ?? '', c.metadata.uid ?? '']));

    await scale(client, ns, 'db', 1);
    // Half-way: the first retained PVC is released — the controller dies before it finishes the scale-in.
    await eventually('a released PVC', async () => ((await pvcsOf(client, ns, 'db')).some((c) => c.metadata.labels?.[RETAINED_BY] === 'db') ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    await controller.kill9();
    controller = startController(ns);

    const [survivor] = await settled(client, ns, 'db', 1);
    const afterScaleIn = await eventually(
      '1 owned and 2 released PVCs',
      async () => {
        const list = await pvcsOf(client, ns, 'db');
        const released = list.filter((c) => c.metadata.labels?.[RETAINED_BY] === 'db' && (c.metadata.ownerReferences ?? []).length === 0);
        return list.length === 3 && released.length === 2 ? { list, released } : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(names(afterScaleIn.list), [...uids.keys()].sort(), 'no PVC deleted');
    assert.ok(afterScaleIn.list.every((c) => c.metadata.deletionTimestamp === undefined && uids.get(c.metadata.name ?? '') === c.metadata.uid));
    assert.ok(ownedBy(afterScaleIn.list.find((c) => idOf(c) === idOf(survivor as Pod)) as PersistentVolumeClaim, cs.metadata.uid), 'the survivor keeps its owned PVC');
    const retainedIds = afterScaleIn.released.map(idOf).sort();
    const events = (await eventsOf(client, ns, 'db')).filter((e) => e.reason === 'RetainedPVC');
    assert.ok(events.length >= 2, `RetainedPVC events: ${events.length}`);

    await scale(client, ns, 'db', 3);
    const back = await settled(client, ns, 'db', 3);
    assert.deepEqual(
      back
        .map(idOf)
        .filter((id) => id !== idOf(survivor as Pod))
        .sort(),
      retainedIds,
      'the new pods got the retained instance ids',
    );
    const readopted = await eventually(
      '3 owned PVCs again, no label',
      async () => {
        const list = await pvcsOf(client, ns, 'db');
        return list.length === 3 && list.every((c) => ownedBy(c, cs.metadata.uid) && c.metadata.labels?.[RETAINED_BY] === undefined) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    for (const pvc of readopted) assert.equal(pvc.metadata.uid, uids.get(pvc.metadata.name ?? ''), `${pvc.metadata.name ?? ''} is the same claim`);
    for (const pod of back) {
      const claim = pod.spec.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName;
      assert.equal(claim, `data-db-${idOf(pod)}`);
    }
  });

  it('whenDeleted=Retain: the PVCs are never owned by the CloneSet, survive its deletion, and a CloneSet re-created under the name mounts them again', async () => {
    const manifest = newCloneSet(ns, 'keep', 2, { claims: ['data'], annotations: { 'cloneset-controller.io/pvc-retention-when-deleted': 'Retain' } });
    await client.create<CloneSet>(CLONESETS, ns, manifest);
    const pods = await settled(client, ns, 'keep', 2);
    const pvcs = await eventually('2 released PVCs', async () => {
      const list = await pvcsOf(client, ns, 'keep');
      return list.length === 2 && list.every((c) => (c.metadata.ownerReferences ?? []).length === 0 && c.metadata.labels?.[RETAINED_BY] === 'keep') ? list : undefined;
    });
    await client.delete(CLONESETS, ns, 'keep', { propagationPolicy: 'Background' });
    await eventually('the pods garbage-collected', async () => ((await client.list<Pod>(PODS, ns, { labelSelector: 'app=keep' })).items.length === 0 ? true : undefined), {
      timeoutMs: 90_000,
    });
    const left = await pvcsOf(client, ns, 'keep');
    assert.deepEqual(left.map((c) => c.metadata.uid).sort(), pvcs.map((c) => c.metadata.uid).sort(), 'both PVCs survive the CloneSet');
    assert.ok(left.every((c) => c.metadata.deletionTimestamp === undefined));

    await client.create<CloneSet>(CLONESETS, ns, manifest);
    const again = await settled(client, ns, 'keep', 2);
    assert.deepEqual(again.map(idOf).sort(), pods.map(idOf).sort(), 'the re-created CloneSet reuses the retained instance ids');
    const still = await pvcsOf(client, ns, 'keep');
    assert.deepEqual(still.map((c) => c.metadata.uid).sort(), pvcs.map((c) => c.metadata.uid).sort());
  });
});
