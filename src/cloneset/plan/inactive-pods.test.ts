// Clean-up of inactive pods beyond cloneset-controller.io/inactive-pods-limit (docs/features.md#inactive-pod-clean-up; kruise#947, kruise#925).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planInactivePodCleanup } from './inactive-pods.ts';
import { planCloneSet } from './index.ts';
import { aCloneSet, aPod, fixedIds, plannerConfig, revisions, T0 } from './testing/builders.ts';

const MIN = 60_000;

function limited(cs: CloneSet, limit: string): CloneSet {
  return { ...cs, metadata: { ...cs.metadata, annotations: { 'cloneset-controller.io/inactive-pods-limit': limit } } };
}

const base = aCloneSet('web').replicas(2).build();
const failedAt = (cs: CloneSet, id: string, minute: number): Pod =>
  aPod(cs)
    .instanceId(id)
    .createdAt(T0 + minute * MIN)
    .failed()
    .build();
const readyAt = (cs: CloneSet, id: string, minute: number): Pod =>
  aPod(cs)
    .instanceId(id)
    .createdAt(T0 + minute * MIN)
    .ready()
    .build();
const pendingAt = (cs: CloneSet, id: string, minute: number): Pod =>
  aPod(cs)
    .instanceId(id)
    .createdAt(T0 + minute * MIN)
    .pending()
    .build();

const deleted = (actions: readonly PlanAction[]): string[] =>
  actions.flatMap((a) => (a.kind === 'DeleteInactivePod' ? [`${a.pod.name}${a.replacement !== undefined ? ` <- ${a.replacement}` : ''}`] : []));

describe('inactive pod clean-up (cloneset-controller.io/inactive-pods-limit)', () => {
  test('without the annotation nothing is deleted, however many Failed pods there are (Kruise)', () => {
    const pods = [failedAt(base, 'f0xxx', 0), failedAt(base, 'f1xxx', 1), failedAt(base, 'f2xxx', 2), readyAt(base, 'a0xxx', 3), readyAt(base, 'a1xxx', 4)];
    assert.deepEqual(planInactivePodCleanup(base, pods, pods.slice(3)).actions, []);
  });

  test('at or under the limit nothing is deleted', () => {
    const cs = limited(base, '2');
    const pods = [failedAt(cs, 'f0xxx', 0), failedAt(cs, 'f1xxx', 1), readyAt(cs, 'a0xxx', 3), readyAt(cs, 'a1xxx', 4)];
    assert.deepEqual(planInactivePodCleanup(cs, pods, pods.slice(2)).actions, []);
  });

  test('over the limit with every replica Ready: the oldest inactive pods go, the newest limit stay', () => {
    const cs = limited(base, '1');
    const pods = [
      failedAt(cs, 'f2xxx', 2),
      failedAt(cs, 'f0xxx', 0),
      aPod(cs)
        .instanceId('s1xxx')
        .createdAt(T0 + MIN)
        .succeeded()
        .build(),
      readyAt(cs, 'a0xxx', 3),
      readyAt(cs, 'a1xxx', 4),
    ];
    const plan = planInactivePodCleanup(cs, pods, pods.slice(3));
    assert.deepEqual(deleted(plan.actions), ['web-f0xxx', 'web-s1xxx']);
    assert.deepEqual(
      plan.actions.map((a) => (a.kind === 'DeleteInactivePod' ? a.phase : '')),
      ['Failed', 'Succeeded'],
    );
  });

  test('limit 0 with a replica short: a Failed pod goes only once a younger Ready pod replaces it, one replacement per pod', () => {
    const cs = limited(aCloneSet('web').replicas(3).build(), '0');
    // step 1: f0 failed at minute 0, its replacement r0 (minute 5) is still Pending → nothing to delete
    const step1 = [failedAt(cs, 'f0xxx', 0), failedAt(cs, 'f1xxx', 1), readyAt(cs, 'o0xxx', -10), pendingAt(cs, 'r0xxx', 5)];
    const plan1 = planInactivePodCleanup(cs, step1, step1.slice(2));
    assert.deepEqual(deleted(plan1.actions), []);
    assert.deepEqual(plan1.explain, ['inactive pods over the limit waiting for a Ready replacement: web-f0xxx, web-f1xxx']);
    // step 2: r0 is Ready → the oldest Failed pod goes; f1 still waits (o0 is older than f1, it replaces nothing)
    const step2 = [failedAt(cs, 'f0xxx', 0), failedAt(cs, 'f1xxx', 1), readyAt(cs, 'o0xxx', -10), readyAt(cs, 'r0xxx', 5)];
    assert.deepEqual(deleted(planInactivePodCleanup(cs, step2, step2.slice(2)).actions), ['web-f0xxx <- web-r0xxx']);
    // step 3: f0 is gone, and a second replacement r1 is Ready: all 3 replicas Ready → f1 goes
    const step3 = [failedAt(cs, 'f1xxx', 1), readyAt(cs, 'o0xxx', -10), readyAt(cs, 'r0xxx', 5), readyAt(cs, 'r1xxx', 6)];
    assert.deepEqual(deleted(planInactivePodCleanup(cs, step3, step3.slice(1)).actions), ['web-f1xxx']);
  });

  test('pods being deleted and pods of another controller are never counted nor deleted', () => {
    const cs = limited(base, '0');
    const pods = [
      aPod(cs).instanceId('t0xxx').createdAt(T0).failed().terminating().build(),
      aPod(cs).instanceId('o0xxx').createdAt(T0).failed().ownedBy('someone-else').build(),
      readyAt(cs, 'a0xxx', 3),
      readyAt(cs, 'a1xxx', 4),
    ];
    assert.deepEqual(planInactivePodCleanup(cs, pods, pods.slice(2)).actions, []);
  });

  test('a CloneSet being deleted cleans up nothing (the garbage collector takes the pods)', () => {
    const cs = limited(aCloneSet('web').replicas(2).deleting().build(), '0');
    const pods = [failedAt(cs, 'f0xxx', 0), readyAt(cs, 'a0xxx', 3), readyAt(cs, 'a1xxx', 4)];
    assert.deepEqual(planInactivePodCleanup(cs, pods, pods.slice(1)).actions, []);
  });

  test('in a full pass the replacement is created first and the clean-up never delays it: its deletes come last', () => {
    const cs = limited(base, '0');
    // 2 replicas: a0 Ready, a1 just failed (no replacement yet), f0 failed long ago and was replaced by a0.
    const pods = [failedAt(cs, 'f0xxx', 0), readyAt(cs, 'a0xxx', 1), failedAt(cs, 'a1xxx', 2)];
    const plan = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 + 10 * MIN }, revisions(cs), plannerConfig(), fixedIds('n0xxx'));
    assert.deepEqual(
      plan.actions.map((a) => a.kind),
      ['CreatePods', 'DeleteInactivePod'],
    );
    assert.deepEqual(deleted(plan.actions), ['web-f0xxx <- web-a0xxx']);
  });
});
