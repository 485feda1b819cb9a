// planCloneSet, scaling (docs/features.md#scaling, #deletion-order; Kruise pkg/controller/cloneset/core/cloneset_core.go): creation, scale-in order, specified deletes,
// inactive pods, claiming. Snapshots are built with the test builders; a story of several passes is a table of
// steps, each with the pods the test says exist by then.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction, PodToCreate, PodToDelete } from './actions.ts';
import { planCloneSet, type Snapshot } from './index.ts';
import { INSTANCE_ID_ALPHABET, type InstanceIdSource } from './instance-ids.ts';
import { aCloneSet, aPod, aPvc, fixedIds, plannerConfig, readyPods, revisions, sequentialIds, T0 } from './testing/builders.ts';
import { describeAction } from './testing/describe.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim } from '../../kube/types.ts';

function snapshot(cloneSet: CloneSet, pods: readonly Pod[], pvcs: readonly PersistentVolumeClaim[] = []): Snapshot {
  return { cloneSet, pods, pvcs, nodes: new Map(), nowMs: T0 };
}

function planOf(cs: CloneSet, pods: readonly Pod[], opts: { pvcs?: readonly PersistentVolumeClaim[]; current?: string; update?: string; ids?: InstanceIdSource } = {}) {
  return planCloneSet(snapshot(cs, pods, opts.pvcs ?? []), revisions(cs, opts.current ?? 'r1', opts.update ?? opts.current ?? 'r1'), plannerConfig(), opts.ids ?? sequentialIds());
}

const created = (actions: readonly PlanAction[]): PodToCreate[] => actions.flatMap((a) => (a.kind === 'CreatePods' ? a.pods : []));
const deleted = (actions: readonly PlanAction[]): PodToDelete[] => actions.flatMap((a) => (a.kind === 'DeletePods' ? a.pods : []));
const deletedNames = (actions: readonly PlanAction[]): string[] => deleted(actions).map((d) => d.pod.name);
const kinds = (actions: readonly PlanAction[]): string[] => actions.map((a) => a.kind);

describe('scale out (docs/features.md#scaling)', () => {
  test('scaling 0 → 5 creates 5 pods in one pass, with unique sorted ids from the Kubernetes alphabet', () => {
    const cs = aCloneSet('sample').replicas(5).build();
    const p = planOf(cs, []);
    assert.equal(p.phase, 'scale');
    const pods = created(p.actions);
    assert.equal(pods.length, 5);
    const ids = pods.map((c) => c.pod.metadata.labels?.['apps.kruise.io/cloneset-instance-id'] ?? '');
    assert.equal(new Set(ids).size, 5, 'ids are unique');
    assert.deepEqual(ids, [...ids].sort(), 'ids are sorted');
    for (const id of ids) assert.match(id, new RegExp(`^[${INSTANCE_ID_ALPHABET}]{5}$`));
    assert.deepEqual(
      pods.map((c) => c.pod.metadata.name),
      ids.map((id) => `sample-${id}`),
    );
  });

  test('the created pod and PVC are exactly the objects Kruise creates (docs/features.md#scaling)', () => {
    const cs = aCloneSet('sample').replicas(1).volumeClaimTemplate('data-vol').build();
    const revs = { ...revisions(cs, '56dfb978d4'), collisionCount: 0 };
    const p = planCloneSet(snapshot(cs, []), revs, plannerConfig(), fixedIds('x7k2p'));
    const [only] = created(p.actions);
    assert.ok(only);
    assert.equal(only.revision, 'sample-56dfb978d4');
    const owner = {
      apiVersion: only.pod.metadata.ownerReferences?.[0]?.apiVersion ?? '',
      kind: 'CloneSet',
      name: 'sample',
      uid: 'uid-sample',
      controller: true,
      blockOwnerDeletion: true,
    };
    assert.match(owner.apiVersion, /^apps\.kruise\.io\/v1(alpha|beta)1$/);
    assert.deepEqual(only.pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'sample-x7k2p',
        generateName: 'sample-',
        namespace: 'default',
        labels: {
          app: 'sample',
          'controller-revision-hash': 'sample-56dfb978d4',
          'pod-template-hash': '56dfb978d4',
          'apps.kruise.io/cloneset-instance-id': 'x7k2p',
          'lifecycle.apps.kruise.io/state': 'PreparingNormal',
        },
        annotations: { 'lifecycle.apps.kruise.io/timestamp': '2025-01-02T03:04:05Z' },
        ownerReferences: [owner],
      },
      spec: {
        containers: [{ name: 'main', image: 'nginx:56dfb978d4' }],
        readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
        volumes: [{ name: 'data-vol', persistentVolumeClaim: { claimName: 'data-vol-sample-x7k2p', readOnly: false } }],
      },
    });
    assert.deepEqual(
      only.pvcs.map((c) => [c.metadata.name, c.metadata.labels, c.metadata.ownerReferences]),
      [['data-vol-sample-x7k2p', { app: 'sample', 'apps.kruise.io/cloneset-instance-id': 'x7k2p' }, [owner]]],
    );
  });

  test('after creation, one write per pod once it is scheduled: InPlaceUpdateReady and PreparingNormal → Normal together', () => {
    const cs = aCloneSet('sample').replicas(5).build();
    // (step 1/4) no pods: create 5
    const step1 = planOf(cs, []);
    assert.deepEqual(kinds(step1.actions), ['CreatePods']);
    const ids = created(step1.actions).map((c) => c.pod.metadata.labels?.['apps.kruise.io/cloneset-instance-id'] ?? '');
    assert.equal(ids.length, 5);
    const fresh = (id: string) => aPod(cs).instanceId(id).pending().state('PreparingNormal').inPlaceUpdateReady(undefined);
    // (step 2/4) the 5 pods exist, unscheduled: nothing is written (the pod cannot be Ready before it is scheduled)
    assert.deepEqual(
      planOf(
        cs,
        ids.map((id) => fresh(id).build()),
      ).actions,
      [],
    );
    // (step 3/4) scheduled: one pods/status write each, the condition and the Normal label
    const step3 = planOf(
      cs,
      ids.map((id) => fresh(id).onNode(`node-${id}`).build()),
    );
    assert.deepEqual(
      step3.actions.map((a) => (a.kind === 'SetInPlaceUpdateReady' ? `${a.kind}+${a.lifecycle?.state ?? ''}` : a.kind)),
      Array(5).fill('SetInPlaceUpdateReady+Normal'),
    );
    // (step 4/4) written (InPlaceUpdateReady True, Normal), containers still starting: nothing left to do
    assert.deepEqual(
      planOf(
        cs,
        ids.map((id) => aPod(cs).instanceId(id).pending().onNode(`node-${id}`).build()),
      ).actions,
      [],
    );
  });

  test('with a preNormal hook, InPlaceUpdateReady is written at once, unscheduled, and the pod stays PreparingNormal', () => {
    const cs = aCloneSet('sample')
      .replicas(1)
      .preNormalHook({ labelsHandler: { hooked: 'yes' } })
      .build();
    const waiting = aPod(cs).instanceId('aaaaa').pending().state('PreparingNormal').inPlaceUpdateReady(undefined).build();
    const p = planOf(cs, [waiting]);
    assert.deepEqual(
      p.actions.map((a) => (a.kind === 'SetInPlaceUpdateReady' ? `${a.kind}+${a.lifecycle?.state ?? '-'}` : a.kind)),
      ['SetInPlaceUpdateReady+-'],
    );
  });

  test('a preNormal hook moves a pod to Normal when all handlers are present, scheduled or not', () => {
    const cs = aCloneSet('sample')
      .replicas(1)
      .preNormalHook({ labelsHandler: { hooked: 'yes' } })
      .build();
    const waiting = aPod(cs).instanceId('aaaaa').state('PreparingNormal').onNode('n1').build();
    assert.deepEqual(kinds(planOf(cs, [waiting]).actions), []);
    const hooked = aPod(cs).instanceId('aaaaa').state('PreparingNormal').label('hooked', 'yes').build();
    assert.deepEqual(kinds(planOf(cs, [hooked]).actions), ['PatchPodLifecycle']);
  });

  test('scaleStrategy.maxUnavailable limits creations and warns ScaleUpLimited', () => {
    const cs = aCloneSet('sample').replicas(6).maxUnavailable(1).scaleMaxUnavailable(2).build();
    const pods = [...readyPods(cs, 2), aPod(cs).instanceId('nr000').running().build()];
    const p = planOf(cs, pods);
    assert.equal(created(p.actions).length, 1);
    assert.deepEqual(
      p.events.map((e) => e.reason),
      ['ScaleUpLimited'],
    );
  });
});

describe('scale in (docs/features.md#scaling, #deletion-order)', () => {
  test('victims follow the deletion order: unscheduled, then not ready, then lowest deletion cost', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [
      aPod(cs).instanceId('ready').ready().build(),
      aPod(cs).instanceId('cheap').ready().deletionCost(-100).build(),
      aPod(cs).instanceId('unsch').pending().build(),
      aPod(cs)
        .instanceId('older')
        .ready()
        .createdAt(T0 - 10 * 3_600_000)
        .build(),
      aPod(cs).instanceId('notrd').running().build(),
    ];
    assert.deepEqual(deletedNames(planOf(cs, pods).actions), ['sample-unsch', 'sample-notrd']);
    const healthy = pods.filter((p) => !['sample-unsch', 'sample-notrd'].includes(p.metadata.name ?? ''));
    const cs2 = aCloneSet('sample').replicas(2).build();
    assert.deepEqual(deletedNames(planOf(cs2, healthy).actions), ['sample-cheap']);
  });

  test('a deleted pod takes its PVCs (same instance id) with it', () => {
    const cs = aCloneSet('sample').replicas(1).volumeClaimTemplate('data').volumeClaimTemplate('logs').build();
    const pods = [aPod(cs).instanceId('keep1').ready().build(), aPod(cs).instanceId('gone1').pending().build()];
    const pvcs = [aPvc(cs).instanceId('keep1').build(), aPvc(cs).instanceId('gone1').build(), aPvc(cs).instanceId('gone1').fromTemplate('logs').build()];
    const [victim, ...rest] = deleted(planOf(cs, pods, { pvcs }).actions);
    assert.equal(rest.length, 0);
    assert.equal(victim?.pod.name, 'sample-gone1');
    assert.equal(victim?.cause, 'ScaleIn');
    assert.deepEqual([...(victim?.pvcNames ?? [])].sort(), ['data-sample-gone1', 'logs-sample-gone1']);
  });

  test('old-revision pods go first when scaling in during a rollout', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [...readyPods(cs, 2, 'r2'), ...readyPods(cs, 3, 'r1')];
    const victims = deletedNames(planOf(cs, pods, { current: 'r1', update: 'r2' }).actions);
    assert.equal(victims.length, 2);
    assert.ok(
      victims.every((n) => n.startsWith('sample-old')),
      victims.join(),
    );
  });

  test('scale in only deletes as many ready pods as maxUnavailable allows', () => {
    const cs = aCloneSet('sample').replicas(2).maxUnavailable(1).build();
    // MU 1, 5 pods for 2 replicas: deleteReadyLimit = 1 + (5 − 2) − 0 = 4 ≥ 3
    assert.equal(deletedNames(planOf(cs, readyPods(cs, 5)).actions).length, 3);
    // a 10 → 1 scale-in with maxUnavailable 0: limit = 0 + 9 = 9, all surplus may go
    const cs2 = aCloneSet('sample').replicas(1).maxUnavailable(0).maxSurge(1).build();
    assert.equal(deletedNames(planOf(cs2, readyPods(cs2, 10)).actions).length, 9);
  });
});

describe('selective pod deletion (user manual "Selective Pod deletion", docs/features.md#scaling)', () => {
  test('podsToDelete with replicas 5 → 4 deletes exactly the listed pod', () => {
    const pods = (cs: CloneSet) => readyPods(cs, 5);
    const cs = aCloneSet('sample').replicas(4).podsToDelete('sample-old2x').build();
    const p = planOf(cs, pods(cs));
    assert.deepEqual(deletedNames(p.actions), ['sample-old2x']);
    assert.equal(deleted(p.actions)[0]?.cause, 'SpecifiedDelete');
  });

  test('podsToDelete without a replicas change: delete now, replace in the next pass', () => {
    const cs = aCloneSet('sample').replicas(3).podsToDelete('sample-old1x').build();
    const pods = readyPods(cs, 3);
    // (step 1/2) three ready pods, one of them listed
    assert.deepEqual(planOf(cs, pods).actions.map(describeAction), ['delete sample-old1x']);
    // (step 2/2) the listed pod is gone, its name still listed
    const next = planOf(
      cs,
      pods.filter((p) => p.metadata.name !== 'sample-old1x'),
    ).actions.map(describeAction);
    assert.equal(next.length, 1);
    assert.match(next[0] ?? '', /^create sample-\w{5}@r1$/);
  });

  test('the specified-delete label works like podsToDelete', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [...readyPods(cs, 2), aPod(cs).instanceId('label').ready().specifiedDelete().build()];
    assert.deepEqual(deletedNames(planOf(cs, pods).actions), ['sample-label']);
  });

  // The manual's three examples (maxSurge section): pod-a is the only unavailable pod (it stays so).
  const manual = (maxUnavailable: number, marked: 'a' | 'b') => {
    const cs = aCloneSet('sample').replicas(5).maxUnavailable(maxUnavailable).maxSurge(1).build();
    const podA = aPod(cs).instanceId('poda1').running();
    const podB = aPod(cs).instanceId('podb1').ready();
    (marked === 'a' ? podA : podB).specifiedDelete();
    return { cs, pods: [podA.build(), podB.build(), ...readyPods(cs, 3)] };
  };

  test('maxUnavailable=2, maxSurge=1, pod-a unavailable: marking pod-b deletes it directly', () => {
    const { cs, pods } = manual(2, 'b');
    assert.deepEqual(deletedNames(planOf(cs, pods).actions), ['sample-podb1']);
  });

  test('maxUnavailable=1, maxSurge=1, pod-a unavailable: marking pod-b creates a surge pod, waits for it to be ready, then deletes pod-b', () => {
    const { cs, pods } = manual(1, 'b');
    const scaling = (actions: readonly PlanAction[]): PlanAction[] => actions.filter((a) => a.kind === 'DeletePods' || a.kind === 'CreatePods');
    // (step 1/4) pod-b marked, pod-a unavailable: a surge pod instead of a deletion
    assert.deepEqual(planOf(cs, pods, { ids: fixedIds('surge') }).actions.map(describeAction), ['create sample-surge@r1']);
    // (step 2/4) the surge pod runs, not ready yet: pod-b stays
    assert.deepEqual(scaling(planOf(cs, [...pods, aPod(cs).instanceId('surge').running().build()]).actions), []);
    // (step 3/4) the surge pod is ready: pod-b goes
    const surge = aPod(cs).instanceId('surge').ready().build();
    assert.deepEqual(deletedNames(planOf(cs, [...pods, surge]).actions), ['sample-podb1']);
    // (step 4/4) five pods again, pod-a still unavailable: nothing more is created or deleted
    const left = [...pods.filter((p) => p.metadata.name !== 'sample-podb1'), surge];
    assert.equal(left.length, 5);
    assert.deepEqual(scaling(planOf(cs, left).actions), []);
  });

  test('maxUnavailable=1, maxSurge=1: marking the unavailable pod-a deletes it directly', () => {
    const { cs, pods } = manual(1, 'a');
    assert.deepEqual(deletedNames(planOf(cs, pods).actions), ['sample-poda1']);
  });

  test('without maxSurge a ready specified pod waits while maxUnavailable is used up', () => {
    const cs = aCloneSet('sample').replicas(5).maxUnavailable(1).build();
    const pods = [aPod(cs).instanceId('poda1').running().build(), aPod(cs).instanceId('podb1').ready().specifiedDelete().build(), ...readyPods(cs, 3)];
    assert.deepEqual(
      planOf(cs, pods).actions.filter((a) => a.kind === 'DeletePods'),
      [],
    );
  });
});

describe('inactive and foreign pods (docs/features.md#ownership-and-adoption, #scaling)', () => {
  test('a Failed pod is not counted: a replacement with a fresh id is created next to it', () => {
    const cs = aCloneSet('sample').replicas(3).volumeClaimTemplate('data').build();
    const failed = aPod(cs).instanceId('fail1').failed().build();
    const pods = [...readyPods(cs, 2), failed];
    const pvcs = [aPvc(cs).instanceId('fail1').build(), aPvc(cs).instanceId('old0x').build(), aPvc(cs).instanceId('old1x').build()];
    const p = planCloneSet(snapshot(cs, pods, pvcs), revisions(cs), plannerConfig(), fixedIds('fail1', 'fresh'));
    const ids = created(p.actions).map((c) => c.pod.metadata.labels?.['apps.kruise.io/cloneset-instance-id']);
    assert.deepEqual(ids, ['fresh'], 'the failed pod keeps its id; the random source is asked again');
    assert.deepEqual(deleted(p.actions), [], 'the Failed pod is not deleted');
    assert.equal(p.claimed.length, 2);
  });

  test('a PVC without a pod gives its id (and the PVC) to the next new pod', () => {
    const cs = aCloneSet('sample').replicas(3).volumeClaimTemplate('data').build();
    const pvcs = [aPvc(cs).instanceId('lost1').build()];
    const p = planOf(cs, readyPods(cs, 2), { pvcs });
    assert.deepEqual(
      created(p.actions).map((c) => c.pod.metadata.name),
      ['sample-lost1'],
    );
  });

  test('terminating and Succeeded pods are not counted either', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [...readyPods(cs, 1), aPod(cs).instanceId('termx').ready().terminating().build(), aPod(cs).instanceId('succx').succeeded().build()];
    assert.equal(created(planOf(cs, pods).actions).length, 2);
  });

  test('a pod whose labels stop matching is released and replaced in the same pass', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const stray = aPod(cs).instanceId('stray').ready().label('app', 'debugging').build();
    const p = planOf(cs, [...readyPods(cs, 2), stray]);
    assert.deepEqual(kinds(p.actions), ['ReleasePod', 'CreatePods']);
    const release = p.actions[0];
    assert.ok(release?.kind === 'ReleasePod');
    assert.deepEqual([release.pod.name, release.ownerRefIndex, release.ownerUid], ['sample-stray', 0, 'uid-sample']);
    assert.equal(created(p.actions).length, 1);
  });

  test("a released pod is no longer the CloneSet's: the next pass neither releases nor counts it", () => {
    const cs = aCloneSet('sample').replicas(2).build();
    // (step 1/2) the stray pod's labels stop matching: released, and replaced
    const stray = aPod(cs).instanceId('stray').ready().label('app', 'other');
    const step1 = planOf(cs, [...readyPods(cs, 1), stray.build()], { ids: fixedIds('repl1') });
    assert.deepEqual(step1.actions.map(describeAction), ['release sample-stray', 'create sample-repl1@r1']);
    // (step 2/2) the stray pod has no owner reference left, its replacement is starting
    const step2 = planOf(cs, [...readyPods(cs, 1), stray.orphan().build(), aPod(cs).instanceId('repl1').running().build()]);
    assert.deepEqual(step2.actions.map(describeAction), []);
    assert.deepEqual(step2.claimed.map((p) => p.metadata.name).sort(), ['sample-old0x', 'sample-repl1']);
  });

  test('an orphan with matching labels is never adopted, counted or touched', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const orphan = aPod(cs).instanceId('orphn').ready().orphan().build();
    const foreign = aPod(cs).instanceId('forgn').ready().ownedBy('uid-someone-else').build();
    const p = planOf(cs, [...readyPods(cs, 2), orphan, foreign]);
    assert.equal(created(p.actions).length, 1);
    assert.ok(
      p.actions.every((a) => a.kind === 'CreatePods'),
      p.actions.map(describeAction).join(),
    );
    assert.deepEqual(p.claimed.map((x) => x.metadata.name).sort(), ['sample-old0x', 'sample-old1x']);
  });

  test('a pod referencing the CloneSet without being controlled is adopted and counted in the same pass', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const loose = aPod(cs).instanceId('loose').ready().ownedBy('uid-sample', false).build();
    const p = planOf(cs, [...readyPods(cs, 2), loose]);
    assert.deepEqual(p.actions.map(describeAction), ['adopt sample-loose']);
    const adopt = p.actions[0];
    assert.ok(adopt?.kind === 'AdoptPod');
    assert.equal(adopt.replaceIndex, 0, 'the reference to the same group, kind and name is replaced in place');
    assert.deepEqual([adopt.ownerRef.uid, adopt.ownerRef.controller, adopt.ownerRef.blockOwnerDeletion], ['uid-sample', true, true]);
    assert.equal(adopt.pod.resourceVersion, loose.metadata.resourceVersion);
    assert.ok(p.claimed.some((x) => x.metadata.name === 'sample-loose'));
  });

  test("an adopted pod is the CloneSet's own in the next pass: nothing more to adopt or create", () => {
    const cs = aCloneSet('sample').replicas(2).build();
    // (step 1/2) a pod that references the CloneSet without being controlled by it
    const step1 = planOf(cs, [...readyPods(cs, 1), aPod(cs).instanceId('loose').ready().ownedBy('uid-sample', false).build()]);
    assert.deepEqual(step1.actions.map(describeAction), ['adopt sample-loose']);
    // (step 2/2) the adoption is written: the reference says controller
    const step2 = planOf(cs, [...readyPods(cs, 1), aPod(cs).instanceId('loose').ready().build()]);
    assert.deepEqual(step2.actions.map(describeAction), []);
    assert.deepEqual(step2.claimed.map((p) => p.metadata.name).sort(), ['sample-loose', 'sample-old0x']);
  });

  test('no adoption when the labels do not match, the pod is terminating, or the CloneSet is being deleted', () => {
    const cs = aCloneSet('sample').replicas(1).build();
    const stray = aPod(cs).instanceId('stray').ready().ownedBy('uid-sample', false).label('app', 'other').build();
    const going = aPod(cs).instanceId('going').ready().ownedBy('uid-sample', false).terminating().build();
    const p = planOf(cs, [stray, going]);
    assert.ok(!p.actions.some((a) => a.kind === 'AdoptPod'), p.actions.map(describeAction).join());
    assert.equal(created(p.actions).length, 1);
    const deleting = aCloneSet('sample').replicas(1).deleting().build();
    assert.deepEqual(planOf(deleting, [aPod(deleting).instanceId('loose').ready().ownedBy('uid-sample', false).build()]).actions, []);
  });

  test('a CloneSet being deleted plans nothing', () => {
    const cs = aCloneSet('sample').replicas(3).deleting().build();
    const p = planOf(cs, [aPod(cs).instanceId('stray').ready().label('app', 'other').build()]);
    assert.deepEqual([p.phase, p.actions], ['idle', []]);
  });
});

describe('preDelete hook and PreparingDelete (docs/features.md#scaling, #lifecycle-states)', () => {
  const hook = { labelsHandler: { 'example.com/drain': 'true' } };
  const hooked = (cs: CloneSet, id: string) => aPod(cs).instanceId(id).ready().label('example.com/drain', 'true');

  test('a hooked scale-in victim moves to PreparingDelete instead of being deleted', () => {
    const cs = aCloneSet('sample').replicas(2).preDeleteHook(hook).build();
    const pods = [...readyPods(cs, 2), hooked(cs, 'hookd').pending().onNode('n1').build()];
    const p = planOf(cs, pods);
    assert.deepEqual(p.actions.map(describeAction), ['lifecycle sample-hookd=PreparingDelete']);
    assert.equal(p.phase, 'scale');
  });

  test('an unhooked victim is deleted as usual when the CloneSet has a preDelete hook', () => {
    const cs = aCloneSet('sample').replicas(2).preDeleteHook(hook).build();
    assert.deepEqual(deletedNames(planOf(cs, [...readyPods(cs, 2), aPod(cs).instanceId('plain').pending().build()]).actions), ['sample-plain']);
  });

  test('a PreparingDelete pod waits while hooked, and is deleted with its PVCs once the hook is released', () => {
    const cs = aCloneSet('sample').replicas(2).preDeleteHook(hook).volumeClaimTemplate('data').build();
    const pvcs = [aPvc(cs).instanceId('hookd').build()];
    const waiting = hooked(cs, 'hookd').state('PreparingDelete').build();
    assert.deepEqual(
      planOf(cs, [...readyPods(cs, 2), waiting], { pvcs }).actions.filter((a) => a.kind !== 'SetInPlaceUpdateReady'),
      [],
    );
    const released = aPod(cs).instanceId('hookd').ready().state('PreparingDelete').build();
    const d = deleted(planOf(cs, [...readyPods(cs, 2), released], { pvcs }).actions);
    assert.deepEqual(
      d.map((x) => [x.pod.name, x.pvcNames]),
      [['sample-hookd', ['data-sample-hookd']]],
    );
  });

  test('a ReCreate update of a hooked pod goes through PreparingDelete too', () => {
    const cs = aCloneSet('sample').replicas(1).preDeleteHook(hook).build();
    const update = (pods: readonly Pod[]): string[] => planOf(cs, pods, { current: 'r1', update: 'r2' }).actions.map(describeAction);
    // (step 1/5) the old pod, hooked: marked for the update
    assert.deepEqual(update([hooked(cs, 'hookd').build()]), ['mark sample-hookd']);
    // (step 2/5) marked: into PreparingDelete instead of a deletion
    assert.deepEqual(update([hooked(cs, 'hookd').specifiedDelete().build()]), ['lifecycle sample-hookd=PreparingDelete']);
    // (step 3/5) PreparingDelete, still hooked: it waits
    assert.deepEqual(update([hooked(cs, 'hookd').specifiedDelete().state('PreparingDelete').build()]), []);
    // (step 4/5) the hook owner finishes and changes its label: deleted
    const released = aPod(cs).instanceId('hookd').ready().label('example.com/drain', 'done').specifiedDelete().state('PreparingDelete').build();
    assert.deepEqual(update([released]), ['delete sample-hookd']);
    // (step 5/5) gone: its replacement is created on the update revision
    const [replacement, ...more] = update([]);
    assert.deepEqual(more, []);
    assert.match(replacement ?? '', /^create sample-\w{5}@r2$/);
  });

  test('when replicas grow back, a scale-in victim in PreparingDelete returns to PreparingNormal (no new pod)', () => {
    const cs = aCloneSet('sample').replicas(3).preDeleteHook(hook).build();
    const pods = [...readyPods(cs, 2), hooked(cs, 'hookd').state('PreparingDelete').build()];
    const p = planOf(cs, pods);
    assert.deepEqual(p.actions.map(describeAction), ['lifecycle sample-hookd=PreparingNormal']);
  });

  test('a specified-delete pod in PreparingDelete is not brought back', () => {
    const cs = aCloneSet('sample').replicas(3).preDeleteHook(hook).build();
    const pods = [...readyPods(cs, 2), hooked(cs, 'hookd').state('PreparingDelete').specifiedDelete().build()];
    assert.deepEqual(planOf(cs, pods).actions, [], 'it stays in PreparingDelete while hooked');
  });

  test('with markPodNotReady the PreparingDelete pod is never brought back', () => {
    const cs = aCloneSet('sample')
      .replicas(3)
      .preDeleteHook({ ...hook, markPodNotReady: true })
      .build();
    const pods = [...readyPods(cs, 2), hooked(cs, 'hookd').state('PreparingDelete').build()];
    assert.deepEqual(planOf(cs, pods).actions, [], 'it stays in PreparingDelete while hooked');
  });

  test('beyond Kruise (docs/features.md#scaling): a scale-up blocked by scaleStrategy.maxUnavailable still deletes released PreparingDelete pods', () => {
    // The released PreparingDelete pod counts as unavailable, so scaleUpLimit = 1 − 1 = 0. Kruise ends the pass at
    // the (empty) creation step and never reaches the deletion, which keeps the limit at 0 forever; we delete it.
    const cs = aCloneSet('sample').replicas(2).preDeleteHook(hook).scaleMaxUnavailable(1).build();
    const p = planOf(cs, [aPod(cs).instanceId('gone1').ready().state('PreparingDelete').specifiedDelete().build()]);
    assert.deepEqual(
      p.actions.map((a) => a.kind),
      ['DeletePods'],
    );
    assert.deepEqual(
      p.events.map((e) => e.reason),
      ['ScaleUpLimited'],
    );
  });

  test('excluding PreparingDelete pods from replicas creates the replacement while the old pod waits', () => {
    const cs = aCloneSet('sample')
      .replicas(2)
      .preDeleteHook({ ...hook, markPodNotReady: true })
      .excludePreparingDelete()
      .build();
    const pods = [...readyPods(cs, 1), hooked(cs, 'hookd').state('PreparingDelete').specifiedDelete().build()];
    assert.equal(created(planOf(cs, pods).actions).length, 1);
  });
});

describe('scale-up rate limiting (docs/features.md#scale-up-rate-limit)', () => {
  test('with scaleStrategy.maxUnavailable 1 and minReadySeconds 60, pods are created one at a time, each after the previous one is available', () => {
    const cs = aCloneSet('sample').replicas(4).scaleMaxUnavailable(1).minReadySeconds(60).build();
    const readyFor = (id: string, seconds: number): Pod =>
      aPod(cs)
        .instanceId(id)
        .ready()
        .since(T0 - seconds * 1000)
        .build();
    const reasons = (p: ReturnType<typeof planOf>): string[] => p.events.map((e) => e.reason);
    // (step 1/5) no pods: one pod, not four
    assert.deepEqual(planOf(cs, [], { ids: fixedIds('first') }).actions.map(describeAction), ['create sample-first@r1']);
    // (step 2/5) it is starting: nothing is created, and the limit is reported
    const step2 = planOf(cs, [aPod(cs).instanceId('first').running().build()]);
    assert.deepEqual([created(step2.actions), reasons(step2)], [[], ['ScaleUpLimited']]);
    // (step 3/5) Ready for 59 s, not yet available (minReadySeconds 60): still nothing
    const step3 = planOf(cs, [readyFor('first', 59)]);
    assert.deepEqual([created(step3.actions), reasons(step3)], [[], ['ScaleUpLimited']]);
    // (step 4/5) Ready for 61 s, available: the second pod, alone
    assert.deepEqual(planOf(cs, [readyFor('first', 61)], { ids: fixedIds('secnd') }).actions.map(describeAction), ['create sample-secnd@r1']);
    // (step 5/5) the second pod Ready for 30 s: the third waits for it
    assert.deepEqual(created(planOf(cs, [readyFor('first', 120), readyFor('secnd', 30)]).actions), []);
  });
});
