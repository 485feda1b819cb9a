// The first reconcile against the real control plane: create, scale, replace, release, restart safety.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CONTROLLER_REVISIONS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { ControllerRevision, Pod } from '../../src/kube/types.ts';
import { activePods as podsOf, getCloneSet as cloneSet, isReady, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, kubectl, kubectlOk, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

/** The user manual's sample CloneSet (revision sample-d4d4fb5bd when named sample). */
const sample = (namespace: string, name: string, replicas: number): CloneSet => newCloneSet(namespace, name, replicas, { labels: { app: name } });

describe('CloneSet basics on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'basics');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('creates 5 pods of the manual sample that become Running and Ready, labelled and owned like Kruise does', async () => {
    const cs = await client.create<CloneSet>(CLONESETS, ns, sample(ns, 'sample', 5));
    const pods = await eventually('5 ready pods', () => readyPods(client, ns, 'sample', 5), { timeoutMs: 90_000 });
    for (const pod of pods) {
      const labels = pod.metadata.labels ?? {};
      const id = labels['apps.kruise.io/cloneset-instance-id'] ?? '';
      assert.match(id, /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(pod.metadata.name, `sample-${id}`);
      assert.equal(labels['controller-revision-hash'], 'sample-d4d4fb5bd');
      assert.equal(labels['pod-template-hash'], 'd4d4fb5bd');
      const owner = pod.metadata.ownerReferences?.[0];
      assert.deepEqual(owner, { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'sample', uid: cs.metadata.uid, controller: true, blockOwnerDeletion: true });
      assert.ok(pod.spec.readinessGates?.some((g) => g.conditionType === 'InPlaceUpdateReady'));
      assert.equal(pod.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status, 'True');
    }
    const normal = await eventually('lifecycle Normal once scheduled', async () => {
      const all = await podsOf(client, ns, 'sample');
      return all.every((p) => p.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'Normal') ? all : undefined;
    });
    assert.equal(normal.length, 5);
    const status = await eventually('status to count 5 available', async () => {
      const s = (await cloneSet(client, ns, 'sample')).status;
      return s?.availableReplicas === 5 && s.updatedReadyReplicas === 5 ? s : undefined;
    });
    assert.equal(status.replicas, 5);
    assert.equal(status.readyReplicas, 5);
    assert.equal(status.updatedReplicas, 5);
    assert.equal(status.updatedAvailableReplicas, 5);
    assert.equal(status.expectedUpdatedReplicas, 5);
    assert.equal(status.updateRevision, 'sample-d4d4fb5bd');
    assert.equal(status.currentRevision, 'sample-d4d4fb5bd');
    assert.equal(status.labelSelector, 'app=sample');
    assert.equal(status.observedGeneration, (await cloneSet(client, ns, 'sample')).metadata.generation);
    const rev = await client.get<ControllerRevision>(CONTROLLER_REVISIONS, ns, 'sample-d4d4fb5bd');
    assert.equal(rev.revision, 1);
    const table = kubectlOk(['get', 'clone', 'sample', '-n', ns]);
    assert.match(table, /NAME\s+DESIRED\s+UPDATED\s+UPDATED_READY\s+UPDATED_AVAILABLE\s+READY\s+TOTAL\s+AGE/);
    assert.match(table, /sample\s+5\s+5\s+5\s+5\s+5\s+5\s+/);
  });

  it('scales 5 → 2 → 8 through the scale subresource', async () => {
    kubectlOk(['scale', 'clone', 'sample', '-n', ns, '--replicas=2']);
    await eventually('2 pods', async () => ((await podsOf(client, ns, 'sample')).length === 2 ? true : undefined));
    await eventually('status replicas 2', async () => ((await cloneSet(client, ns, 'sample')).status?.replicas === 2 ? true : undefined));
    kubectlOk(['scale', 'clone', 'sample', '-n', ns, '--replicas=8']);
    const pods = await eventually('8 ready pods', () => readyPods(client, ns, 'sample', 8), { timeoutMs: 90_000 });
    const ids = new Set(pods.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']));
    assert.equal(ids.size, 8);
    await eventually('status ready 8', async () => ((await cloneSet(client, ns, 'sample')).status?.readyReplicas === 8 ? true : undefined));
  });

  it('replaces a pod deleted by hand', async () => {
    const before = await podsOf(client, ns, 'sample');
    const victim = before[0]?.metadata.name ?? '';
    await client.delete(PODS, ns, victim);
    const after = await eventually(
      'a replacement',
      async () => {
        const pods = await readyPods(client, ns, 'sample', 8);
        return pods !== undefined && !pods.some((p) => p.metadata.name === victim) ? pods : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(after.length, 8);
  });

  it('rolls out a new template to revision sample-56dfb978d4 by recreating pods', async () => {
    await client.patch(CLONESETS, ns, 'sample', { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } }, 'merge');
    const pods = await eventually(
      'all pods on the new revision and ready',
      async () => {
        const all = await readyPods(client, ns, 'sample', 8);
        return all?.every((p) => p.metadata.labels?.['controller-revision-hash'] === 'sample-56dfb978d4') === true ? all : undefined;
      },
      { timeoutMs: 180_000 },
    );
    assert.equal(pods.length, 8);
    const status = await eventually('status on the new revision', async () => {
      const s = (await cloneSet(client, ns, 'sample')).status;
      return s?.currentRevision === 'sample-56dfb978d4' && s.updatedReadyReplicas === 8 ? s : undefined;
    });
    assert.equal(status.updateRevision, 'sample-56dfb978d4');
  });

  it('rejects a spec with a wrong type at admission, naming the field', () => {
    const bad = `apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: bad, namespace: ${ns}}\nspec:\n  replicas: five\n  selector: {matchLabels: {app: bad}}\n  template: {metadata: {labels: {app: bad}}, spec: {containers: [{name: c, image: nginx}]}}\n`;
    const r = kubectl(['apply', '-f', '-'], bad);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.replicas/);
  });

  it('refuses at admission a CloneSet whose selector does not match the template labels, and creates no pods', async () => {
    // (The controller still refuses such an object stored before the webhook existed: a Warning event, no pods —
    // plan/selector-check.ts and its unit tests.)
    const cs = sample(ns, 'mismatch', 2);
    await assert.rejects(client.create(CLONESETS, ns, { ...cs, spec: { ...cs.spec, selector: { matchLabels: { app: 'other' } } } }), /selector/);
    assert.equal((await podsOf(client, ns, 'other')).length + (await podsOf(client, ns, 'mismatch')).length, 0);
  });

  it('never adopts an orphan with matching labels, and releases and replaces a pod whose labels stop matching', async () => {
    await client.create(PODS, ns, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', labels: { app: 'sample' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const ours = (await podsOf(client, ns, 'sample')).filter((p) => p.metadata.name !== 'orphan');
    const released = ours[0]?.metadata.name ?? '';
    await client.patch(PODS, ns, released, { metadata: { labels: { app: 'gone' } } }, 'merge');
    await eventually('the released pod has no controller reference', async () => {
      const pod = await client.get<Pod>(PODS, ns, released);
      return (pod.metadata.ownerReferences ?? []).length === 0 ? pod : undefined;
    });
    const pods = await eventually(
      '8 controlled ready pods again',
      async () => {
        const all = (await podsOf(client, ns, 'sample')).filter((p) => p.metadata.name !== 'orphan');
        return all.length === 8 && all.every(isReady) ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(!pods.some((p) => p.metadata.name === released));
    const orphan = await client.get<Pod>(PODS, ns, 'orphan');
    assert.equal((orphan.metadata.ownerReferences ?? []).length, 0);
    // The status is written at the end of the pass that made the replacement Ready (after its readiness write),
    // so the pods can show Ready a moment before the status counts them.
    const replicas = await eventually('the status to count 8 replicas', async () => {
      const r = (await cloneSet(client, ns, 'sample')).status?.replicas;
      return r === 8 ? r : undefined;
    });
    assert.equal(replicas, 8);
  });
});

describe('restart safety', () => {
  it('a controller killed with SIGKILL in the middle of a 0 → 50 scale-up ends, after a restart, with exactly 50 pods and unique ids', async () => {
    const client = await testClient();
    const ns = await newNamespace(client, 'restart');
    let controller = startController(ns, ['--kube-api-qps=5', '--kube-api-burst=5']);
    try {
      await client.create(CLONESETS, ns, sample(ns, 'web', 50));
      await eventually(
        'some pods but not all',
        async () => {
          const n = (await client.list<Pod>(PODS, ns)).items.length;
          return n >= 5 && n < 50 ? n : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 50 },
      );
      await controller.kill9();
      controller = startController(ns);
      const pods = await eventually(
        '50 pods',
        async () => {
          const all = (await client.list<Pod>(PODS, ns)).items;
          return all.length >= 50 ? all : undefined;
        },
        { timeoutMs: 120_000 },
      );
      // Let the controller settle, then check it neither overshot nor duplicated.
      await eventually('status replicas 50', async () => ((await client.get<CloneSet>(CLONESETS, ns, 'web')).status?.replicas === 50 ? true : undefined));
      const final = (await client.list<Pod>(PODS, ns)).items;
      assert.equal(final.length, 50);
      assert.equal(pods.length, 50);
      const ids = new Set(final.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']));
      assert.equal(ids.size, 50);
    } finally {
      await controller.stop();
      await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
      client.close();
    }
  });
});
