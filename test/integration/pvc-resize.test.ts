// Growing PVCs in place when the claim template grows (docs/features.md#pvc-resize-in-place; kruise#1670, kruise#905,
// kruise#1087) on a real API server, with its PersistentVolumeClaimResize admission (only Bound claims of a class with
// allowVolumeExpansion grow). The test plays the volume plugin: it binds new claims and reports the resize in
// status.capacity and the FileSystemResizePending condition, as a CSI resizer and the kubelet would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PVCS, STORAGE_CLASSES } from '../../src/kube/resources.ts';
import type { PersistentVolumeClaim, Pod } from '../../src/kube/types.ts';
import { activePods, eventsOf, getCloneSet, isReady, newCloneSet, pvcsOf } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const requestOf = (c: PersistentVolumeClaim): unknown => (c.spec?.['resources'] as { requests?: { storage?: string } } | undefined)?.requests?.storage;
const uidsOf = (list: readonly Pod[]): string[] => list.map((p) => p.metadata.uid ?? '').sort();

/** The volume plugin: every Pending claim of the app becomes Bound with the capacity it asks for. */
async function bindClaims(client: KubeClient, ns: string, app: string): Promise<PersistentVolumeClaim[]> {
  const list = await pvcsOf(client, ns, app);
  for (const pvc of list) {
    if ((pvc.status as { phase?: string } | undefined)?.phase === 'Bound') continue;
    await client.patch(PVCS, ns, pvc.metadata.name ?? '', { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: requestOf(pvc) } } }, 'merge', {
      subresource: 'status',
    });
  }
  return pvcsOf(client, ns, app);
}

async function reportResize(client: KubeClient, ns: string, name: string, capacity: string, conditions: readonly string[]): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.patch(
    PVCS,
    ns,
    name,
    {
      status: { capacity: { storage: capacity }, conditions: conditions.map((type) => ({ type, status: 'True', lastTransitionTime: now })) },
    },
    'merge',
    { subresource: 'status' },
  );
}

async function setTemplateStorage(client: KubeClient, ns: string, name: string, storage: string): Promise<void> {
  await client.patch(CLONESETS, ns, name, [{ op: 'replace', path: '/spec/volumeClaimTemplates/0/spec/resources/requests/storage', value: storage }], 'json');
}

async function resizeCondition(client: KubeClient, ns: string, name: string): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  return (await getCloneSet(client, ns, name)).status?.conditions?.find((c) => c.type === 'PVCResize');
}

function manifest(ns: string, name: string, replicas: number, storageClassName: string): CloneSet {
  const cs = newCloneSet(ns, name, replicas, { claims: ['data'], annotations: { 'cloneset-controller.io/pvc-resize-policy': 'InPlace' } });
  const vct = (cs.spec.volumeClaimTemplates ?? []).map((t) => ({ ...t, spec: { ...t.spec, storageClassName } }));
  return { ...cs, spec: { ...cs.spec, volumeClaimTemplates: vct } };
}

async function settledWithBoundClaims(client: KubeClient, ns: string, name: string, n: number): Promise<Pod[]> {
  return eventually(
    `${n} ready pods of ${name} with bound claims`,
    async () => {
      const claims = await bindClaims(client, ns, name);
      const pods = await activePods(client, ns, name);
      return pods.length === n && pods.every(isReady) && claims.length === n ? pods : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

describe('in-place PVC resize on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;
  let expandable: string;
  let fixed: string;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'resize');
    expandable = `${ns}-expandable`;
    fixed = `${ns}-fixed`;
    await client.create(STORAGE_CLASSES, undefined, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: expandable },
      provisioner: 'example.com/none',
      allowVolumeExpansion: true,
    });
    await client.create(STORAGE_CLASSES, undefined, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: fixed },
      provisioner: 'example.com/none',
      allowVolumeExpansion: false,
    });
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    for (const sc of [expandable, fixed]) await client.delete(STORAGE_CLASSES, undefined, sc).catch(() => undefined);
    client.close();
  });

  it('1Gi → 2Gi: both claims grow in place (SIGKILL half-way), progress follows status.capacity and FileSystemResizePending, no pod is recreated, new pods get 2Gi', async () => {
    await client.create<CloneSet>(CLONESETS, ns, manifest(ns, 'grow', 2, expandable));
    const pods = await settledWithBoundClaims(client, ns, 'grow', 2);
    await eventually('PVCResize Resized at 1Gi', async () => ((await resizeCondition(client, ns, 'grow'))?.reason === 'Resized' ? true : undefined));

    await setTemplateStorage(client, ns, 'grow', '2Gi');
    await eventually('a claim asks for 2Gi', async () => ((await pvcsOf(client, ns, 'grow')).some((c) => requestOf(c) === '2Gi') ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    await controller.kill9();
    controller = startController(ns);

    const claims = await eventually(
      'both claims ask for 2Gi',
      async () => {
        const list = await pvcsOf(client, ns, 'grow');
        return list.length === 2 && list.every((c) => requestOf(c) === '2Gi') ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const [first, second] = claims.map((c) => c.metadata.name ?? '').sort();
    await reportResize(client, ns, first ?? '', '2Gi', []);
    await reportResize(client, ns, second ?? '', '1Gi', ['FileSystemResizePending']);
    const progress = await eventually(
      'the condition shows the pending file system resize',
      async () => {
        const c = await resizeCondition(client, ns, 'grow');
        return c?.reason === 'Resizing' && (c.message ?? '').includes('FileSystemResizePending') ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(progress.message, `1 of 2 PVCs have the requested size; ${second ?? ''}: capacity 1Gi of 2Gi (FileSystemResizePending)`);

    await reportResize(client, ns, second ?? '', '2Gi', []);
    const done = await eventually(
      'PVCResize Resized at 2Gi',
      async () => {
        const c = await resizeCondition(client, ns, 'grow');
        return c?.reason === 'Resized' && c.status === 'True' ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(done.message, 'all 2 PVCs have the size their template asks for');
    const events = await eventsOf(client, ns, 'grow');
    // Never grown twice: at most one ResizingPVC per claim (a SIGKILL may lose the event of a write that landed).
    const resizing = events.filter((e) => e.reason === 'ResizingPVC').flatMap((e) => Array.from({ length: e.count ?? 1 }, () => e.message ?? ''));
    assert.ok(resizing.length >= 1, 'a ResizingPVC event');
    assert.equal(new Set(resizing).size, resizing.length, `each claim grown once: ${resizing.join(' | ')}`);
    for (const m of resizing) assert.match(m, new RegExp(`^growing PVC (${first ?? ''}|${second ?? ''}) in place: storage 1Gi → 2Gi$`));
    assert.ok(events.some((e) => e.reason === 'PVCResized'));
    assert.deepEqual(uidsOf(await activePods(client, ns, 'grow')), uidsOf(pods), 'no pod recreated');

    await client.patch(CLONESETS, ns, 'grow', { spec: { replicas: 3 } }, 'merge');
    const three = await eventually('3 claims, the new one at 2Gi', async () => {
      const list = await pvcsOf(client, ns, 'grow');
      return list.length === 3 ? list : undefined;
    });
    assert.deepEqual(three.map(requestOf), ['2Gi', '2Gi', '2Gi']);
  });

  it('a shrink and a class without allowVolumeExpansion are refused with a Warning event and a condition; nothing is deleted or recreated', async () => {
    await client.create<CloneSet>(CLONESETS, ns, manifest(ns, 'shrink', 1, expandable));
    await client.create<CloneSet>(CLONESETS, ns, manifest(ns, 'fixed', 1, fixed));
    const shrinkPods = await settledWithBoundClaims(client, ns, 'shrink', 1);
    const fixedPods = await settledWithBoundClaims(client, ns, 'fixed', 1);
    const shrinkClaims = await pvcsOf(client, ns, 'shrink');
    const fixedClaims = await pvcsOf(client, ns, 'fixed');

    await setTemplateStorage(client, ns, 'shrink', '512Mi');
    await setTemplateStorage(client, ns, 'fixed', '2Gi');
    const shrunk = await eventually('shrink refused', async () => {
      const c = await resizeCondition(client, ns, 'shrink');
      return c?.reason === 'ResizeRefused' ? c : undefined;
    });
    assert.equal(shrunk.message, `${shrinkClaims[0]?.metadata.name ?? ''}: the template asks for 512Mi, less than its 1Gi (a PVC cannot shrink; nothing is deleted)`);
    const notExpandable = await eventually('expansion refused', async () => {
      const c = await resizeCondition(client, ns, 'fixed');
      return c?.reason === 'ResizeRefused' ? c : undefined;
    });
    assert.equal(notExpandable.message, `${fixedClaims[0]?.metadata.name ?? ''}: StorageClass "${fixed}" does not allow volume expansion (allowVolumeExpansion)`);
    for (const name of ['shrink', 'fixed']) {
      const warnings = await eventually(`a PVCResizeRefused event for ${name}`, async () => {
        const list = (await eventsOf(client, ns, name)).filter((e) => e.reason === 'PVCResizeRefused' && e.type === 'Warning');
        return list.length > 0 ? list : undefined;
      });
      assert.deepEqual(
        warnings.map((e) => e.count ?? 1),
        [1],
        'told once',
      );
    }
    assert.deepEqual(
      (await pvcsOf(client, ns, 'shrink')).map((c) => [c.metadata.uid, requestOf(c)]),
      shrinkClaims.map((c) => [c.metadata.uid, '1Gi']),
    );
    assert.deepEqual(
      (await pvcsOf(client, ns, 'fixed')).map((c) => [c.metadata.uid, requestOf(c)]),
      fixedClaims.map((c) => [c.metadata.uid, '1Gi']),
    );
    assert.deepEqual(uidsOf(await activePods(client, ns, 'shrink')), uidsOf(shrinkPods));
    assert.deepEqual(uidsOf(await activePods(client, ns, 'fixed')), uidsOf(fixedPods));
  });
});
