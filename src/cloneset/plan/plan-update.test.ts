// planCloneSet, ReCreate updates (docs/features.md#maxsurge, #update-types, #maxunavailable, #reconcile-pass; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils_test.go): step-wise rollout tables
// in the style of Kruise's "(step n/m)" tests, partition and pause.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../kube/types.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet } from './index.ts';
import { computeReplicaDiff, replicaDiffInputFor, type ReplicaDiff } from './replica-diff.ts';
import { aCloneSet, aPod, plannerConfig, readyPods, revisions, sequentialIds, T0 } from './testing/builders.ts';
import {
  activePods,
  applyPlan,
  converge,
  currentRevisionOf,
  describeAction,
  describePods,
  editSpec,
  formatSteps,
  newWorld,
  plan,
  rollOut,
  type World,
} from './testing/sim/world.ts';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE } from '../../api/well-known.ts';
import { revisionMatches } from './pod-predicates.ts';

const kinds = (actions: readonly PlanAction[]): string[] => actions.map((a) => a.kind);

/** Counts of claimed active pods per short revision, e.g. { r1: 3, r2: 2 }. */
function byRevision(world: World): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of activePods(world)) {
    const rev = (p.metadata.labels?.['controller-revision-hash'] ?? '').replace(/^.*-/, '');
    out[rev] = (out[rev] ?? 0) + 1;
  }
  return out;
}

function scaleDiff(world: World): ReplicaDiff {
  return computeReplicaDiff(
    replicaDiffInputFor(world.cloneSet, activePods(world), {
      currentRevision: currentRevisionOf(world),
      updateRevision: world.updateRevision,
      gates: world.config.gates,
      excludePreparingDeleteFlag: false,
      nowMs: world.nowMs,
      flavour: 'scale',
    }),
  );
}

/** The kubelet + lifecycle refresh in one go: the pod is scheduled, Running, Ready for an hour and Normal. */
function makeAvailable(world: World, name: string): void {
  world.pods = world.pods.map((p) => {
    if (p.metadata.name !== name) return p;
    return {
      ...p,
      metadata: { ...p.metadata, labels: { ...p.metadata.labels, [LABEL_LIFECYCLE_STATE]: 'Normal' } },
      spec: { ...p.spec, nodeName: `node-${name}` },
      status: {
        phase: 'Running',
        conditions: [
          { type: CONDITION_INPLACE_UPDATE_READY, status: 'True' },
          { type: 'Ready', status: 'True', lastTransitionTime: new Date(world.nowMs - 3_600_000).toISOString() },
        ],
      },
    };
  });
}

const newPodNames = (world: World): string[] =>
  activePods(world)
    .filter((p) => revisionMatches(p, world.updateRevision))
    .map((p) => p.metadata.name ?? '');

describe('scaling and updating never happen in the same pass (docs/features.md#reconcile-pass)', () => {
  test('a CloneSet that needs both more pods and an update only scales in this pass', () => {
    const cs = aCloneSet('sample').replicas(5).build();
    const p = planCloneSet({ cloneSet: cs, pods: readyPods(cs, 3), pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.equal(p.phase, 'scale');
    assert.deepEqual(kinds(p.actions), ['CreatePods']);
  });

  test('a pass that moves a pod to Normal updates nothing', () => {
    const cs = aCloneSet('sample').replicas(2).build();
    const pods = [aPod(cs).instanceId('young').ready().state('PreparingNormal').build(), ...readyPods(cs, 1)];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(kinds(p.actions), ['PatchPodLifecycle']);
  });

  test('a pass that back-fills pod-template-hash updates nothing', () => {
    const cs = aCloneSet('sample').replicas(1).build();
    const pods = [aPod(cs).instanceId('legcy').ready().withoutLabel('pod-template-hash').build()];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(p.actions.map(describeAction), ['template-hash sample-legcy=r1']);
  });
});

describe('ReCreate rollout with maxSurge, pass by pass (docs/features.md#maxsurge: R=5, partition 3, maxUnavailable 1, maxSurge 1)', () => {
  interface Row {
    readonly before: string;
    readonly diff: Partial<ReplicaDiff>;
    /** Actions as described by describeAction; `<new>` stands for the pod created in the row it names. */
    readonly actions: readonly string[];
    /** What the kubelet does before the next pass. */
    readonly afterwards?: (w: World, created: readonly string[]) => void;
  }
  const rows: readonly Row[] = [
    { before: '5 old', diff: { scaleUpNum: 1, scaleUpLimit: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1 }, actions: ['create <new1>@r2'] },
    { before: '5 old + 1 new(not ready)', diff: { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 }, actions: ['mark sample-old0x'] },
    {
      before: '4 old + 1 old(specified-delete) + 1 new(not ready)',
      diff: { useSurge: 1, useSurgeOldRevision: 1, deleteReadyLimit: 1, updateNum: 1, updateMaxUnavailable: 2 },
      actions: ['delete sample-old0x'],
    },
    { before: '4 old + 1 new(not ready)', diff: { scaleUpNum: 1, scaleUpLimit: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 1 }, actions: ['create <new2>@r2'] },
    {
      before: '4 old + 2 new(not ready)',
      diff: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 0, updateNum: 0 },
      // The new pods are not scheduled yet: their InPlaceUpdateReady waits to be written with Normal.
      actions: [],
      afterwards: (w, created) => makeAvailable(w, created[0] ?? ''),
    },
    {
      before: '4 old + 1 new + 1 new(not ready)',
      diff: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
      actions: ['delete sample-old1x'],
      afterwards: (w, created) => makeAvailable(w, created[1] ?? ''),
    },
    { before: '3 old + 2 new', diff: {}, actions: [] },
  ];

  test('each pass does what the table says', () => {
    const cs = aCloneSet('sample').replicas(5).partition(3).maxUnavailable(1).maxSurge(1).build();
    const world = newWorld(cs, readyPods(cs, 5), [], { revisions: ['r1', 'r2'] });
    const created: string[] = [];
    rows.forEach((row, i) => {
      const at = `(step ${i + 1}/${rows.length})`;
      assert.equal(describePods(world), row.before, `${at} pods before the pass`);
      const diff = scaleDiff(world);
      for (const [k, v] of Object.entries(row.diff)) assert.equal(diff[k as keyof ReplicaDiff], v, `${at} diff.${k}`);
      const p = plan(world);
      for (const c of p.actions.flatMap((a) => (a.kind === 'CreatePods' ? a.pods : []))) created.push(c.pod.metadata.name ?? '');
      const expected = row.actions.map((a) => a.replace(/<new(\d)>/, (_, n: string) => created[Number(n) - 1] ?? '?'));
      assert.deepEqual(p.actions.map(describeAction), expected, `${at} actions`);
      assert.deepEqual(applyPlan(world, p.actions), [], `${at} applies cleanly`);
      row.afterwards?.(world, created);
    });
    assert.deepEqual(byRevision(world), { r1: 3, r2: 2 });
  });
});

describe('partition (docs/features.md#scaling, #maxunavailable)', () => {
  function rollout(cs: CloneSet, pods: readonly Pod[]): { world: World; result: ReturnType<typeof converge> } {
    const world = newWorld(cs, pods, [], { revisions: ['r1', 'r2'] });
    const result = converge(world);
    assert.deepEqual(result.violations, [], formatSteps(result.steps));
    assert.ok(result.converged, formatSteps(result.steps));
    return { world, result };
  }

  test('a ReCreate rollout of 5 pods with partition 3 ends with exactly 2 pods on the new revision', () => {
    const cs = aCloneSet('sample').replicas(5).partition(3).build();
    const { world } = rollout(cs, readyPods(cs, 5));
    assert.deepEqual(byRevision(world), { r1: 3, r2: 2 });
    assert.equal(world.cloneSet.status?.updatedReplicas, 2);
    assert.equal(world.cloneSet.status?.expectedUpdatedReplicas, 2);
    assert.equal(world.cloneSet.status?.currentRevision, 'sample-r1', 'current revision stays until every pod is updated');
  });

  test('partition 0 updates everything and moves currentRevision', () => {
    const cs = aCloneSet('sample').replicas(5).build();
    const { world, result } = rollout(cs, readyPods(cs, 5));
    assert.deepEqual(byRevision(world), { r2: 5 });
    assert.equal(world.cloneSet.status?.currentRevision, 'sample-r2');
    // default maxUnavailable 20 % of 5 = 1: never more than one pod marked or missing at a time
    for (const s of result.steps) assert.ok(s.actions.filter((a) => a.startsWith('mark')).length <= 1, formatSteps(result.steps));
  });

  for (const [partition, updated] of [
    ['60%', 2],
    ['40%', 3],
    ['99%', 1],
    ['100%', 0],
    ['0%', 5],
  ] as const) {
    test(`partition "${partition}" of 5 leaves ${updated} pods updated`, () => {
      const cs = aCloneSet('sample').replicas(5).partition(partition).maxSurge(1).build();
      const { world } = rollout(cs, readyPods(cs, 5));
      assert.equal(newPodNames(world).length, updated);
      assert.equal(activePods(world).length, 5);
    });
  }

  test('lowering the partition later continues the rollout', () => {
    const cs = aCloneSet('sample').replicas(4).partition(3).build();
    const { world } = rollout(cs, readyPods(cs, 4));
    assert.deepEqual(byRevision(world), { r1: 3, r2: 1 });
    editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, partition: 1 } }));
    const r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.deepEqual(byRevision(world), { r1: 1, r2: 3 });
  });

  test('raising the partition does not roll pods back (CloneSetPartitionRollback off)', () => {
    const cs = aCloneSet('sample').replicas(4).partition(1).build();
    const { world } = rollout(cs, readyPods(cs, 4));
    editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, partition: 3 } }));
    const r = converge(world);
    assert.equal(r.steps.filter((s) => s.actions.length > 0).length, 0, formatSteps(r.steps));
    assert.deepEqual(byRevision(world), { r1: 1, r2: 3 });
  });
});

describe('paused (docs/features.md#update-types)', () => {
  test('paused stops updates, but scaling continues (new pods get the update revision)', () => {
    const cs = aCloneSet('sample').replicas(3).paused().build();
    const world = newWorld(cs, readyPods(cs, 3), [], { revisions: ['r1', 'r2'] });
    let r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.ok(
      r.steps.every((s) => !s.actions.some((a) => a.startsWith('mark') || a.startsWith('delete'))),
      formatSteps(r.steps),
    );
    assert.deepEqual(byRevision(world), { r1: 3 });
    editSpec(world, (spec) => ({ ...spec, replicas: 5 }));
    r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.deepEqual(byRevision(world), { r1: 3, r2: 2 });
    editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, paused: false } }));
    r = converge(world);
    assert.deepEqual(byRevision(world), { r2: 5 });
  });

  test('scaling in while paused still removes old pods first', () => {
    const cs = aCloneSet('sample').replicas(2).paused().build();
    const world = newWorld(cs, [...readyPods(cs, 2, 'r2'), ...readyPods(cs, 2, 'r1')], [], { revisions: ['r1', 'r2'] });
    converge(world);
    assert.deepEqual(byRevision(world), { r2: 2 });
  });
});

describe('rollout ordering and budgets (docs/features.md#update-order, #maxunavailable)', () => {
  test('not-ready old pods are replaced first, and replacing them costs no availability budget', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [...readyPods(cs, 2), aPod(cs).instanceId('sickx').running().build()];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(p.actions.map(describeAction), ['mark sample-sickx']);
  });

  test('a second rollout while the first is under way targets the newest revision only', () => {
    const cs = aCloneSet('sample').replicas(4).build();
    const world = newWorld(cs, readyPods(cs, 4), [], { revisions: ['r1', 'r2'] });
    converge(world, { maxSteps: 4 });
    rollOut(world, 'r3');
    const r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.ok(r.converged);
    assert.deepEqual(byRevision(world), { r3: 4 });
    assert.equal(world.cloneSet.status?.currentRevision, 'sample-r3');
  });

  test('a rollout whose new pods never become ready stops after maxUnavailable pods', () => {
    const cs = aCloneSet('sample').replicas(5).maxUnavailable(2).build();
    const world = newWorld(cs, readyPods(cs, 5), [], { revisions: ['r1', 'r2'], canBecomeReady: (p) => !revisionMatches(p, 'sample-r2') });
    const r = converge(world, { maxSteps: 60 });
    assert.deepEqual(r.violations, []);
    assert.deepEqual(byRevision(world), { r1: 3, r2: 2 }, formatSteps(r.steps));
  });
});

describe('updateStrategy OnDelete (v1beta1, docs/features.md#ondelete)', () => {
  const onDelete = (replicas: number): CloneSet => {
    const cs = aCloneSet('sample').replicas(replicas).build();
    return { ...cs, spec: { ...cs.spec, updateStrategy: { type: 'OnDelete' } } };
  };

  test('a new template moves no pod; the status expects every pod on the new revision', () => {
    const cs = onDelete(3);
    const world = newWorld(cs, readyPods(cs, 3), [], { revisions: ['r1', 'r2'] });
    const r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.ok(
      r.steps.every((s) => !s.actions.some((a) => a.startsWith('mark') || a.startsWith('delete'))),
      formatSteps(r.steps),
    );
    assert.deepEqual(byRevision(world), { r1: 3 });
    assert.equal(world.cloneSet.status?.updatedReplicas, 0);
    assert.equal(world.cloneSet.status?.expectedUpdatedReplicas, 3, 'no rollingUpdate block: replicas (docs/features.md#status-counters)');
    assert.equal(world.cloneSet.status?.currentRevision, 'sample-r1');
  });

  test('a pod deleted by someone is replaced on the update revision, the others stay', () => {
    const cs = onDelete(3);
    const world = newWorld(cs, readyPods(cs, 3), [], { revisions: ['r1', 'r2'] });
    converge(world);
    const victim = world.pods[0]?.metadata.name;
    world.pods = world.pods.filter((p) => p.metadata.name !== victim);
    const r = converge(world);
    assert.deepEqual(r.violations, []);
    assert.deepEqual(byRevision(world), { r1: 2, r2: 1 });
    assert.equal(world.cloneSet.status?.updatedReplicas, 1);
  });

  test('scaling out creates pods on the update revision, scaling in removes old pods first', () => {
    const cs = onDelete(3);
    const world = newWorld(cs, readyPods(cs, 3), [], { revisions: ['r1', 'r2'] });
    editSpec(world, (spec) => ({ ...spec, replicas: 5 }));
    converge(world);
    assert.deepEqual(byRevision(world), { r1: 3, r2: 2 });
    editSpec(world, (spec) => ({ ...spec, replicas: 2 }));
    converge(world);
    assert.deepEqual(byRevision(world), { r2: 2 });
  });

  test('without rollingUpdate the default maxUnavailable 20 % rounds down (docs/features.md#maxunavailable)', () => {
    const input = replicaDiffInputFor(onDelete(4), [], {
      currentRevision: 'a',
      updateRevision: 'b',
      gates: plannerConfig().gates,
      excludePreparingDeleteFlag: false,
      nowMs: T0,
      flavour: 'scale',
    });
    assert.equal(input.hasRollingUpdate, false);
  });
});
