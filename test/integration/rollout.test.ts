// Rollouts against the real control plane: partition (the manual's example), ReCreate with maxUnavailable and
// maxSurge (bounds sampled from a pod WATCH stream, not by sleeping), progressDeadlineSeconds, pause/resume,
// template rollback to an earlier revision, and revision history truncation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetCondition, CloneSetSpec, CloneSetStatus } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CONTROLLER_REVISIONS, EVENTS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { ControllerRevision, Pod } from '../../src/kube/types.ts';
import { activePods, eventsOf, isActive, isReady, newCloneSet, revisionOf } from '../helpers/cloneset.ts';
import { eventually, kubectl, kubectlOk, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';
import { PodSampler } from '../helpers/watch-sampler.ts';

type Options = Pick<CloneSetSpec, 'updateStrategy' | 'minReadySeconds' | 'progressDeadlineSeconds' | 'revisionHistoryLimit'> & {
  readonly replicas: number;
  readonly image?: string;
};

function cloneSetOf(namespace: string, name: string, o: Options): CloneSet {
  const { replicas, image, ...spec } = o;
  return newCloneSet(namespace, name, replicas, { labels: { app: name }, container: { name: 'nginx', image: image ?? 'nginx:alpine' }, spec });
}

const progressing = (s: CloneSetStatus | undefined): CloneSetCondition | undefined => s?.conditions?.find((c) => c.type === 'Progressing');

describe('rollouts on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'rollout');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  const get = (name: string): Promise<CloneSet> => client.get<CloneSet>(CLONESETS, ns, name);
  const patch = (name: string, body: unknown): Promise<CloneSet> => client.patch<CloneSet>(CLONESETS, ns, name, body, 'merge');
  const setImage = (name: string, image: string): Promise<CloneSet> => patch(name, { spec: { template: { spec: { containers: [{ name: 'nginx', image }] } } } });
  const pods = (app: string): Promise<Pod[]> => activePods(client, ns, app);

  /** Every pod on the update revision and Ready, the count right, and the status saying so for this generation. */
  async function rolledOut(name: string, replicas: number, timeoutMs = 180_000): Promise<CloneSet> {
    return eventually(
      `${name}: ${replicas} ready pods on the update revision`,
      async () => {
        const cs = await get(name);
        const s = cs.status;
        if (s === undefined || s.observedGeneration !== cs.metadata.generation) return undefined;
        const all = await pods(name);
        const done = all.length === replicas && all.every((p) => isReady(p) && revisionOf(p) === s.updateRevision);
        return done && s.updatedReadyReplicas === replicas && s.replicas === replicas && s.currentRevision === s.updateRevision ? cs : undefined;
      },
      { timeoutMs },
    );
  }

  it("the manual's partition example: 5 replicas, partition 3 → exactly 2 pods on sample-56dfb978d4", async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'sample', { replicas: 5, progressDeadlineSeconds: 600 }));
    await rolledOut('sample', 5);
    await patch('sample', { spec: { updateStrategy: { partition: 3 }, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } });
    const cs = await eventually(
      '2 updated ready pods and the partition available',
      async () => {
        const c = await get('sample');
        const s = c.status;
        return s?.observedGeneration === 2 && s.updatedReadyReplicas === 2 && s.readyReplicas === 5 && progressing(s)?.reason === 'ProgressPartitionAvailable' ? c : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.equal(cs.metadata.generation, 2);
    const s = cs.status;
    assert.equal(s?.replicas, 5);
    assert.equal(s?.readyReplicas, 5);
    assert.equal(s?.availableReplicas, 5);
    assert.equal(s?.updatedReplicas, 2);
    assert.equal(s?.updatedReadyReplicas, 2);
    assert.equal(s?.updatedAvailableReplicas, 2);
    assert.equal(s?.expectedUpdatedReplicas, 2);
    assert.equal(s?.currentRevision, 'sample-d4d4fb5bd');
    assert.equal(s?.updateRevision, 'sample-56dfb978d4');
    const byRevision = (await pods('sample')).map(revisionOf).sort();
    assert.deepEqual(byRevision, ['sample-56dfb978d4', 'sample-56dfb978d4', 'sample-d4d4fb5bd', 'sample-d4d4fb5bd', 'sample-d4d4fb5bd']);
    const table = kubectlOk(['get', 'pod', '-n', ns, '-l', 'app=sample', '-L', 'controller-revision-hash']);
    assert.equal(table.split('\n').filter((l) => l.includes('sample-56dfb978d4')).length, 2, table);

    // A percent partition: 40 % of 5 = ceil(2) pods stay old → 3 updated (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go).
    await patch('sample', { spec: { updateStrategy: { partition: '40%' } } });
    const pct = await eventually(
      '3 updated pods',
      async () => {
        const st = (await get('sample')).status;
        return st?.updatedReadyReplicas === 3 && st.expectedUpdatedReplicas === 3 && st.readyReplicas === 5 ? st : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.equal(pct.updatedReplicas, 3);
    // kruise#953: a percent that rounds up to every replica still updates one pod — 99 % of 5 → 4 old, 1 new.
    // Without CloneSetPartitionRollback the 3 updated pods stay; only the expectation changes.
    await patch('sample', { spec: { updateStrategy: { partition: '99%' } } });
    const atLeastOne = await eventually('expectedUpdatedReplicas 1', async () => {
      const st = (await get('sample')).status;
      return st?.expectedUpdatedReplicas === 1 ? st : undefined;
    });
    assert.equal(atLeastOne.updatedReplicas, 3);
    // `.status.updatedReplicas >= .status.expectedUpdatedReplicas` is the manual's "partition rolled out" test.
    assert.ok((atLeastOne.updatedReplicas ?? 0) >= (atLeastOne.expectedUpdatedReplicas ?? 0));
  });

  it('a 20-pod ReCreate rollout with maxUnavailable 2 never has more than 2 pods unavailable and ends CloneSetAvailable', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'mu', { replicas: 20, updateStrategy: { maxUnavailable: 2 }, progressDeadlineSeconds: 600 }));
    const first = await rolledOut('mu', 20);
    const sampler = new PodSampler(client, ns, 'mu', 20);
    await sampler.start();
    try {
      await setImage('mu', 'nginx:mainline');
      const cs = await rolledOut('mu', 20);
      assert.notEqual(cs.status?.updateRevision, first.status?.updateRevision);
      const done = await eventually('Progressing CloneSetAvailable', async () => {
        const c = progressing((await get('mu')).status);
        return c?.reason === 'CloneSetAvailable' ? c : undefined;
      });
      assert.equal(done.status, 'True');
      assert.ok(sampler.events > 40, `sampled ${sampler.events} watch events`);
      assert.ok(sampler.maxUnavailable <= 2, `at most 2 unavailable pods, saw ${sampler.maxUnavailable}\n${sampler.worst}`);
      assert.ok(sampler.maxUnavailable >= 1, 'the rollout did use its budget');
      assert.ok(sampler.maxActive <= 20, `no surge without maxSurge, saw ${sampler.maxActive}`);
    } finally {
      sampler.stop();
    }
    const events = await eventsOf(client, ns, 'mu');
    const reasons = new Set(events.map((e) => e.reason));
    for (const r of ['SuccessfulCreate', 'SuccessfulDelete', 'SuccessfulUpdatePodReCreate']) assert.ok(reasons.has(r), `event ${r} in ${[...reasons].join(', ')}`);
  });

  it('a 20-pod ReCreate rollout with maxSurge 3 (maxUnavailable 0) never has more than 23 pods and never an unavailable one', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'surge', { replicas: 20, updateStrategy: { maxSurge: 3, maxUnavailable: 0 }, progressDeadlineSeconds: 600 }));
    await rolledOut('surge', 20);
    const sampler = new PodSampler(client, ns, 'surge', 20);
    await sampler.start();
    try {
      await setImage('surge', 'nginx:mainline');
      await rolledOut('surge', 20);
      await eventually('Progressing CloneSetAvailable', async () => (progressing((await get('surge')).status)?.reason === 'CloneSetAvailable' ? true : undefined));
      assert.ok(sampler.maxActive <= 23, `at most replicas + maxSurge = 23 active pods, saw ${sampler.maxActive}\n${sampler.worst}`);
      assert.equal(sampler.maxActive, 23, 'the full surge was used');
      assert.equal(sampler.maxUnavailable, 0, `maxUnavailable 0: never fewer than 20 ready pods\n${sampler.worst}`);
    } finally {
      sampler.stop();
    }
  });

  it('progressDeadlineSeconds 10 with pods that can never be scheduled → Progressing=False/ProgressDeadlineExceeded, and kubectl wait sees it', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'stuck', { replicas: 3, updateStrategy: { maxUnavailable: 1 }, progressDeadlineSeconds: 10 }));
    await rolledOut('stuck', 3);
    await eventually('CloneSetAvailable first', async () => (progressing((await get('stuck')).status)?.reason === 'CloneSetAvailable' ? true : undefined));
    const started = Date.now();
    const updated = await patch('stuck', { spec: { template: { spec: { nodeSelector: { 'example.com/no-such-node': 'true' } } } } });
    const r = kubectl(['wait', '-n', ns, '--for=condition=Progressing=false', 'clone/stuck', '--timeout=90s']);
    assert.equal(r.code, 0, `kubectl wait: ${r.stderr}`);
    assert.match(r.stdout, /condition met/);
    const elapsed = Date.now() - started;
    // Condition times have whole-second precision (as in Kubernetes), so the deadline may end up to 1 s early.
    assert.ok(elapsed >= 9_000, `the deadline is 10 s, the condition turned False after ${elapsed} ms`);
    const cs = await get('stuck');
    const cond = progressing(cs.status);
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'ProgressDeadlineExceeded');
    assert.equal(cond?.message, `CloneSet revision ${cs.status?.updateRevision ?? ''} has timed out progressing`);
    assert.equal(cs.metadata.generation, updated.metadata.generation);
    // The timeout does not stop the controller: the new pod exists and stays Pending (no node matches).
    const stuck = (await pods('stuck')).filter((p) => revisionOf(p) === cs.status?.updateRevision);
    assert.ok(stuck.length >= 1 && stuck.every((p) => !isReady(p) && (p.spec.nodeName ?? '') === ''), JSON.stringify(stuck.map((p) => p.status)));
    assert.equal((await pods('stuck')).filter(isReady).length, 2, 'maxUnavailable 1 keeps 2 old pods');
  });

  it('pausing mid-rollout stops updates while scaling continues; resuming continues where it stopped', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'pz', { replicas: 10, minReadySeconds: 2, updateStrategy: { maxUnavailable: 1 }, progressDeadlineSeconds: 600 }));
    const initial = await rolledOut('pz', 10);
    await setImage('pz', 'nginx:mainline');
    const target = await eventually('a new update revision', async () => {
      const s = (await get('pz')).status;
      return s?.updateRevision !== undefined && s.updateRevision !== initial.status?.updateRevision ? s.updateRevision : undefined;
    });
    await eventually('3 pods updated', async () => (((await get('pz')).status?.updatedReplicas ?? 0) >= 3 ? true : undefined), { intervalMs: 50 });
    const pausedAt = await patch('pz', { spec: { updateStrategy: { paused: true } } });
    await eventually('the controller acknowledged the pause', async () => {
      const cs = await get('pz');
      return cs.status?.observedGeneration === pausedAt.metadata.generation && progressing(cs.status)?.reason === 'CloneSetPaused' ? true : undefined;
    });
    const atPause = await pods('pz');
    const frozen = atPause.filter((p) => revisionOf(p) !== target && p.metadata.labels?.['apps.kruise.io/specified-delete'] === undefined);
    const updatedBefore = atPause.filter((p) => revisionOf(p) === target).map((p) => p.metadata.name ?? '');
    assert.ok(
      frozen.length > 0 && frozen.length < 10,
      `${frozen.length} old pods left unmarked at the pause: ${JSON.stringify(atPause.map((p) => [p.metadata.name, revisionOf(p), p.metadata.labels?.['apps.kruise.io/specified-delete'], isReady(p)]))}`,
    );

    // Scaling continues while paused: 10 → 12, the new pods at the update revision.
    kubectlOk(['scale', 'clone', 'pz', '-n', ns, '--replicas=12']);
    await eventually(
      '12 ready pods while paused',
      async () => {
        const cs = await get('pz');
        const all = await pods('pz');
        return all.length === 12 && all.every(isReady) && cs.status?.readyReplicas === 12 && cs.status.observedGeneration === cs.metadata.generation ? true : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const whilePaused = await pods('pz');
    for (const p of frozen) {
      const now = whilePaused.find((q) => q.metadata.uid === p.metadata.uid);
      assert.ok(now !== undefined, `old pod ${p.metadata.name ?? ''} was deleted while paused`);
      assert.equal(now.metadata.labels?.['apps.kruise.io/specified-delete'], undefined, `old pod ${p.metadata.name ?? ''} was marked while paused`);
      assert.equal(revisionOf(now), revisionOf(p));
    }
    assert.equal(progressing((await get('pz')).status)?.reason, 'CloneSetPaused');

    await patch('pz', { spec: { updateStrategy: { paused: false } } });
    const done = await rolledOut('pz', 12);
    assert.equal(done.status?.updateRevision, target);
    const final = await pods('pz');
    for (const name of updatedBefore)
      assert.ok(
        final.some((p) => p.metadata.name === name),
        `${name}, updated before the pause, was not recreated`,
      );
    await eventually('CloneSetAvailable after the resume', async () => (progressing((await get('pz')).status)?.reason === 'CloneSetAvailable' ? true : undefined));
  });

  it('rolling the template back reuses the earlier revision (same name, bumped number, no new revision)', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'rb', { replicas: 3, image: 'nginx:1.25', updateStrategy: { maxUnavailable: 3 } }));
    const v1 = (await rolledOut('rb', 3)).status?.updateRevision ?? '';
    await setImage('rb', 'nginx:1.26');
    const v2 = (await rolledOut('rb', 3)).status?.updateRevision ?? '';
    assert.notEqual(v1, v2);
    await setImage('rb', 'nginx:1.25');
    const back = await rolledOut('rb', 3);
    assert.equal(back.status?.updateRevision, v1);
    assert.equal(back.status?.currentRevision, v1);
    const revs = (await client.list<ControllerRevision>(CONTROLLER_REVISIONS, ns, { labelSelector: 'app=rb' })).items;
    assert.deepEqual(revs.map((r) => r.metadata.name).sort(), [v1, v2].sort());
    assert.equal(revs.find((r) => r.metadata.name === v1)?.revision, 3, 'the reused revision gets the next number');
    assert.ok((await pods('rb')).every((p) => revisionOf(p) === v1));
  });

  it('revisionHistoryLimit 2 after 4 template changes keeps the live revision and the 2 newest others', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'hist', { replicas: 2, image: 'nginx:1.21', revisionHistoryLimit: 2, updateStrategy: { maxUnavailable: 2 } }));
    const names = [(await rolledOut('hist', 2)).status?.updateRevision ?? ''];
    for (const image of ['nginx:1.22', 'nginx:1.23', 'nginx:1.24', 'nginx:1.25']) {
      await setImage('hist', image);
      names.push((await rolledOut('hist', 2)).status?.updateRevision ?? '');
    }
    assert.equal(new Set(names).size, 5);
    const live = names[4] ?? '';
    const kept = await eventually('history truncated to live + 2', async () => {
      const revs = (await client.list<ControllerRevision>(CONTROLLER_REVISIONS, ns, { labelSelector: 'app=hist' })).items;
      return revs.length === 3 ? revs.map((r) => r.metadata.name ?? '').sort() : undefined;
    });
    assert.deepEqual(kept, [live, names[3] ?? '', names[2] ?? ''].sort());
  });
});

describe('CloneSetPartitionRollback and FailedScale on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'rollback');
    controller = startController(ns, ['--feature-gates=CloneSetPartitionRollback=true']);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  const status = async (name: string): Promise<CloneSetStatus | undefined> => (await client.get<CloneSet>(CLONESETS, ns, name)).status;

  it('raising the partition rolls updated pods back to the current revision', async () => {
    await client.create(CLONESETS, ns, cloneSetOf(ns, 'sample', { replicas: 5, updateStrategy: { maxUnavailable: 2 } }));
    await eventually('5 ready pods', async () => ((await status('sample'))?.updatedReadyReplicas === 5 ? true : undefined), { timeoutMs: 90_000 });
    await client.patch(
      CLONESETS,
      ns,
      'sample',
      { spec: { updateStrategy: { partition: 2 }, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } },
      'merge',
    );
    await eventually(
      '3 updated ready pods',
      async () => {
        const s = await status('sample');
        return s?.updatedReadyReplicas === 3 && s.readyReplicas === 5 && s.replicas === 5 ? true : undefined;
      },
      { timeoutMs: 90_000 },
    );
    await client.patch(CLONESETS, ns, 'sample', { spec: { updateStrategy: { partition: 5 } } }, 'merge');
    const s = await eventually(
      'every pod back on the current revision',
      async () => {
        const st = await status('sample');
        const all = (await client.list<Pod>(PODS, ns, { labelSelector: 'app=sample' })).items.filter(isActive);
        const back = all.length === 5 && all.every((p) => isReady(p) && revisionOf(p) === 'sample-d4d4fb5bd');
        return back && st?.updatedReplicas === 0 && st.readyReplicas === 5 ? st : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.equal(s.expectedUpdatedReplicas, 0);
    assert.equal(s.currentRevision, 'sample-d4d4fb5bd');
    assert.equal(s.updateRevision, 'sample-56dfb978d4');
  });

  it('a pod create refused by the API server shows up as a FailedScale condition with its error', async () => {
    // LimitRanger admission (no controller needed): containers may not ask for more than 100m cpu.
    await client.create({ group: '', version: 'v1', plural: 'limitranges', namespaced: true }, ns, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'small' },
      spec: { limits: [{ type: 'Container', max: { cpu: '100m' } }] },
    });
    const cs = cloneSetOf(ns, 'greedy', { replicas: 2 });
    const template = { ...cs.spec.template, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine', resources: { limits: { cpu: '200m' } } }] } };
    await client.create(CLONESETS, ns, { ...cs, spec: { ...cs.spec, template } });
    const cond = await eventually('a FailedScale condition', async () => (await status('greedy'))?.conditions?.find((c) => c.type === 'FailedScale'));
    assert.equal(cond.status, 'True');
    assert.match(cond.message ?? '', /forbidden: maximum cpu usage per Container is 100m, but limit is 200m/);
    const events = (await client.list<{ reason?: string; type?: string; message?: string; involvedObject?: { name?: string } }>(EVENTS, ns)).items;
    assert.ok(events.some((e) => e.involvedObject?.name === 'greedy' && e.type === 'Warning' && e.reason === 'FailedCreate' && /maximum cpu usage/.test(e.message ?? '')));
    assert.equal((await status('greedy'))?.replicas ?? 0, 0);
  });
});
