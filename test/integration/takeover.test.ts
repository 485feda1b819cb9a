// Taking over from Kruise: a cluster state built from objects exactly as Kruise writes them — a CloneSet stored
// through v1beta1 (Kruise HEAD) and one created through v1alpha1 (Kruise ≤ 1.9), their pods (labels, lifecycle state,
// timestamp, in-place update state, owner references of either version), PVCs and ControllerRevisions (names,
// hashes, data) — is adopted by our controller without a pod deleted, created or restarted; then a rollout works.
// Also: both versions list the same objects, and a v1beta1 OnDelete CloneSet updates only the pods someone deletes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetStatus } from '../../src/api/cloneset.ts';
import type { CloneSetV1beta1 } from '../../src/api/cloneset-v1beta1.ts';
import { defaultPodTemplate, defaultVolumeClaimTemplate } from '../../src/api/defaults.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CLONESETS_V1BETA1, CONTROLLER_REVISIONS, NAMESPACES, PODS, PVCS } from '../../src/kube/resources.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod, PodTemplateSpec } from '../../src/kube/types.ts';
import { newRevision } from '../../src/cloneset/plan/revisions.ts';
import { activePods, controllerPassed, eventsOf, isReady, names, pvcsOf, revisionOf } from '../helpers/cloneset.ts';
import { eventually, kubectlOk, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const REVISION = 'sample-d4d4fb5bd'; // Kruise's name for the manual's sample template (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision_test.go)
const hashOf = (revision: string): string => revision.slice(revision.lastIndexOf('-') + 1);
const IDS = ['b4x2k', 'c7m9p', 'd2q8z'];
const KRUISE_TIMESTAMP = '2025-01-02T03:04:05Z';

/** The sample template as Kruise's mutating webhook stores it (pod-template defaults, docs/features.md#admission; Kruise apis/apps/defaults/v1alpha1.go). */
const template = (claims: readonly string[] = []): PodTemplateSpec =>
  defaultPodTemplate({
    metadata: { labels: { app: 'sample' } },
    spec: {
      containers: [{ name: 'nginx', image: 'nginx:alpine', ...(claims.length > 0 ? { volumeMounts: claims.map((c) => ({ name: c, mountPath: `/mnt/${c}` })) } : {}) }],
    },
  });

const claimTemplates = (claims: readonly string[]): PersistentVolumeClaim[] =>
  claims.map((c) => defaultVolumeClaimTemplate({ metadata: { name: c }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }));

/** A pod as Kruise's CloneSet controller creates it (docs/features.md#scaling; Kruise pkg/controller/cloneset/core/cloneset_core.go), owned through `ownerApiVersion`. */
function kruisePod(
  cs: { metadata: { name?: string; uid?: string } },
  revision: string,
  id: string,
  ownerApiVersion: string,
  claims: readonly string[],
  annotations: Record<string, string> = {},
): Pod {
  const t = template(claims);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `sample-${id}`,
      generateName: 'sample-',
      labels: {
        app: 'sample',
        'controller-revision-hash': revision,
        'pod-template-hash': hashOf(revision),
        'apps.kruise.io/cloneset-instance-id': id,
        'lifecycle.apps.kruise.io/state': 'Normal',
      },
      annotations: { 'lifecycle.apps.kruise.io/timestamp': KRUISE_TIMESTAMP, ...annotations },
      ownerReferences: [{ apiVersion: ownerApiVersion, kind: 'CloneSet', name: cs.metadata.name ?? '', uid: cs.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      ...t.spec,
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      ...(claims.length > 0 ? { volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: `${c}-sample-${id}` } })) } : {}),
    },
  };
}

/** The state annotation a finished in-place update leaves (docs/features.md#in-place-update; Kruise apis/apps/pub/inplace_update.go): the pod came from nginx:1.25. */
const inPlaceState = JSON.stringify({
  revision: REVISION,
  updateTimestamp: KRUISE_TIMESTAMP,
  lastContainerStatuses: { nginx: { imageID: 'docker.io/library/nginx@sha256:0000000000000000000000000000000000000000000000000000000000000125' } },
  updateImages: true,
  containerBatchesRecord: [{ timestamp: KRUISE_TIMESTAMP, containers: ['nginx'] }],
});

/** Kruise's status right after creating the pods (none ready yet): our controller must bring it up to date. */
const kruiseStatus = (generation: number, revision: string): CloneSetStatus => ({
  observedGeneration: generation,
  replicas: 3,
  readyReplicas: 0,
  availableReplicas: 0,
  updatedReplicas: 3,
  updatedReadyReplicas: 0,
  updatedAvailableReplicas: 0,
  expectedUpdatedReplicas: 3,
  updateRevision: revision,
  currentRevision: revision,
  collisionCount: 0,
  labelSelector: 'app=sample',
});

interface Fingerprint {
  readonly uid: string;
  readonly restarts: number;
  readonly image: string;
}
async function fingerprints(client: KubeClient, ns: string): Promise<Map<string, Fingerprint>> {
  const pods = await client.list<Pod>(PODS, ns);
  return new Map(
    pods.items.map((p) => [
      p.metadata.name ?? '',
      { uid: p.metadata.uid ?? '', restarts: p.status?.containerStatuses?.[0]?.restartCount ?? 0, image: p.spec.containers[0]?.image ?? '' },
    ]),
  );
}

const revisionsOf = async (client: KubeClient, ns: string): Promise<string[]> =>
  (await client.list<ControllerRevision>(CONTROLLER_REVISIONS, ns)).items.map((r) => `${r.metadata.name ?? ''}#${String(r.revision)}:${JSON.stringify(r.data)}`).sort();

describe('taking over CloneSets, pods, PVCs and revisions that Kruise wrote', () => {
  let client: KubeClient;
  let beta: string; // CloneSet stored through v1beta1 (Kruise HEAD), in-place updates, pods owned through v1beta1
  let alpha: string; // CloneSet created through v1alpha1 (Kruise ≤ 1.9), PVCs, pods owned through v1alpha1 (one through v1beta1)
  let controllers: ControllerProcess[] = [];
  const before_: Record<string, Map<string, Fingerprint>> = {};
  const revisionsBefore: Record<string, string[]> = {};
  const kruiseRevision: Record<string, string> = {};

  before(async () => {
    client = await testClient();
    beta = await newNamespace(client, 'takeover-beta');
    alpha = await newNamespace(client, 'takeover-alpha');

    // Kruise HEAD: stored as v1beta1, exactly as its webhook defaulted it.
    const b = await client.create<CloneSetV1beta1>(CLONESETS_V1BETA1, beta, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'sample', namespace: beta, labels: { app: 'sample' } },
      spec: {
        replicas: 3,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'sample' } },
        template: template(),
        scaleStrategy: { enablePVCReuse: false },
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: { partition: 0, maxUnavailable: '20%', maxSurge: 0, podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: {} },
        },
      },
    });
    // Kruise ≤ 1.9: written through v1alpha1 (stored as v1beta1 by the conversion), PVC reuse on by default.
    const a = await client.create<CloneSet>(CLONESETS, alpha, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'sample', namespace: alpha, labels: { app: 'sample' } },
      spec: {
        replicas: 3,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'sample' } },
        template: template(['data']),
        volumeClaimTemplates: claimTemplates(['data']),
        updateStrategy: { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
      },
    });

    for (const [ns, cs, claims] of [
      [beta, b, []],
      [alpha, a, ['data']],
    ] as const) {
      const { volumeClaimTemplates: _v, ...specWithoutClaims } = a.spec;
      const revision = newRevision(
        {
          ...a,
          metadata: { ...cs.metadata },
          spec: { ...specWithoutClaims, template: template(claims), ...(claims.length > 0 ? { volumeClaimTemplates: claimTemplates(claims) } : {}) },
        },
        1,
        0,
      );
      kruiseRevision[ns] = revision.metadata.name ?? '';
      if (claims.length === 0) assert.equal(revision.metadata.name, REVISION, 'the revision Kruise names for this template (docs/features.md#revisions)');
      const { ownerReferences: _o, ...md } = revision.metadata;
      await client.create(CONTROLLER_REVISIONS, ns, {
        ...revision,
        metadata: {
          ...md,
          ownerReferences: [
            {
              apiVersion: ns === beta ? 'apps.kruise.io/v1beta1' : 'apps.kruise.io/v1alpha1',
              kind: 'CloneSet',
              name: 'sample',
              uid: cs.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
      });
      await client.update(
        CLONESETS_V1BETA1,
        ns,
        'sample',
        { ...(await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'sample')), status: kruiseStatus(cs.metadata.generation ?? 1, kruiseRevision[ns] ?? '') },
        { subresource: 'status' },
      );
    }

    for (const [i, id] of IDS.entries()) {
      await client.create(PODS, beta, kruisePod(b, REVISION, id, 'apps.kruise.io/v1beta1', [], i === 0 ? { 'apps.kruise.io/inplace-update-state': inPlaceState } : {}));
      await client.create(PVCS, alpha, {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: `data-sample-${id}`,
          labels: { app: 'sample', 'apps.kruise.io/cloneset-instance-id': id },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'sample', uid: a.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
      await client.create(PODS, alpha, kruisePod(a, kruiseRevision[alpha] ?? '', id, i === 2 ? 'apps.kruise.io/v1beta1' : 'apps.kruise.io/v1alpha1', ['data']));
    }
    for (const ns of [beta, alpha]) {
      await eventually(`the kubelet runs the pods in ${ns}`, async () => {
        const pods = await client.list<Pod>(PODS, ns);
        return pods.items.length === 3 && pods.items.every((p) => p.status?.phase === 'Running') ? true : undefined;
      });
      before_[ns] = await fingerprints(client, ns);
      revisionsBefore[ns] = await revisionsOf(client, ns);
    }
    controllers = [startController(beta), startController(alpha)];
  });

  after(async () => {
    await Promise.all(controllers.map((c) => c.stop()));
    for (const ns of [beta, alpha]) await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  for (const which of ['beta', 'alpha'] as const) {
    it(`adopts the ${which === 'beta' ? 'v1beta1-stored' : 'v1alpha1-created'} CloneSet: status correct, no pod deleted, created or restarted, revisions unchanged`, async () => {
      const ns = which === 'beta' ? beta : alpha;
      const status = await eventually(
        'our status: 3 ready and available on the Kruise revision',
        async () => {
          const s = (await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'sample')).status;
          return s?.readyReplicas === 3 && s.availableReplicas === 3 && s.updatedAvailableReplicas === 3 ? s : undefined;
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(status.replicas, 3);
      assert.equal(status.updatedReplicas, 3);
      assert.equal(status.expectedUpdatedReplicas, 3);
      assert.equal(status.updateRevision, kruiseRevision[ns]);
      assert.equal(status.currentRevision, kruiseRevision[ns]);
      assert.equal(status.labelSelector, 'app=sample');
      // After the controller's passes over the adopted CloneSet: any create, delete or in-place restart it decides is made.
      await controllerPassed(client, ns, 'sample');
      assert.deepEqual(await fingerprints(client, ns), before_[ns], 'same pods (uid), no restart, same image');
      assert.deepEqual(await revisionsOf(client, ns), revisionsBefore[ns], 'same ControllerRevisions, same data');
      const reasons = (await eventsOf(client, ns, 'sample')).map((e) => e.reason ?? '');
      assert.ok(!reasons.some((r) => /SuccessfulCreate|SuccessfulDelete|SuccessfulUpdatePod/.test(r)), `no create/delete/update events: ${reasons.join(', ')}`);
      if (which === 'alpha')
        assert.deepEqual(
          names(await pvcsOf(client, ns, 'sample')),
          IDS.map((id) => `data-sample-${id}`),
          'the PVCs are kept',
        );
    });
  }

  it('rolls the v1beta1 CloneSet out in place (same pods, new image) after the takeover', async () => {
    await client.patch(CLONESETS_V1BETA1, beta, 'sample', { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } }, 'merge');
    const pods = await eventually(
      '3 ready pods on nginx:mainline',
      async () => {
        const list = await activePods(client, beta, 'sample');
        return list.length === 3 && list.every((p) => p.spec.containers[0]?.image === 'nginx:mainline' && isReady(p) && revisionOf(p) !== REVISION) ? list : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.deepEqual(pods.map((p) => p.metadata.uid).sort(), [...(before_[beta]?.values() ?? [])].map((f) => f.uid).sort(), 'updated in place: the same pods');
    const s = await eventually('status: all updated', async () => {
      const st = (await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, beta, 'sample')).status;
      return st?.updatedReadyReplicas === 3 && st.currentRevision === st.updateRevision ? st : undefined;
    });
    assert.notEqual(s.updateRevision, REVISION);
  });

  it('rolls the v1alpha1 CloneSet out (ReCreate) through the v1alpha1 endpoint after the takeover', async () => {
    await client.patch(
      CLONESETS,
      alpha,
      'sample',
      { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline', volumeMounts: [{ name: 'data', mountPath: '/mnt/data' }] }] } } } },
      'merge',
    );
    await eventually(
      '3 ready pods on the new revision',
      async () => {
        const list = await activePods(client, alpha, 'sample');
        return list.length === 3 && list.every((p) => p.spec.containers[0]?.image === 'nginx:mainline' && isReady(p)) ? list : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const s = await eventually(
      'status: all updated',
      async () => {
        const st = (await client.get<CloneSet>(CLONESETS, alpha, 'sample')).status;
        return st?.updatedReadyReplicas === 3 && st.currentRevision === st.updateRevision ? st : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.notEqual(s.updateRevision, kruiseRevision[alpha]);
  });

  it('lists the same CloneSets through clonesets.v1beta1.apps.kruise.io and clonesets.v1alpha1.apps.kruise.io', () => {
    for (const ns of [beta, alpha]) {
      const v1beta1 = kubectlOk(['get', 'clonesets.v1beta1.apps.kruise.io', '-n', ns, '-o', 'jsonpath={range .items[*]}{.apiVersion} {.metadata.uid}{"\\n"}{end}']).trim();
      const v1alpha1 = kubectlOk(['get', 'clonesets.v1alpha1.apps.kruise.io', '-n', ns, '-o', 'jsonpath={range .items[*]}{.apiVersion} {.metadata.uid}{"\\n"}{end}']).trim();
      assert.match(v1beta1, /^apps\.kruise\.io\/v1beta1 \S+$/);
      assert.equal(v1alpha1, v1beta1.replace('v1beta1', 'v1alpha1'), 'the same object through either version');
      for (const version of ['v1alpha1', 'v1beta1']) {
        const table = kubectlOk(['get', `clonesets.${version}.apps.kruise.io`, '-n', ns]);
        assert.match(
          table,
          /NAME\s+DESIRED\s+UPDATED\s+UPDATED_READY\s+UPDATED_AVAILABLE\s+READY\s+TOTAL\s+AGE\n\S+\s+3\s+3\s+3\s+3\s+3\s+3\s/,
          `printer columns through ${version}`,
        );
      }
    }
  });
});

describe('updateStrategy OnDelete (v1beta1)', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'ondelete');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('moves a pod to the new template only when someone deletes it', async () => {
    await client.create<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'od', namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'od' } },
        template: { metadata: { labels: { app: 'od' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
        updateStrategy: { type: 'OnDelete' },
      },
    });
    const first = await eventually(
      '3 ready pods',
      async () => {
        const list = await activePods(client, ns, 'od');
        return list.length === 3 && list.every(isReady) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const oldRevision = revisionOf(first[0] ?? { metadata: {}, spec: { containers: [] } });

    await client.patch(CLONESETS_V1BETA1, ns, 'od', { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } }, 'merge');
    const seen = await eventually('the controller sees the new revision (status)', async () => {
      const cs = await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'od');
      return cs.status?.observedGeneration === cs.metadata.generation && cs.status?.updateRevision !== oldRevision ? cs.status : undefined;
    });
    assert.equal(seen?.updatedReplicas, 0);
    assert.equal(seen?.expectedUpdatedReplicas, 3, 'OnDelete expects every pod on the new revision');
    await controllerPassed(client, ns, 'od');
    assert.deepEqual(names(await activePods(client, ns, 'od')), names(first), 'no pod replaced by the controller');

    const victim = first[0]?.metadata.name ?? '';
    await client.delete(PODS, ns, victim);
    const after = await eventually(
      'a replacement on the new revision, the other two untouched',
      async () => {
        const list = await activePods(client, ns, 'od');
        const fresh = list.filter((p) => revisionOf(p) === seen?.updateRevision);
        return list.length === 3 && fresh.length === 1 && list.every(isReady) && !list.some((p) => p.metadata.name === victim) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(after.filter((p) => p.spec.containers[0]?.image === 'nginx:mainline').length, 1);
    assert.deepEqual(
      after
        .filter((p) => revisionOf(p) === oldRevision)
        .map((p) => p.metadata.uid)
        .sort(),
      first
        .slice(1)
        .map((p) => p.metadata.uid)
        .sort(),
    );
    const status = await eventually('status: 1 of 3 updated', async () => {
      const s = (await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'od')).status;
      return s?.updatedReadyReplicas === 1 && s.readyReplicas === 3 ? s : undefined;
    });
    assert.equal(status.currentRevision, oldRevision);
    const alphaView = await client.get<CloneSet>(CLONESETS, ns, 'od');
    assert.equal(alphaView.spec.updateStrategy?.type, 'OnDelete', 'the v1alpha1 view says OnDelete too');
  });
});
