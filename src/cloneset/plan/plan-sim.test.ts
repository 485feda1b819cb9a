// Simulator property tests: from random starting worlds and random specs, `converge`
// reaches `replicas` available pods on the right revisions, never has more than replicas + maxSurge pods
// because of the controller, applies every plan cleanly, and a converged world plans nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CloneSet, IntOrString } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import { partitionAbs } from './int-or-percent.ts';
import { isPodAvailable, revisionMatches } from './pod-predicates.ts';
import { resolveLimits, replicaDiffInputFor } from './replica-diff.ts';
import { aCloneSet, aPod, aPvc, plannerConfig } from './testing/builders.ts';
import { activePods, converge, currentRevisionOf, editSpec, formatSteps, newWorld, rollOut, type World } from './testing/sim/world.ts';

type PodKind = 'ready' | 'running' | 'pending' | 'preparingNormal' | 'preparingDelete' | 'failed' | 'terminating';

interface StartPod {
  readonly rev: 'r1' | 'r2';
  readonly kind: PodKind;
  readonly cost: number;
  readonly hooked: boolean;
}

interface Scenario {
  readonly replicas: number;
  readonly partition: IntOrString | undefined;
  readonly maxSurge: IntOrString | undefined;
  readonly maxUnavailable: IntOrString | undefined;
  readonly scaleMaxUnavailable: number | undefined;
  readonly minReadySeconds: number;
  readonly withPvcs: boolean;
  readonly lostPvcs: number;
  readonly rollback: boolean;
  readonly readyAfterSteps: number;
  readonly scheduleAfterSteps: number;
  readonly terminationSteps: number;
  readonly pods: readonly StartPod[];
  /** A preDelete hook (label example.com/drain) whose owner releases pods after some steps. */
  readonly hook: { readonly markPodNotReady: boolean; readonly releaseAfterSteps: number; readonly exclude: boolean } | null;
}

const intOrPercent = (maxInt: number, percents: readonly string[]): fc.Arbitrary<IntOrString | undefined> =>
  fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: maxInt }), fc.constantFrom(...percents));

const scenario: fc.Arbitrary<Scenario> = fc.record({
  replicas: fc.integer({ min: 0, max: 8 }),
  partition: intOrPercent(9, ['0%', '20%', '50%', '99%', '100%', '33.3%']),
  maxSurge: intOrPercent(3, ['0%', '20%', '50%', '100%']),
  maxUnavailable: intOrPercent(3, ['0%', '20%', '50%', '100%']),
  scaleMaxUnavailable: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 3 })),
  minReadySeconds: fc.constantFrom(0, 0, 3),
  withPvcs: fc.boolean(),
  lostPvcs: fc.integer({ min: 0, max: 2 }),
  rollback: fc.boolean(),
  readyAfterSteps: fc.integer({ min: 0, max: 3 }),
  scheduleAfterSteps: fc.integer({ min: 0, max: 2 }),
  terminationSteps: fc.integer({ min: 0, max: 2 }),
  pods: fc.array(
    fc.record({
      rev: fc.constantFrom('r1', 'r2'),
      kind: fc.constantFrom<PodKind>('ready', 'ready', 'ready', 'running', 'pending', 'preparingNormal', 'preparingDelete', 'failed', 'terminating'),
      cost: fc.constantFrom(0, 0, -100, 100),
      hooked: fc.boolean(),
    }),
    { maxLength: 10 },
  ),
  hook: fc.option(fc.record({ markPodNotReady: fc.boolean(), releaseAfterSteps: fc.integer({ min: 0, max: 3 }), exclude: fc.boolean() })),
});

function buildWorld(s: Scenario, specifiedDelete: ReadonlySet<number>): World {
  let b = aCloneSet('sample').replicas(s.replicas).minReadySeconds(s.minReadySeconds);
  if (s.partition !== undefined) b = b.partition(s.partition);
  if (s.maxSurge !== undefined) b = b.maxSurge(s.maxSurge);
  if (s.maxUnavailable !== undefined) b = b.maxUnavailable(s.maxUnavailable);
  // Also with PreparingDelete pods around: a blocked scale-up still deletes released PreparingDelete pods, so the
  // deadlock Kruise has there (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go) cannot happen (plan-scale.test.ts pins the single step).
  if (s.scaleMaxUnavailable !== undefined) b = b.scaleMaxUnavailable(s.scaleMaxUnavailable);
  if (s.withPvcs) b = b.volumeClaimTemplate('data');
  if (s.hook !== null) b = b.preDeleteHook({ labelsHandler: { [HOOK]: 'true' }, markPodNotReady: s.hook.markPodNotReady });
  if (s.hook?.exclude === true) b = b.excludePreparingDelete();
  const cs = b.build();
  const pods: Pod[] = [];
  const pvcs: PersistentVolumeClaim[] = [];
  s.pods.forEach((p, i) => {
    const id = `st${String(i).padStart(3, '0')}`;
    let pb = aPod(cs).instanceId(id).ofRevision(p.rev).deletionCost(p.cost);
    if (p.kind === 'ready') pb = pb.ready();
    if (p.kind === 'running') pb = pb.running();
    if (p.kind === 'pending') pb = pb.pending();
    if (p.kind === 'preparingNormal') pb = pb.pending().state('PreparingNormal').inPlaceUpdateReady(undefined);
    if (p.kind === 'preparingDelete') pb = pb.ready().state('PreparingDelete');
    if (p.hooked) pb = pb.label(HOOK, 'true');
    if (p.kind === 'failed') pb = pb.failed();
    if (p.kind === 'terminating') pb = pb.ready().terminating();
    if (specifiedDelete.has(i)) pb = pb.specifiedDelete();
    pods.push(pb.build());
    if (s.withPvcs) pvcs.push(aPvc(cs).instanceId(id).build());
  });
  if (s.withPvcs) for (let i = 0; i < s.lostPvcs; i++) pvcs.push(aPvc(cs).instanceId(`lost${i}`).build());
  return newWorld(cs, pods, pvcs, {
    revisions: ['r1', 'r2'],
    gates: { CloneSetPartitionRollback: s.rollback },
    readyAfterSteps: s.readyAfterSteps,
    scheduleAfterSteps: s.scheduleAfterSteps,
    terminationSteps: s.terminationSteps,
    ...(s.hook !== null ? { preDeleteHook: { label: HOOK, releaseAfterSteps: s.hook.releaseAfterSteps } } : {}),
  });
}

const HOOK = 'example.com/drain';

function limits(cs: CloneSet): ReturnType<typeof resolveLimits> {
  const cfg = plannerConfig();
  return resolveLimits(replicaDiffInputFor(cs, [], { currentRevision: 'a', updateRevision: 'b', gates: cfg.gates, excludePreparingDeleteFlag: false, nowMs: 0, flavour: 'scale' }));
}

/** Kruise's validation refuses maxUnavailable 0 with maxSurge 0: such a rollout could never start. */
function rollable(cs: CloneSet): boolean {
  const l = limits(cs);
  return l.maxUnavailable > 0 || l.maxSurge > 0;
}

const updatedCount = (w: World): number => activePods(w).filter((p) => revisionMatches(p, w.updateRevision)).length;

/** r2 pods that will survive as counted pods: active, not terminating, not specified for deletion. */
function initialUpdated(w: World): number {
  return activePods(w).filter((p) => revisionMatches(p, w.updateRevision) && p.metadata.labels?.['apps.kruise.io/specified-delete'] === undefined).length;
}

describe('converge from random worlds (fast-check)', () => {
  test('reaches replicas available pods, replicas − partition of them updated, within replicas + maxSurge, and then plans nothing', () => {
    fc.assert(
      fc.property(scenario, fc.uniqueArray(fc.nat({ max: 9 }), { maxLength: 2 }), (s, marked) => {
        const world = buildWorld(s, new Set(marked));
        fc.pre(rollable(world.cloneSet));
        const before = initialUpdated(world);
        const result = converge(world, { maxSteps: 400 });
        const trace = `\n${formatSteps(result.steps.slice(-30))}`;
        assert.deepEqual(result.violations, [], trace);
        assert.ok(result.converged, `did not converge${trace}`);
        const pods = activePods(world);
        assert.equal(pods.length, s.replicas, `pod count${trace}`);
        const minReady = s.minReadySeconds;
        assert.ok(pods.every((p) => isPodAvailable(p, minReady, world.nowMs)), `all available${trace}`);
        const wanted = s.replicas - partitionAbs(s.partition, s.replicas);
        const updated = updatedCount(world);
        const settled = currentRevisionOf(world) !== world.updateRevision;
        if (settled && (s.rollback || before <= wanted)) {
          assert.equal(updated, wanted, `updated pods (rollback gate ${String(s.rollback)}, ${before} at start)${trace}`);
        } else {
          // Never fewer than the partition asks for. More are possible in two Kruise-conformant ways: without
          // CloneSetPartitionRollback pods never move back; and once all pods were on the update revision it
          // became the current one (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go), after which pods of the older revision only count as "old".
          assert.ok(updated >= wanted, `updated ${updated}, wanted ${wanted}, had ${before}${trace}`);
          if (settled) assert.ok(updated <= Math.min(before, s.replicas), `updated ${updated}, had ${before}${trace}`);
        }
        if (updated === s.replicas) assert.equal(world.cloneSet.status?.currentRevision, 'sample-r2');
        assert.equal(world.cloneSet.status?.replicas, s.replicas);
        assert.equal(world.cloneSet.status?.updatedReplicas, updated);
      }),
      { numRuns: Number(process.env['FC_RUNS'] ?? 300) },
    );
  });

  test('a world that is already converged yields an empty plan at once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 }), (replicas, partition) => {
        const cs = aCloneSet('sample').replicas(replicas).partition(partition).build();
        const p = Math.min(partition, replicas);
        const pods = [
          ...Array.from({ length: p }, (_, i) => aPod(cs).instanceId(`old${i}x`).ofRevision('r1').ready().build()),
          ...Array.from({ length: replicas - p }, (_, i) => aPod(cs).instanceId(`new${i}x`).ofRevision('r2').ready().build()),
        ];
        const world = newWorld(cs, pods, [], { revisions: ['r1', 'r2'] });
        const r = converge(world);
        assert.deepEqual(r.violations, []);
        assert.ok(r.steps.every((s) => s.actions.length === 0), formatSteps(r.steps));
      }),
      { numRuns: 50 },
    );
  });
});

describe('rollouts keep availability (fast-check)', () => {
  test('a ReCreate rollout from R ready pods never has fewer than R − maxUnavailable available pods', () => {
    const arb = fc.record({
      replicas: fc.integer({ min: 1, max: 8 }),
      partition: intOrPercent(8, ['0%', '50%']),
      maxSurge: intOrPercent(3, ['0%', '20%', '50%']),
      maxUnavailable: intOrPercent(3, ['0%', '20%', '50%', '100%']),
      readyAfterSteps: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(arb, (s) => {
        let b = aCloneSet('sample').replicas(s.replicas);
        if (s.partition !== undefined) b = b.partition(s.partition);
        if (s.maxSurge !== undefined) b = b.maxSurge(s.maxSurge);
        if (s.maxUnavailable !== undefined) b = b.maxUnavailable(s.maxUnavailable);
        const cs = b.build();
        fc.pre(rollable(cs));
        const pods = Array.from({ length: s.replicas }, (_, i) => aPod(cs).instanceId(`old${i}x`).ready().build());
        const world = newWorld(cs, pods, [], { revisions: ['r1', 'r2'], readyAfterSteps: s.readyAfterSteps });
        const floor = s.replicas - limits(cs).maxUnavailable;
        const available = (w: World): number => activePods(w).filter((p) => isPodAvailable(p, 0, w.nowMs)).length;
        const r = converge(world, {
          maxSteps: 400,
          invariants: [(w) => (available(w) < floor ? `${available(w)} available pods, fewer than ${floor}` : undefined)],
        });
        assert.deepEqual(r.violations, [], formatSteps(r.steps));
        assert.ok(r.converged, formatSteps(r.steps));
      }),
      { numRuns: Number(process.env['FC_RUNS'] ?? 200) },
    );
  });
});

describe('spec changes while the controller is busy (fast-check)', () => {
  type Edit =
    | { readonly kind: 'replicas'; readonly n: number }
    | { readonly kind: 'partition'; readonly p: IntOrString }
    | { readonly kind: 'rollOut' }
    | { readonly kind: 'pause'; readonly paused: boolean }
    | { readonly kind: 'podsToDelete'; readonly index: number }
    | { readonly kind: 'markPod'; readonly index: number }
    | { readonly kind: 'killPod'; readonly index: number };
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({ kind: fc.constant('replicas' as const), n: fc.integer({ min: 0, max: 8 }) }),
    fc.record({ kind: fc.constant('partition' as const), p: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom('0%', '50%', '100%')) }),
    fc.record({ kind: fc.constant('rollOut' as const) }),
    fc.record({ kind: fc.constant('pause' as const), paused: fc.boolean() }),
    fc.record({ kind: fc.constant('podsToDelete' as const), index: fc.nat({ max: 9 }) }),
    fc.record({ kind: fc.constant('markPod' as const), index: fc.nat({ max: 9 }) }),
    fc.record({ kind: fc.constant('killPod' as const), index: fc.nat({ max: 9 }) }),
  );

  function applyEdit(w: World, e: Edit, nextRev: () => string): void {
    const pods = activePods(w);
    const target = pods.length > 0 ? pods[('index' in e ? e.index : 0) % pods.length] : undefined;
    switch (e.kind) {
      case 'replicas':
        editSpec(w, (spec) => ({ ...spec, replicas: e.n }));
        break;
      case 'partition':
        editSpec(w, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, partition: e.p } }));
        break;
      case 'rollOut':
        rollOut(w, nextRev());
        break;
      case 'pause':
        editSpec(w, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, paused: e.paused } }));
        break;
      case 'podsToDelete':
        if (target !== undefined) editSpec(w, (spec) => ({ ...spec, scaleStrategy: { ...spec.scaleStrategy, podsToDelete: [target.metadata.name ?? ''] } }));
        break;
      case 'markPod':
        if (target !== undefined) {
          w.pods = w.pods.map((p) => (p === target ? { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, 'apps.kruise.io/specified-delete': 'true' } } } : p));
        }
        break;
      case 'killPod': // someone else deletes a pod (eviction): its PVCs stay for reuse
        if (target !== undefined) w.pods = w.pods.filter((p) => p !== target);
        break;
    }
  }

  test('after any sequence of edits the world settles on the final spec, within the surge limit at every step', () => {
    const arb = fc.record({
      replicas: fc.integer({ min: 0, max: 6 }),
      maxSurge: intOrPercent(2, ['0%', '50%']),
      maxUnavailable: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom('20%', '50%')),
      withPvcs: fc.boolean(),
      rollback: fc.boolean(),
      hook: fc.option(fc.integer({ min: 0, max: 3 })),
      edits: fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), edit), { maxLength: 5 }),
    });
    fc.assert(
      fc.property(arb, (s) => {
        let b = aCloneSet('sample').replicas(s.replicas).maxUnavailable(s.maxUnavailable);
        if (s.maxSurge !== undefined) b = b.maxSurge(s.maxSurge);
        if (s.withPvcs) b = b.volumeClaimTemplate('data');
        if (s.hook !== null) b = b.preDeleteHook({ labelsHandler: { [HOOK]: 'true' } });
        const cs = b.build();
        const world = newWorld(cs, [], [], {
          revisions: ['r1'],
          gates: { CloneSetPartitionRollback: s.rollback },
          ...(s.hook !== null ? { preDeleteHook: { label: HOOK, releaseAfterSteps: s.hook } } : {}),
        });
        let rev = 1;
        const violations: string[] = [];
        const steps: string[] = [];
        for (const [runFor, e] of s.edits) {
          const r = converge(world, { maxSteps: runFor });
          violations.push(...r.violations);
          steps.push(formatSteps(r.steps), `-- edit ${JSON.stringify(e)}`);
          applyEdit(world, e, () => `r${++rev}`);
        }
        editSpec(world, (spec) => ({ ...spec, updateStrategy: { ...spec.updateStrategy, paused: false }, scaleStrategy: { ...spec.scaleStrategy, podsToDelete: [] } }));
        const r = converge(world, { maxSteps: 500 });
        violations.push(...r.violations);
        steps.push(formatSteps(r.steps.slice(-20)));
        const trace = `\n${steps.join('\n')}`;
        assert.deepEqual(violations, [], trace);
        assert.ok(r.converged, `did not converge${trace}`);
        const replicas = world.cloneSet.spec.replicas ?? 1;
        const pods = activePods(world);
        assert.equal(pods.length, replicas, trace);
        assert.ok(pods.every((p) => isPodAvailable(p, 0, world.nowMs)), trace);
        const partition = partitionAbs(world.cloneSet.spec.updateStrategy?.partition, replicas);
        assert.ok(updatedCount(world) >= replicas - partition, trace);
        const ids = world.pods.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']);
        assert.equal(new Set(ids).size, ids.length, 'instance ids are unique');
      }),
      { numRuns: Number(process.env['FC_RUNS'] ?? 200) },
    );
  });
});
