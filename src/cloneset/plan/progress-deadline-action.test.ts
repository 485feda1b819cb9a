// The action on a missed progress deadline (docs/features.md#progress-deadline-action; kubernetes#23211, Argo
// Rollouts' progressDeadlineAbort), step by step: deadline missed → rollback → the rollback's own deadline → pause.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import type { ControllerRevision } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planProgressDeadlineAction } from './progress-deadline-action.ts';
import { progressingCondition } from './progressing.ts';
import { aCloneSet, revisions, T0 } from './testing/builders.ts';

const RECORD = 'cloneset-controller.io/progress-deadline-last-action';
const exceeded = (atMs: number): CloneSetCondition => ({
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'CloneSet revision web-r2 has timed out progressing',
  lastUpdateTime: new Date(atMs).toISOString().replace('.000', ''),
  lastTransitionTime: new Date(atMs).toISOString().replace('.000', ''),
});

interface Shape {
  readonly action?: string;
  readonly record?: string;
  readonly update: string;
  readonly conditions: readonly CloneSetCondition[];
  readonly generation?: number;
  readonly observed?: number;
  readonly paused?: boolean;
}

function cloneSet(s: Shape): CloneSet {
  const cs = aCloneSet('web')
    .replicas(3)
    .progressDeadlineSeconds(60)
    .paused(s.paused ?? false)
    .build();
  const annotations = {
    ...(s.action !== undefined ? { 'cloneset-controller.io/progress-deadline-action': s.action } : {}),
    ...(s.record !== undefined ? { [RECORD]: s.record } : {}),
  };
  return {
    ...cs,
    metadata: { ...cs.metadata, generation: s.generation ?? 2, resourceVersion: '42', annotations },
    status: {
      observedGeneration: s.observed ?? s.generation ?? 2,
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 1,
      updatedReadyReplicas: 0,
      updateRevision: s.update,
      currentRevision: 'web-r1',
      conditions: [...s.conditions],
    },
  };
}

type Patch = Extract<PlanAction, { kind: 'PatchCloneSetForProgressDeadline' }>;
const patchOf = (actions: readonly PlanAction[]): Patch | undefined => actions.find((a): a is Patch => a.kind === 'PatchCloneSetForProgressDeadline');

describe('progress deadline action (cloneset-controller.io/progress-deadline-action)', () => {
  const missedAt = T0 - 5_000;

  test('without the annotation a missed deadline only shows in the Progressing condition (Kruise)', () => {
    const cs = cloneSet({ update: 'web-r2', conditions: [exceeded(missedAt)] });
    const r = planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r2'), T0);
    assert.deepEqual(r.actions, []);
    assert.equal(r.condition, undefined);
  });

  test('a status not yet computed for the current spec (observedGeneration behind) is not acted on', () => {
    const cs = cloneSet({ action: 'rollback', update: 'web-r2', conditions: [exceeded(missedAt)], generation: 3, observed: 2 });
    assert.deepEqual(planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r2'), T0).actions, []);
  });

  test('step 1, rollback: the template of the current revision goes back in one guarded patch that also records the action and the change-cause', () => {
    const cs = cloneSet({ action: 'rollback', update: 'web-r2', conditions: [exceeded(missedAt)] });
    const revs = revisions(cs, 'r1', 'r2');
    const patch = patchOf(planProgressDeadlineAction(cs, revs, T0).actions);
    assert.equal(patch?.decision, 'rollback');
    assert.equal(patch?.message, 'revision web-r2 missed its progress deadline (60s): rolling back to revision web-r1');
    assert.deepEqual(patch?.patch, [
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/spec/template', value: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:r1' }] } } },
      {
        op: 'add',
        path: '/metadata/annotations/cloneset-controller.io~1progress-deadline-last-action',
        value: '{"action":"rollback","from":"web-r2","to":"web-r1","at":"2025-01-02T03:04:05Z"}',
      },
      {
        op: 'add',
        path: '/metadata/annotations/kubernetes.io~1change-cause',
        value: 'rolled back from web-r2: it missed its progress deadline (cloneset-controller.io/progress-deadline-action=rollback)',
      },
    ]);
  });

  const rolledBack = '{"action":"rollback","from":"web-r2","to":"web-r1","at":"2025-01-02T03:04:05Z"}';

  test('step 2: after the rollback the Progressing condition restarts its deadline for the rollback, and ProgressDeadlineActionTaken says what happened', () => {
    const cs = cloneSet({ action: 'rollback', record: rolledBack, update: 'web-r1', conditions: [exceeded(missedAt)], generation: 3, observed: 2 });
    const later = T0 + 2_000;
    const progressing = progressingCondition(
      cs,
      [exceeded(missedAt)],
      {
        replicas: 3,
        updatedReplicas: 2,
        updatedAvailableReplicas: 2,
        expectedUpdatedReplicas: 3,
        currentRevision: 'web-r1',
        updateRevision: 'web-r1',
      },
      later,
    );
    assert.equal(progressing.condition?.reason, 'CloneSetUpdated');
    assert.equal(progressing.requeueAfterMs, 61_000);
    const r = planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r1'), later);
    assert.deepEqual(r.condition, {
      type: 'ProgressDeadlineActionTaken',
      status: 'True',
      reason: 'RolledBack',
      message: 'revision web-r2 missed its progress deadline: rolled back to web-r1',
      lastTransitionTime: '2025-01-02T03:04:05Z',
      lastUpdateTime: '2025-01-02T03:04:05Z',
    });
    assert.equal(patchOf(r.actions), undefined, 'the status still describes the old spec: nothing more to do');
  });

  test('without a rollback record, an exceeded deadline stays sticky (Kruise)', () => {
    const cs = cloneSet({ action: 'rollback', update: 'web-r1', conditions: [exceeded(missedAt)] });
    const progressing = progressingCondition(
      cs,
      [exceeded(missedAt)],
      {
        replicas: 3,
        updatedReplicas: 2,
        updatedAvailableReplicas: 2,
        expectedUpdatedReplicas: 3,
        currentRevision: 'web-r1',
        updateRevision: 'web-r1',
      },
      T0,
    );
    assert.equal(progressing.condition?.reason, 'ProgressDeadlineExceeded');
  });

  test('step 3: the rollback itself misses its deadline → pause, never a second rollback', () => {
    const cs = cloneSet({ action: 'rollback', record: rolledBack, update: 'web-r1', conditions: [exceeded(T0 + 61_000)] });
    const patch = patchOf(planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r1'), T0 + 62_000).actions);
    assert.equal(patch?.decision, 'pause');
    assert.equal(patch?.message, 'revision web-r1 missed its progress deadline (60s): pausing the rollout (the rollback itself missed the deadline)');
    assert.deepEqual(patch?.patch, [
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/spec/updateStrategy/rollingUpdate/paused', value: true },
      { op: 'add', path: '/metadata/annotations/cloneset-controller.io~1progress-deadline-last-action', value: '{"action":"pause","from":"web-r1","at":"2025-01-02T03:05:07Z"}' },
    ]);
  });

  test('step 4: once paused nothing more is done; the condition says it paused and how to go on', () => {
    const record = '{"action":"pause","from":"web-r1","at":"2025-01-02T03:05:07Z"}';
    const cs = cloneSet({ action: 'rollback', record, update: 'web-r1', conditions: [exceeded(T0 + 61_000)], paused: true });
    const r = planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r1'), T0 + 70_000);
    assert.deepEqual(r.actions, []);
    assert.equal(r.condition?.reason, 'Paused');
    assert.equal(r.condition?.message, 'revision web-r1 missed its progress deadline: paused (kubectl cloneset rollout resume to go on)');
  });

  test('action pause: a missed deadline pauses the rollout', () => {
    const cs = cloneSet({ action: 'pause', update: 'web-r2', conditions: [exceeded(missedAt)] });
    const patch = patchOf(planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r2'), T0).actions);
    assert.equal(patch?.decision, 'pause');
    assert.equal(patch?.message, 'revision web-r2 missed its progress deadline (60s): pausing the rollout');
  });

  test('rollback with no older revision (the first rollout) pauses instead', () => {
    const cs = cloneSet({ action: 'rollback', update: 'web-r1', conditions: [exceeded(missedAt)] });
    const patch = patchOf(planProgressDeadlineAction(cs, revisions(cs, 'r1', 'r1'), T0).actions);
    assert.equal(patch?.message, 'revision web-r1 missed its progress deadline (60s): pausing the rollout (no older revision to roll back to)');
  });

  test('the revision rolled back to gets the change-cause, also when the controller stopped right after the rollback', () => {
    const cs = cloneSet({ action: 'rollback', record: rolledBack, update: 'web-r1', conditions: [] });
    const rev = (annotations: Record<string, string>): ControllerRevision => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'web-r1', annotations },
      revision: 3,
    });
    const cause = 'rolled back from web-r2: it missed its progress deadline (cloneset-controller.io/progress-deadline-action=rollback)';
    const without = planProgressDeadlineAction(cs, { ...revisions(cs, 'r1', 'r1'), history: [rev({})] }, T0);
    assert.deepEqual(without.actions, [{ kind: 'AnnotateRevision', revision: 'web-r1', annotations: { 'kubernetes.io/change-cause': cause } }]);
    const withCause = planProgressDeadlineAction(cs, { ...revisions(cs, 'r1', 'r1'), history: [rev({ 'kubernetes.io/change-cause': cause })] }, T0);
    assert.deepEqual(withCause.actions, []);
  });
});
