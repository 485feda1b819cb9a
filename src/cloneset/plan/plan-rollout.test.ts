// Rollout cases found against the real control plane: pods already
// marked for re-creation are chosen first, success events come from the executor, a new FailedScale /
// FailedUpdate condition is written.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../kube/types.ts';
import { isStatusChanged, computeStatus } from './status.ts';
import { planCloneSet } from './index.ts';
import { markedFirst } from './update.ts';
import { aCloneSet, aPod, plannerConfig, revisions, sequentialIds, T0 } from './testing/builders.ts';

const SEC = 1000;

describe('ReCreate: pods already marked specified-delete are updates in flight', () => {
  // 10 old pods Ready for 1 s with minReadySeconds 2: not yet available, so updating one spends no global budget
  // (docs/features.md#maxunavailable; Kruise pkg/controller/cloneset/sync/cloneset_update.go) — only the target revision's budget, which a marked OLD pod never fills.
  const cs = aCloneSet('sample').replicas(10).maxUnavailable(1).minReadySeconds(2).build();
  const young = (i: number): Pod =>
    aPod(cs)
      .instanceId(`old${i}x`)
      .ofRevision('r1')
      .ready()
      .since(T0 - SEC)
      .build();
  const planFor = (pods: readonly Pod[]) =>
    planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
  const marks = (pods: readonly Pod[]): string[] => planFor(pods).actions.flatMap((a) => (a.kind === 'MarkSpecifiedDelete' ? [a.pod.name] : []));

  test('the first pass marks one pod', () => {
    assert.equal(marks(Array.from({ length: 10 }, (_, i) => young(i))).length, 1);
  });

  test('a later pass chooses the marked pod again instead of marking another, whatever the cache order', () => {
    const pods = Array.from({ length: 10 }, (_, i) => young(i));
    const [first] = marks(pods);
    const marked = pods.map((p) =>
      p.metadata.name === first ? { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, 'apps.kruise.io/specified-delete': 'true' } } } : p,
    );
    // The informer moved the patched pod to the end of its list (ties in the update order follow the list).
    const reordered = [...marked.filter((p) => p.metadata.name !== first), ...marked.filter((p) => p.metadata.name === first)];
    assert.deepEqual(marks(reordered), []);
    assert.deepEqual(marks(marked), []);
    // No second SuccessfulUpdatePodReCreate for it (Kruise records one per pass, its spam filter drops them).
    assert.deepEqual(planFor(reordered).events, []);
  });

  test('pods in PreparingUpdate stay ahead of the marked ones: behind an available marked pod they waited for a budget they use up themselves (simulation seed 7244)', () => {
    const named = (id: string): Pod => aPod(cs).instanceId(id).ofRevision('r1').ready().build();
    const marked = aPod(cs).instanceId('mmmmm').ofRevision('r1').ready().specifiedDelete().build();
    const preparing = ['ppppa', 'ppppb'].map((id) => aPod(cs).instanceId(id).ofRevision('r1').ready().state('PreparingUpdate').build());
    const order = markedFirst([named('nnnnn'), marked, ...preparing]).map((p) => p.metadata.name);
    assert.deepEqual(order, ['sample-ppppa', 'sample-ppppb', 'sample-mmmmm', 'sample-nnnnn']);
  });

  test('the plan carries no success event for a pod it is about to mark: the executor records it after the patch', () => {
    const p = planFor(Array.from({ length: 10 }, (_, i) => young(i)));
    assert.equal(p.actions.filter((a) => a.kind === 'MarkSpecifiedDelete').length, 1);
    assert.deepEqual(p.events, []);
  });
});

describe('FailedScale / FailedUpdate reach the API server (beyond Kruise, docs/features.md#progress-deadline-and-conditions)', () => {
  const cs = aCloneSet('sample').replicas(1).build();
  const base = { cloneSet: cs, pods: [], currentRevision: 'sample-r1', updateRevision: 'sample-r1', collisionCount: 0, nowMs: T0 };

  test('a new FailedScale condition is written even when no counter changed', () => {
    const before = computeStatus(base).status;
    const failed = computeStatus({
      ...base,
      cloneSet: { ...cs, status: before },
      failure: { type: 'FailedScale', message: 'pods "sample-x" is forbidden: exceeded quota' },
    }).status;
    assert.equal(isStatusChanged(before, failed), true);
    assert.equal(failed.conditions?.find((c) => c.type === 'FailedScale')?.message, 'pods "sample-x" is forbidden: exceeded quota');
  });

  test('an existing one is not rewritten (the first message sticks, as in Kruise)', () => {
    const first = computeStatus({ ...base, failure: { type: 'FailedUpdate', message: 'a' } }).status;
    const again = computeStatus({ ...base, cloneSet: { ...cs, status: first }, failure: { type: 'FailedUpdate', message: 'b' } }).status;
    assert.equal(isStatusChanged(first, again), false);
  });
});
