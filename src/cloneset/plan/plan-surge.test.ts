// The sustained surge rule (replica-diff.ts `SurgeRule`, beyond Kruise: kruise#1442, kruise#2491): pass-by-pass
// tables of a 50-pod ReCreate rollout at maxSurge 20 % under both rules, and simulator properties of the rule.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { IntOrString } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { partitionAbs } from './int-or-percent.ts';
import { isPodAvailable, revisionMatches } from './pod-predicates.ts';
import { computeReplicaDiff, replicaDiffInputFor, type SurgeRule } from './replica-diff.ts';
import { boundsOf, type SpecBounds } from './testing/spec-bounds.ts';
import { aCloneSet, readyPods } from './testing/builders.ts';
import {
  activePods,
  converge,
  currentRevisionOf,
  describePods,
  editSpec,
  formatSteps,
  newWorld,
  plan,
  reconcileStep,
  rollOut,
  type World,
  type WorldOptions,
} from './testing/sim/world.ts';

/** A world whose planner uses `rule` (the simulator's own config leaves it at Kruise's default). */
function worldWith(rule: SurgeRule, ...args: Parameters<typeof newWorld>): World {
  const w = newWorld(...args);
  return { ...w, config: { ...w.config, surgeRule: rule } };
}

/** replicas, maxSurge, maxUnavailable of the world's CloneSet by the test's own arithmetic (testing/spec-bounds.ts). */
function limitsOf(w: World): SpecBounds {
  const us = w.cloneSet.spec.updateStrategy;
  return boundsOf({
    replicas: w.cloneSet.spec.replicas ?? 1,
    hasRollingUpdate: us?.type !== 'OnDelete' || us.partition !== undefined,
    ...(us?.paused !== undefined ? { paused: us.paused } : {}),
    ...(us?.partition !== undefined ? { partition: us.partition } : {}),
    ...(us?.maxSurge !== undefined ? { maxSurge: us.maxSurge } : {}),
    ...(us?.maxUnavailable !== undefined ? { maxUnavailable: us.maxUnavailable } : {}),
  });
}

function useSurgeOf(w: World): number {
  return computeReplicaDiff(
    replicaDiffInputFor(w.cloneSet, activePods(w), {
      currentRevision: currentRevisionOf(w),
      updateRevision: w.updateRevision,
      gates: w.config.gates,
      excludePreparingDeleteFlag: false,
      nowMs: w.nowMs,
      flavour: 'scale',
      ...(w.config.surgeRule !== undefined ? { surgeRule: w.config.surgeRule } : {}),
    }),
  ).useSurge;
}

/**
 * A kubelet that makes at most `perStep` pods Ready per simulator step. Idempotent within a step (the simulator
 * asks again when it checks whether the kubelet is still busy), so the same pods are chosen on every call.
 */
function throttledReadiness(worldOf: () => World, perStep: number): (pod: Pod) => boolean {
  let step = -1;
  const chosen = new Set<string>();
  return (pod) => {
    const w = worldOf();
    if (w.step !== step) {
      step = w.step;
      chosen.clear();
    }
    const uid = pod.metadata.uid ?? '';
    if (chosen.has(uid)) return true;
    if (chosen.size >= perStep) return false;
    chosen.add(uid);
    return true;
  };
}

/** "create 10", "mark 2", "delete 8" (refresh writes — readiness gate, lifecycle Normal — are left out). */
function summary(actions: readonly PlanAction[]): string {
  const parts: string[] = [];
  for (const a of actions) {
    if (a.kind === 'CreatePods') parts.push(`create ${a.pods.length}`);
    if (a.kind === 'DeletePods') parts.push(`delete ${a.pods.length}`);
  }
  const marks = actions.filter((a) => a.kind === 'MarkSpecifiedDelete').length;
  if (marks > 0) parts.push(`mark ${marks}`);
  return parts.join(', ') || '-';
}

interface Pass {
  readonly before: string;
  readonly old: number;
  readonly total: number;
  readonly available: number;
  readonly useSurge: number;
  readonly did: string;
}

/**
 * The scenario of kruise#2491: 50 ready pods, maxSurge 20 % (10), maxUnavailable 0, ReCreate, a new image.
 * The fake kubelet makes at most 3 pods Ready per pass, 3 passes after they start, so new pods become ready a
 * few at a time as in a real cluster (with all of them ready at once both rules behave the same).
 */
function rollout50(rule: SurgeRule): { passes: Pass[]; world: World; violations: string[] } {
  const cs = aCloneSet('sample').replicas(50).maxSurge('20%').maxUnavailable(0).build();
  const opts: WorldOptions = { revisions: ['r1', 'r2'], readyAfterSteps: 3, canBecomeReady: throttledReadiness(() => world, 3) };
  const world = worldWith(rule, cs, readyPods(cs, 50), [], opts);
  const passes: Pass[] = [];
  const violations: string[] = [];
  for (let i = 0; i < 200; i++) {
    const pods = activePods(world);
    const pass = {
      before: describePods(world),
      old: pods.filter((p) => !revisionMatches(p, world.updateRevision)).length,
      total: pods.length,
      available: pods.filter((p) => isPodAvailable(p, 0, world.nowMs)).length,
      useSurge: useSurgeOf(world),
    };
    const actions = plan(world).actions;
    const r = reconcileStep(world);
    violations.push(...r.violations);
    passes.push({ ...pass, did: summary(actions) });
    if (!r.changed && r.requeueAfterMs === undefined) break;
  }
  return { passes, world, violations };
}

const row = (p: Pass, i: number, n: number): string => `step ${i + 1}/${n}: ${p.before} | surge ${p.useSurge} | ${p.did}`;

describe('sustained surge: a 50-pod ReCreate rollout at maxSurge 20 %, maxUnavailable 0 (kruise#2491)', () => {
  // Every pass of the rollout under the sustained rule. "surge" is the diff's useSurge for the pass: it stays
  // at 10 while 10 or more old pods remain (the last 7 old pods get a surge of 7, step 40); once the new revision
  // is complete (step 41) the old pods left are scaled in as the surge pods become available.
  const SUSTAINED = [
    'step 1/47: 50 old | surge 10 | create 10',
    'step 2/47: 50 old + 10 new(not ready) | surge 10 | -',
    'step 3/47: 50 old + 10 new(not ready) | surge 10 | -',
    'step 4/47: 50 old + 10 new(not ready) | surge 10 | -',
    'step 5/47: 50 old + 10 new(not ready) | surge 10 | -',
    'step 6/47: 50 old + 3 new + 7 new(not ready) | surge 10 | mark 3',
    'step 7/47: 47 old + 3 old(specified-delete) + 6 new + 4 new(not ready) | surge 10 | delete 3',
    'step 8/47: 47 old + 9 new + 1 new(not ready) | surge 10 | create 3',
    'step 9/47: 47 old + 10 new + 3 new(not ready) | surge 10 | -',
    'step 10/47: 47 old + 10 new + 3 new(not ready) | surge 10 | mark 7',
    'step 11/47: 40 old + 7 old(specified-delete) + 10 new + 3 new(not ready) | surge 10 | delete 7',
    'step 12/47: 40 old + 10 new + 3 new(not ready) | surge 10 | create 7',
    'step 13/47: 40 old + 13 new + 7 new(not ready) | surge 10 | -',
    'step 14/47: 40 old + 13 new + 7 new(not ready) | surge 10 | mark 3',
    'step 15/47: 37 old + 3 old(specified-delete) + 13 new + 7 new(not ready) | surge 10 | delete 3',
    'step 16/47: 37 old + 13 new + 7 new(not ready) | surge 10 | create 3',
    'step 17/47: 37 old + 16 new + 7 new(not ready) | surge 10 | -',
    'step 18/47: 37 old + 19 new + 4 new(not ready) | surge 10 | mark 6',
    'step 19/47: 31 old + 6 old(specified-delete) + 20 new + 3 new(not ready) | surge 10 | delete 6',
    'step 20/47: 31 old + 20 new + 3 new(not ready) | surge 10 | create 6',
    'step 21/47: 31 old + 23 new + 6 new(not ready) | surge 10 | -',
    'step 22/47: 31 old + 23 new + 6 new(not ready) | surge 10 | mark 4',
    'step 23/47: 27 old + 4 old(specified-delete) + 23 new + 6 new(not ready) | surge 10 | delete 4',
    'step 24/47: 27 old + 23 new + 6 new(not ready) | surge 10 | create 4',
    'step 25/47: 27 old + 26 new + 7 new(not ready) | surge 10 | -',
    'step 26/47: 27 old + 29 new + 4 new(not ready) | surge 10 | mark 6',
    'step 27/47: 21 old + 6 old(specified-delete) + 29 new + 4 new(not ready) | surge 10 | delete 6',
    'step 28/47: 21 old + 29 new + 4 new(not ready) | surge 10 | create 6',
    'step 29/47: 21 old + 32 new + 7 new(not ready) | surge 10 | -',
    'step 30/47: 21 old + 33 new + 6 new(not ready) | surge 10 | mark 4',
    'step 31/47: 17 old + 4 old(specified-delete) + 33 new + 6 new(not ready) | surge 10 | delete 4',
    'step 32/47: 17 old + 33 new + 6 new(not ready) | surge 10 | create 4',
    'step 33/47: 17 old + 36 new + 7 new(not ready) | surge 10 | -',
    'step 34/47: 17 old + 39 new + 4 new(not ready) | surge 10 | mark 6',
    'step 35/47: 11 old + 6 old(specified-delete) + 39 new + 4 new(not ready) | surge 10 | delete 6',
    'step 36/47: 11 old + 39 new + 4 new(not ready) | surge 10 | create 6',
    'step 37/47: 11 old + 42 new + 7 new(not ready) | surge 10 | -',
    'step 38/47: 11 old + 43 new + 6 new(not ready) | surge 10 | mark 4',
    'step 39/47: 7 old + 4 old(specified-delete) + 43 new + 6 new(not ready) | surge 10 | delete 4',
    'step 40/47: 7 old + 43 new + 6 new(not ready) | surge 7 | create 1',
    'step 41/47: 7 old + 46 new + 4 new(not ready) | surge 0 | delete 3',
    'step 42/47: 4 old + 49 new + 1 new(not ready) | surge 0 | delete 3',
    'step 43/47: 1 old + 49 new + 1 new(not ready) | surge 0 | -',
    'step 44/47: 1 old + 49 new + 1 new(not ready) | surge 0 | -',
    'step 45/47: 1 old + 50 new | surge 0 | delete 1',
    'step 46/47: 50 new | surge 0 | -',
    'step 47/47: 50 new | surge 0 | -',
  ];

  test('each pass does what the table says: 10 surge pods while 10 or more old pods remain', () => {
    const { passes, violations } = rollout50('sustained');
    const table = passes.map((p, i) => row(p, i, passes.length));
    assert.deepEqual(violations, [], table.join('\n'));
    assert.deepEqual(table, SUSTAINED, table.join('\n'));
  });

  test('the surge target is 10 in every pass that still has old pods to replace, and the pod count returns to 60', () => {
    const { passes } = rollout50('sustained');
    for (const [i, p] of passes.entries()) {
      // Until the new revision is complete (50 new pods, counted ready or not) the full surge is wanted, or
      // as many pods as there are old ones left when that is fewer.
      if (p.total - p.old < 50) assert.equal(p.useSurge, Math.min(10, p.old), row(p, i, passes.length));
      // Every creation pass brings the CloneSet back to 60 pods while 10 or more old pods remain.
      if (p.did.startsWith('create') && p.old >= 10) assert.equal(passes[i + 1]?.total, 60, row(p, i, passes.length));
    }
  });

  test('never more than 60 pods, never fewer than 50 available (maxUnavailable 0), and all 50 updated at the end', () => {
    const { passes, world } = rollout50('sustained');
    assert.ok(
      passes.every((p) => p.total <= 60),
      'at most replicas + maxSurge pods',
    );
    assert.ok(
      passes.every((p) => p.available >= 50),
      'at least replicas − maxUnavailable available',
    );
    const pods = activePods(world);
    assert.equal(pods.length, 50);
    assert.ok(pods.every((p) => revisionMatches(p, world.updateRevision) && isPodAvailable(p, 0, world.nowMs)));
    assert.equal(world.cloneSet.status?.currentRevision, world.updateRevision);
  });

  test("Kruise's rule on the same world lets the surge decay while 10 or more old pods remain, and takes longer", () => {
    const kruise = rollout50('kruise');
    const sustained = rollout50('sustained');
    assert.deepEqual(kruise.violations, []);
    const decayed = kruise.passes.filter((p) => p.old >= 10 && p.total - p.old < 50 && p.useSurge < 10);
    assert.ok(decayed.length > 0, kruise.passes.map((p, i) => row(p, i, kruise.passes.length)).join('\n'));
    // The Kruise run goes 10 → 7 → 4 → 3 → 1 (kruise#2491 reports 10 → 9 → 5 → 3 → 2 → 1).
    assert.deepEqual(
      [...new Set(kruise.passes.map((p) => p.useSurge))].filter((s) => s > 0),
      [10, 7, 4, 3, 1],
    );
    assert.ok(
      kruise.passes.length > sustained.passes.length,
      `${kruise.passes.length} vs ${sustained.passes.length} passes\n${kruise.passes.map((p, i) => row(p, i, kruise.passes.length)).join('\n')}`,
    );
  });
});

describe('sustained surge: properties on the simulator (fast-check)', () => {
  const intOrPercent = (maxInt: number, percents: readonly string[]): fc.Arbitrary<IntOrString | undefined> =>
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: maxInt }), fc.constantFrom(...percents));

  test('a ReCreate rollout stays within replicas + maxSurge pods and replicas − maxUnavailable available pods, and converges', () => {
    const arb = fc.record({
      replicas: fc.integer({ min: 1, max: 12 }),
      partition: intOrPercent(12, ['0%', '30%', '50%']),
      maxSurge: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom('20%', '50%', '100%')),
      maxUnavailable: intOrPercent(3, ['0%', '20%', '50%']),
      readyAfterSteps: fc.integer({ min: 0, max: 3 }),
      readyPerStep: fc.integer({ min: 1, max: 4 }),
      thirdRevisionAt: fc.option(fc.integer({ min: 0, max: 15 })),
    });
    fc.assert(
      fc.property(arb, (s) => {
        let b = aCloneSet('sample').replicas(s.replicas).maxSurge(s.maxSurge);
        if (s.partition !== undefined) b = b.partition(s.partition);
        if (s.maxUnavailable !== undefined) b = b.maxUnavailable(s.maxUnavailable);
        const cs = b.build();
        const world: World = worldWith('sustained', cs, readyPods(cs, s.replicas), [], {
          revisions: ['r1', 'r2'],
          readyAfterSteps: s.readyAfterSteps,
          canBecomeReady: throttledReadiness(() => world, s.readyPerStep),
        });
        const { maxSurge, maxUnavailable } = limitsOf(world);
        const floor = s.replicas - maxUnavailable;
        const available = (w: World): number => activePods(w).filter((p) => isPodAvailable(p, 0, w.nowMs)).length;
        const invariants = [
          (w: World) => (available(w) < floor ? `${available(w)} available pods, fewer than ${floor}` : undefined),
          (w: World) => (activePods(w).length > s.replicas + maxSurge ? `${activePods(w).length} pods` : undefined),
        ];
        let r = converge(world, { maxSteps: s.thirdRevisionAt ?? 600, invariants });
        const trace: string[] = [formatSteps(r.steps)];
        const violations = [...r.violations];
        if (s.thirdRevisionAt !== null) {
          rollOut(world, 'r3'); // V1 → V2 → V3: a new template in the middle of the rollout
          r = converge(world, { maxSteps: 600, invariants });
          trace.push('-- r3', formatSteps(r.steps));
          violations.push(...r.violations);
        }
        assert.deepEqual(violations, [], trace.join('\n'));
        assert.ok(r.converged, trace.join('\n'));
        const pods = activePods(world);
        assert.equal(pods.length, s.replicas);
        const wanted = s.replicas - partitionAbs(s.partition, s.replicas);
        assert.ok(pods.filter((p) => revisionMatches(p, world.updateRevision)).length >= wanted, trace.join('\n'));
      }),
      { numRuns: Number(process.env['FC_RUNS'] ?? 150) },
    );
  });

  test('a rollback by partition (CloneSetPartitionRollback) also keeps the surge and converges', () => {
    const cs = aCloneSet('sample').replicas(20).maxSurge(4).maxUnavailable(0).build();
    const world = worldWith('sustained', cs, readyPods(cs, 20), [], { revisions: ['r1', 'r2'], gates: { CloneSetPartitionRollback: true } });
    const first = converge(world, { maxSteps: 400 });
    assert.ok(first.converged && first.violations.length === 0, formatSteps(first.steps));
    // All 20 pods on r2, now the current revision; a new template r3 with partition 10 updates half of them.
    rollOut(world, 'r3');
    editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, partition: 10 } }));
    const half = converge(world, { maxSteps: 400 });
    assert.ok(half.converged && half.violations.length === 0, formatSteps(half.steps));
    assert.equal(activePods(world).filter((p) => revisionMatches(p, world.updateRevision)).length, 10);
    editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, partition: 18 } }));
    const surges: number[] = [];
    const back = converge(world, {
      maxSteps: 400,
      invariants: [
        (w) => {
          surges.push(useSurgeOf(w));
          return activePods(w).length > 24 ? 'too many pods' : undefined;
        },
      ],
    });
    assert.ok(back.converged, formatSteps(back.steps));
    assert.deepEqual(back.violations, [], formatSteps(back.steps));
    assert.equal(activePods(world).filter((p) => revisionMatches(p, world.updateRevision)).length, 2, formatSteps(back.steps));
    // Raising the partition to 18 rolls 8 pods back to r2 with the full surge of 4 (Kruise: min(8, shortfall)).
    assert.equal(Math.max(...surges), 4, formatSteps(back.steps));
  });
});
