// The shipped RBAC (config/rbac/) against the real API server: the controller runs with a ServiceAccount token bound
// only to the ClusterRole `cloneset-controller` and the leader-election Role, scales a CloneSet with a PVC template
// up, updates it in place, scales it down through podsToDelete, and never gets a 403. `kubectl auth can-i` shows
// what the role must not allow.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, LEASES, NAMESPACES } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';
import { activePods, eventsOf, getCloneSet, isReady, newCloneSet, pvcsOf } from '../helpers/cloneset.ts';
import { eventually, kubectl, kubectlOk, newNamespace, ROOT, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const SA = 'cloneset-controller';
const manifest = (f: string): string => readFileSync(path.join(ROOT, 'config/rbac', f), 'utf8');

/** `n` active pods, all Ready and on `image`, and a status that counts them. */
async function settled(client: KubeClient, ns: string, name: string, n: number, image: string): Promise<Pod[]> {
  return eventually(
    `${n} Ready pods of ${name} on ${image}`,
    async () => {
      const pods = await activePods(client, ns, name);
      if (pods.length !== n || !pods.every(isReady)) return undefined;
      if (!pods.every((p) => p.status?.containerStatuses?.[0]?.image === image)) return undefined;
      const s = (await getCloneSet(client, ns, name)).status;
      return s?.replicas === n && s.readyReplicas === n && s.updatedReadyReplicas === n ? pods : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

describe('least-privilege RBAC (config/rbac) on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess | undefined;
  let bindingName: string;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'rbac');
    bindingName = `cloneset-controller-${ns}`;
    // The shipped manifests, moved from cloneset-system into the test namespace.
    const inNs = (s: string): string => s.replaceAll('namespace: cloneset-system', `namespace: ${ns}`);
    const bindings = inNs(manifest('role-binding.yaml')).replace(
      'kind: ClusterRoleBinding\nmetadata:\n  name: cloneset-controller\n',
      `kind: ClusterRoleBinding\nmetadata:\n  name: ${bindingName}\n`,
    );
    assert.ok(bindings.includes(bindingName), 'the ClusterRoleBinding was renamed');
    kubectlOk(['apply', '-f', '-'], manifest('role.yaml'));
    kubectlOk(['apply', '-f', '-'], inNs(manifest('service-account.yaml')));
    kubectlOk(['apply', '-f', '-'], inNs(manifest('leader-election-role.yaml')));
    kubectlOk(['apply', '-f', '-'], bindings);

    const token = kubectlOk(['create', 'token', SA, '-n', ns, '--duration=2h']).trim();
    const admin = JSON.parse(kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
    };
    const cluster = admin.clusters[0];
    assert.ok(cluster !== undefined);
    const kubeconfig = path.join(ROOT, '.cluster', 'test-logs', `${ns}.kubeconfig`);
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [cluster],
        users: [{ name: SA, user: { token } }],
        contexts: [{ name: SA, context: { cluster: cluster.name, user: SA, namespace: ns } }],
        'current-context': SA,
      }),
      { mode: 0o600 },
    );
    controller = startController(
      ns,
      ['--leader-elect', `--leader-election-namespace=${ns}`, '--feature-gates=InPlaceWorkloadVerticalScaling=true,PreDownloadImageForInPlaceUpdate=true'],
      { kubeconfig },
    );
  });

  after(async () => {
    await controller?.stop();
    kubectl(['delete', 'clusterrolebinding', bindingName, '--ignore-not-found']);
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('the ServiceAccount runs the controller: leader lease, scale up with PVCs, in-place update, scale down, events, no 403', async () => {
    await client.create<CloneSet>(
      CLONESETS,
      ns,
      newCloneSet(ns, 'web', 3, {
        claims: ['data'],
        spec: { updateStrategy: { type: 'InPlaceIfPossible' } },
      }),
    );
    await settled(client, ns, 'web', 3, 'nginx:alpine');
    assert.equal((await pvcsOf(client, ns, 'web')).length, 3, 'one PVC per pod');
    const lease = await client.get<{ spec?: { holderIdentity?: string } }>(LEASES, ns, 'cloneset-controller');
    assert.ok((lease.spec?.holderIdentity ?? '') !== '', 'the controller holds the Lease');

    // In place: revisions, pod patches (spec and status), no pod re-created.
    const before = (await activePods(client, ns, 'web')).map((p) => p.metadata.uid).sort();
    await client.patch(CLONESETS, ns, 'web', [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:mainline' }], 'json');
    const updated = await settled(client, ns, 'web', 3, 'nginx:mainline');
    assert.deepEqual(updated.map((p) => p.metadata.uid).sort(), before, 'updated in place');

    // Scale down through podsToDelete: pod and PVC deletes, and the controller's patch that truncates the list.
    const victim = updated[0]?.metadata.name ?? '';
    const keep = updated.slice(1).map((p) => p.metadata.name ?? '');
    await client.patch(CLONESETS, ns, 'web', { spec: { replicas: 1, scaleStrategy: { podsToDelete: [victim] } } }, 'merge');
    const [survivor] = await settled(client, ns, 'web', 1, 'nginx:mainline');
    assert.ok(survivor !== undefined && keep.includes(survivor.metadata.name ?? ''), 'the named pod was deleted');
    assert.ok(!(await activePods(client, ns, 'web')).some((p) => p.metadata.name === victim));
    await eventually('1 PVC left', async () => ((await pvcsOf(client, ns, 'web')).filter((c) => c.metadata.deletionTimestamp === undefined).length === 1 ? true : undefined));
    await eventually('podsToDelete truncated by the controller', async () =>
      ((await getCloneSet(client, ns, 'web')).spec.scaleStrategy?.podsToDelete ?? []).length === 0 ? true : undefined,
    );

    const reasons = new Set((await eventsOf(client, ns, 'web')).map((e) => e.reason));
    for (const r of ['SuccessfulCreate', 'SuccessfulUpdatePodInPlace', 'SuccessfulDelete']) assert.ok(reasons.has(r), `event ${r} in ${[...reasons].join(', ')}`);

    const log = readFileSync(controller?.logFile ?? '', 'utf8');
    assert.ok(log.includes('became leader'), 'the controller ran under leader election');
    const denied = log.split('\n').filter((l) => /forbidden|\b403\b/i.test(l));
    assert.deepEqual(denied, [], 'no request of the controller was refused');
  });

  it('kubectl auth can-i: what the controller needs is allowed, nothing more', () => {
    const as = `system:serviceaccount:${ns}:${SA}`;
    const can = (args: readonly string[]): boolean => {
      const r = kubectl(['auth', 'can-i', ...args, `--as=${as}`]);
      assert.ok(r.code === 0 || r.code === 1, `kubectl auth can-i ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim() === 'yes';
    };
    const allowed: string[][] = [
      ['create', 'pods', '-n', ns],
      ['patch', 'pods', '--subresource=status', '-n', ns],
      ['patch', 'pods', '--subresource=resize', '-n', ns],
      ['update', 'clonesets.apps.kruise.io', '--subresource=status', '-n', ns],
      ['patch', 'clonesets.apps.kruise.io', '-n', ns],
      ['watch', 'nodes'],
      ['update', 'controllerrevisions.apps', '-n', ns],
      ['delete', 'persistentvolumeclaims', '-n', 'default'],
      ['create', 'events', '-n', ns],
      ['update', 'leases.coordination.k8s.io', '-n', ns],
      ['watch', 'leases.coordination.k8s.io', '-n', ns],
    ];
    const denied: string[][] = [
      ['delete', 'namespaces'],
      ['get', 'secrets', '-n', ns],
      ['list', 'secrets', '-A'],
      ['get', 'configmaps', '-n', ns],
      ['create', 'clusterroles'],
      ['create', 'clusterrolebindings'],
      ['impersonate', 'serviceaccounts'],
      ['update', 'pods', '-n', ns],
      ['get', 'pods', '-n', ns],
      ['create', 'pods', '--subresource=exec', '-n', ns],
      ['create', 'pods', '--subresource=eviction', '-n', ns],
      ['delete', 'nodes'],
      ['patch', 'nodes'],
      ['update', 'clonesets.apps.kruise.io', '-n', ns],
      ['delete', 'clonesets.apps.kruise.io', '-n', ns],
      ['create', 'clonesets.apps.kruise.io', '-n', ns],
      ['create', 'deployments.apps', '-n', ns],
      ['get', 'events', '-n', ns],
      ['update', 'leases.coordination.k8s.io', '-n', 'kube-system'],
      ['create', 'leases.coordination.k8s.io', '-n', 'default'],
      ['create', 'serviceaccounts/token', '-n', ns],
      ['list', 'leases.coordination.k8s.io', '-n', ns],
    ];
    for (const a of allowed) assert.equal(can(a), true, `should be allowed: ${a.join(' ')}`);
    for (const d of denied) assert.equal(can(d), false, `should be denied: ${d.join(' ')}`);
  });
});
