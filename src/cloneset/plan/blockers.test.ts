// Why a rollout does not move on, as the reason codes of cloneset_rollout_blocked: each case planned for real
// (planCloneSet), then read back from the plan and its inputs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { rolloutBlockers, type BlockReason } from './blockers.ts';
import { planCloneSet } from './index.ts';
import { aCloneSet, aPod, plannerConfig, readyPods, revisions, sequentialIds, T0 } from './testing/builders.ts';

function reasons(cs: CloneSet, pods: readonly Pod[]): BlockReason[] {
  const revs = revisions(cs, 'r1', 'r2');
  const cfg = plannerConfig();
  const plan = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revs, cfg, sequentialIds());
  return rolloutBlockers({
    cloneSet: cs,
    pods: plan.claimed,
    currentRevision: revs.current.name,
    updateRevision: revs.update.name,
    phase: plan.phase,
    actions: plan.actions,
    config: cfg,
    nowMs: T0,
  }).map((b) => b.reason);
}

test('a paused rollout with pods on the old revision is blocked by "paused"', () => {
  const cs = aCloneSet().replicas(3).paused().build();
  assert.deepEqual(reasons(cs, readyPods(cs, 3, 'r1')), ['paused']);
});

test('a partition that keeps every pod on the current revision blocks with "partition"', () => {
  const cs = aCloneSet().replicas(3).partition(3).build();
  assert.deepEqual(reasons(cs, readyPods(cs, 3, 'r1')), ['partition']);
});

test('an updated pod that stays unready spends the maxUnavailable budget: "maxUnavailable", and its readiness gate is named', () => {
  const cs = aCloneSet().replicas(3).maxUnavailable(1).build();
  const stuck = aPod(cs).ofRevision('r2').instanceId('new00').running().inPlaceUpdateReady(false).build();
  assert.deepEqual(reasons(cs, [...readyPods(cs, 2, 'r1'), stuck]), ['maxUnavailable', 'readinessGate']);
});

test('a pass that writes nothing at all (phase idle) because the budget is spent is blocked by "maxUnavailable"', () => {
  const cs = aCloneSet().replicas(3).maxUnavailable(1).build();
  const starting = aPod(cs).ofRevision('r2').instanceId('new00').running().withoutReadinessGate().build();
  assert.deepEqual(reasons(cs, [...readyPods(cs, 2, 'r1'), starting]), ['maxUnavailable']);
});

test('a pod held in PreparingDelete by its preDelete hook is named', () => {
  const cs = aCloneSet()
    .replicas(2)
    .preDeleteHook({ labelsHandler: { 'example.com/hold': 'true' } })
    .build();
  const held = aPod(cs).ofRevision('r1').instanceId('old00').ready().state('PreparingDelete').label('example.com/hold', 'true').build();
  assert.ok(reasons(cs, [held, ...readyPods(cs, 1, 'r2')]).includes('preDeleteHook'));
});

test('a CloneSet whose Progressing condition says ProgressDeadlineExceeded is blocked by "progressDeadline"', () => {
  const cs = aCloneSet()
    .replicas(2)
    .maxUnavailable(1)
    .progressDeadlineSeconds(60)
    .conditions({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'CloneSet has timed out progressing' })
    .build();
  const stuck = aPod(cs).ofRevision('r2').instanceId('new00').running().inPlaceUpdateReady(false).build();
  assert.ok(reasons(cs, [...readyPods(cs, 1, 'r1'), stuck]).includes('progressDeadline'));
});

test('a rollout that can go on, or is done, has no blocker', () => {
  const cs = aCloneSet().replicas(3).maxUnavailable(1).build();
  assert.deepEqual(reasons(cs, readyPods(cs, 3, 'r1')), [], 'the budget lets the first pod through: not blocked');
  assert.deepEqual(reasons(cs, readyPods(cs, 3, 'r2')), [], 'rolled out');
});
