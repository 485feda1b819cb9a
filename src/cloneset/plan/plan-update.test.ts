// planCloneSet, ReCreate updates (docs/features.md#maxsurge, #update-types, #maxunavailable, #reconcile-pass; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils_test.go): step-wise rollout tables
// in the style of Kruise's "(step n/m)" tests (each step's pods written by the test), partition.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Pod } from '../../kube/types.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet } from './index.ts';
import { computeReplicaDiff, replicaDiffInputFor, type ReplicaDiff } from './replica-diff.ts';
import { aCloneSet, aPod, fixedIds, plannerConfig, readyPods, revisions, sequentialIds, T0, type PodBuilder } from './testing/builders.ts';
import { describeAction, describePods } from './testing/describe.ts';
import { revisionMatches } from './pod-predicates.ts';

const kinds = (actions: readonly PlanAction[]): string[] => actions.map((a) => a.kind);

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

describe('every pass either scales or updates, and touches only its own pods (property, docs/features.md#reconcile-pass)', () => {
  /** Writes only the Update step makes (refresh or update): never in the same pass as a create or delete. */
  const isUpdateWrite = (a: PlanAction): boolean =>
    a.kind === 'MarkSpecifiedDelete' || a.kind === 'SetInPlaceUpdateReady' || a.kind === 'PatchPodTemplateHash' || (a.kind === 'PatchPodLifecycle' && a.state === 'Normal');

  test('random rollouts in flight: no plan both creates or deletes and updates, and none names a pod another owner controls', () => {
    const state = fc.constantFrom('ready', 'running', 'pending', 'marked', 'preparingNormal', 'terminating');
    const arb = fc.record({
      replicas: fc.integer({ min: 0, max: 8 }),
      partition: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
      maxSurge: fc.option(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('20%', '50%')), { nil: undefined }),
      maxUnavailable: fc.option(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('20%', '50%')), { nil: undefined }),
      pods: fc.array(fc.record({ rev: fc.constantFrom('r1', 'r2'), state }), { maxLength: 12 }),
    });
    fc.assert(
      fc.property(arb, (s) => {
        let b = aCloneSet('sample').replicas(s.replicas);
        if (s.partition !== undefined) b = b.partition(s.partition);
        if (s.maxSurge !== undefined) b = b.maxSurge(s.maxSurge);
        if (s.maxUnavailable !== undefined) b = b.maxUnavailable(s.maxUnavailable);
        const cs = b.build();
        const pods = s.pods.map((p, i) => {
          const pod = aPod(cs)
            .ofRevision(p.rev)
            .instanceId(`p${String(i).padStart(4, '0')}`);
          if (p.state === 'ready') pod.ready();
          if (p.state === 'running') pod.running();
          if (p.state === 'marked') pod.ready().specifiedDelete();
          if (p.state === 'preparingNormal') pod.running().state('PreparingNormal').inPlaceUpdateReady(undefined);
          if (p.state === 'terminating') pod.ready().terminating();
          return pod.build();
        });
        const foreign = aPod(cs).instanceId('forgn').ready().ownedBy('uid-someone-else').build();
        const orphan = aPod(cs).instanceId('orphn').ready().orphan().build();
        const p = planCloneSet(
          { cloneSet: cs, pods: [...pods, foreign, orphan], pvcs: [], nodes: new Map(), nowMs: T0 },
          revisions(cs, 'r1', 'r2'),
          plannerConfig(),
          sequentialIds(),
        );
        const scales = p.actions.some((a) => a.kind === 'CreatePods' || a.kind === 'DeletePods');
        assert.ok(!(scales && p.actions.some(isUpdateWrite)), p.actions.map(describeAction).join('; '));
        const names = p.actions.map(describeAction).join(' ');
        assert.ok(!names.includes('sample-forgn') && !names.includes('sample-orphn'), names);
      }),
      { numRuns: 500 },
    );
  });
});

describe('ReCreate rollout with maxSurge, pass by pass (docs/features.md#maxsurge: R=5, partition 3, maxUnavailable 1, maxSurge 1)', () => {
  const cs = aCloneSet('sample').replicas(5).partition(3).maxUnavailable(1).maxSurge(1).build();
  const old = (i: number): PodBuilder => aPod(cs).instanceId(`old${i}x`).ready();
  /** Just created: not scheduled, PreparingNormal, no InPlaceUpdateReady yet (it is written with Normal). */
  const fresh = (id: string): Pod => aPod(cs).ofRevision('r2').instanceId(id).pending().state('PreparingNormal').inPlaceUpdateReady(undefined).build();
  /** Scheduled, Running, Ready for an hour and Normal. */
  const available = (id: string): Pod => aPod(cs).ofRevision('r2').instanceId(id).ready().build();

  interface Row {
    /** The pods of the pass, as the previous rows left them (the test writes what the executor and the kubelet did). */
    readonly pods: readonly Pod[];
    readonly before: string;
    readonly diff: Partial<ReplicaDiff>;
    readonly actions: readonly string[];
    /** The id a created pod gets. */
    readonly newId?: string;
  }
  const rows: readonly Row[] = [
    {
      pods: [0, 1, 2, 3, 4].map((i) => old(i).build()),
      before: '5 old',
      diff: { scaleUpNum: 1, scaleUpLimit: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1 },
      actions: ['create sample-new1x@r2'],
      newId: 'new1x',
    },
    {
      pods: [...[0, 1, 2, 3, 4].map((i) => old(i).build()), fresh('new1x')],
      before: '5 old + 1 new(not ready)',
      diff: { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 },
      actions: ['mark sample-old0x'],
    },
    {
      pods: [old(0).specifiedDelete().build(), ...[1, 2, 3, 4].map((i) => old(i).build()), fresh('new1x')],
      before: '4 old + 1 old(specified-delete) + 1 new(not ready)',
      diff: { useSurge: 1, useSurgeOldRevision: 1, deleteReadyLimit: 1, updateNum: 1, updateMaxUnavailable: 2 },
      actions: ['delete sample-old0x'],
    },
    {
      pods: [...[1, 2, 3, 4].map((i) => old(i).build()), fresh('new1x')],
      before: '4 old + 1 new(not ready)',
      diff: { scaleUpNum: 1, scaleUpLimit: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 1 },
      actions: ['create sample-new2x@r2'],
      newId: 'new2x',
    },
    {
      // The new pods are not scheduled yet: their InPlaceUpdateReady waits to be written with Normal.
      pods: [...[1, 2, 3, 4].map((i) => old(i).build()), fresh('new1x'), fresh('new2x')],
      before: '4 old + 2 new(not ready)',
      diff: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 0, updateNum: 0 },
      actions: [],
    },
    {
      pods: [...[1, 2, 3, 4].map((i) => old(i).build()), available('new1x'), fresh('new2x')],
      before: '4 old + 1 new + 1 new(not ready)',
      diff: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
      actions: ['delete sample-old1x'],
    },
    {
      pods: [...[2, 3, 4].map((i) => old(i).build()), available('new1x'), available('new2x')],
      before: '3 old + 2 new',
      diff: {},
      actions: [],
    },
  ];

  test('each pass does what the table says, and the last leaves 3 old and 2 new pods', () => {
    rows.forEach((row, i) => {
      const at = `(step ${i + 1}/${rows.length})`;
      assert.equal(describePods(cs, row.pods, 'sample-r2', T0), row.before, `${at} pods before the pass`);
      const diff = computeReplicaDiff(
        replicaDiffInputFor(cs, row.pods, {
          currentRevision: 'sample-r1',
          updateRevision: 'sample-r2',
          gates: plannerConfig().gates,
          excludePreparingDeleteFlag: false,
          nowMs: T0,
          flavour: 'scale',
        }),
      );
      for (const [k, v] of Object.entries(row.diff)) assert.equal(diff[k as keyof ReplicaDiff], v, `${at} diff.${k}`);
      const ids = row.newId !== undefined ? fixedIds(row.newId) : sequentialIds();
      const p = planCloneSet({ cloneSet: cs, pods: row.pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), ids);
      assert.deepEqual(p.actions.map(describeAction), row.actions, `${at} actions`);
    });
    const last = rows[rows.length - 1]?.pods ?? [];
    assert.deepEqual([last.filter((p) => revisionMatches(p, 'sample-r1')).length, last.filter((p) => revisionMatches(p, 'sample-r2')).length], [3, 2]);
  });
});

describe('partition (docs/features.md#scaling, #maxunavailable)', () => {
  // Whole rollouts with a partition (2 of 5 updated; 0, "0%", "40%", "60%", "99%", "100%"; lowering it later) are
  // scenarios on the simulation: sim/scenarios.test.ts "partition".

  test('raising the partition does not roll pods back (CloneSetPartitionRollback off)', () => {
    // Partition 1 left 3 of 4 pods updated; the partition is now 3.
    const cs = aCloneSet('sample').replicas(4).partition(3).build();
    const pods = [...readyPods(cs, 1, 'r1'), ...readyPods(cs, 3, 'r2')];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(p.actions.map(describeAction), []);
  });
});

// paused, a second rollout during the first, a rollout whose pods never become ready, and updateStrategy OnDelete
// are scenarios on the simulation (sim/scenarios.test.ts).

describe('rollout ordering and budgets (docs/features.md#update-order, #maxunavailable)', () => {
  test('not-ready old pods are replaced first, and replacing them costs no availability budget', () => {
    const cs = aCloneSet('sample').replicas(3).build();
    const pods = [...readyPods(cs, 2), aPod(cs).instanceId('sickx').running().build()];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(p.actions.map(describeAction), ['mark sample-sickx']);
  });
});

describe('updateStrategy OnDelete (v1beta1, docs/features.md#ondelete)', () => {
  const onDelete = (replicas: number): CloneSet => {
    const cs = aCloneSet('sample').replicas(replicas).build();
    return { ...cs, spec: { ...cs.spec, updateStrategy: { type: 'OnDelete' } } };
  };

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
