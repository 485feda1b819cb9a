// Lifecycle hooks (docs/features.md#lifecycle-hooks, #scaling, #update-types; Kruise pkg/util/lifecycle/lifecycle_utils.go): for each hook and each handler kind (labels,
// finalizers), a table walks a pod through its states one reconcile pass at a time; markPodNotReady and the
// KruisePodReady condition (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go); scaling with PreparingDelete (user manual, three cases × exclude).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, LifecycleHook } from '../../api/cloneset.ts';
import { CONDITION_KRUISE_POD_READY } from '../../api/well-known.ts';
import type { Pod, PodCondition } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet, type PlanResult } from './index.ts';
import { inPlaceUpdateLifecycle, refreshLifecycle, refreshTarget, setStateActions } from './lifecycle-state.ts';
import { isPodAvailable, lifecycleStateOf } from './pod-predicates.ts';
import { formatReadinessMessage, kruisePodReadyAction, parseReadinessMessage } from './pod-readiness.ts';
import { newPod } from './pod-template.ts';
import { aCloneSet, aPod, plannerConfig, readyPods, revisions, sequentialIds, T0 } from './testing/builders.ts';

const DRAIN_LABEL = 'example.com/drain';
const BLOCKER = 'example.io/unready-blocker';

type Handler = 'labels' | 'finalizers';
const HANDLERS: readonly Handler[] = ['labels', 'finalizers'];

function hookOf(kind: Handler, markPodNotReady = false): LifecycleHook {
  const h: LifecycleHook = kind === 'labels' ? { labelsHandler: { [DRAIN_LABEL]: 'true' } } : { finalizersHandler: [BLOCKER] };
  return markPodNotReady ? { ...h, markPodNotReady } : h;
}

/** The user controller's side: put the handler on the pod, or take it off. */
function withHandler(pod: Pod, kind: Handler, on: boolean): Pod {
  if (kind === 'labels') {
    const labels = { ...pod.metadata.labels };
    if (on) labels[DRAIN_LABEL] = 'true';
    else delete labels[DRAIN_LABEL];
    return { ...pod, metadata: { ...pod.metadata, labels } };
  }
  const finalizers = (pod.metadata.finalizers ?? []).filter((f) => f !== BLOCKER);
  return { ...pod, metadata: { ...pod.metadata, finalizers: on ? [...finalizers, BLOCKER] : finalizers } };
}

function withLifecycle(cs: CloneSet, lifecycle: NonNullable<CloneSet['spec']['lifecycle']>): CloneSet {
  return { ...cs, spec: { ...cs.spec, lifecycle } };
}

function withKruiseGate(pod: Pod, condition?: Omit<PodCondition, 'type'>): Pod {
  const conditions = [...(pod.status?.conditions ?? [])];
  if (condition !== undefined) conditions.push({ type: CONDITION_KRUISE_POD_READY, ...condition });
  if (conditions.some((c) => c.type === 'Ready')) conditions.push({ type: 'ContainersReady', status: 'True' });
  return {
    ...pod,
    spec: { ...pod.spec, readinessGates: [...(pod.spec.readinessGates ?? []), { conditionType: CONDITION_KRUISE_POD_READY }] },
    status: { ...pod.status, conditions },
  };
}

function setCondition(pod: Pod, c: PodCondition): Pod {
  const others = (pod.status?.conditions ?? []).filter((x) => x.type !== c.type);
  const old = (pod.status?.conditions ?? []).find((x) => x.type === c.type);
  return { ...pod, status: { ...pod.status, conditions: [...others, { ...old, ...c }] } };
}

/** Applies the writes of a plan to the pods the way the API server would (deleted pods disappear). */
function apply(pods: readonly Pod[], actions: readonly PlanAction[]): Pod[] {
  let out = [...pods];
  const edit = (name: string, f: (p: Pod) => Pod): void => {
    out = out.map((p) => (p.metadata.name === name ? f(p) : p));
  };
  for (const a of actions) {
    switch (a.kind) {
      case 'PatchPodLifecycle':
        edit(a.pod.name, (p) => ({
          ...p,
          metadata: {
            ...p.metadata,
            labels: { ...p.metadata.labels, 'lifecycle.apps.kruise.io/state': a.state, ...a.addLabels },
            finalizers: [...new Set([...(p.metadata.finalizers ?? []), ...(a.addFinalizers ?? [])])],
          },
        }));
        break;
      case 'PatchPodConditions':
        edit(a.pod.name, (p) => a.conditions.reduce((q, c) => setCondition(q, { ...c }), p));
        break;
      case 'DeletePods':
        out = out.filter((p) => !a.pods.some((d) => d.pod.name === p.metadata.name));
        break;
      case 'CreatePods':
        out = [...out, ...a.pods.map((c) => ({ ...c.pod, metadata: { ...c.pod.metadata, uid: `uid-${c.pod.metadata.name ?? ''}` } }))];
        break;
      default:
        break;
    }
  }
  return out;
}

function pass(cs: CloneSet, pods: readonly Pod[], exclude = false): PlanResult {
  return planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs), plannerConfig({}, exclude), sequentialIds());
}

/** Lifecycle and condition writes of a plan, compact: `PreparingDelete`, `KruisePodReady=False`, `delete`. */
function writes(p: PlanResult, name: string): string[] {
  return p.actions.flatMap((a) => {
    if (a.kind === 'PatchPodLifecycle' && a.pod.name === name) return [a.state];
    if (a.kind === 'PatchPodConditions' && a.pod.name === name) return a.conditions.map((c) => `${c.type}=${c.status}`);
    if (a.kind === 'DeletePods') return a.pods.filter((d) => d.pod.name === name).map(() => 'delete');
    if (a.kind === 'CreatePods') return a.pods.map(() => 'create');
    return [];
  });
}

const byName = (pods: readonly Pod[], name: string): Pod | undefined => pods.find((p) => p.metadata.name === name);

describe('preNormal hook (docs/features.md#lifecycle-states; manual "State circulation")', () => {
  for (const kind of HANDLERS) {
    test(`${kind} handler: PreparingNormal waits, unavailable, until every handler is present; then Normal and available`, () => {
      const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { preNormal: hookOf(kind) });
      let pods = [aPod(cs).instanceId('aaaaa').ready().state('PreparingNormal').build()];
      const name = 'sample-aaaaa';
      const steps: { user?: (p: Pod) => Pod; expect: string[]; state: string; available: boolean }[] = [
        { expect: [], state: 'PreparingNormal', available: false },
        { expect: [], state: 'PreparingNormal', available: false }, // level-triggered: looked at again, still waiting
        { user: (p) => withHandler(p, kind, true), expect: ['Normal'], state: 'Normal', available: true },
        { expect: [], state: 'Normal', available: true },
        // removing the handler later does not take a Normal pod back
        { user: (p) => withHandler(p, kind, false), expect: [], state: 'Normal', available: true },
      ];
      for (const [i, s] of steps.entries()) {
        if (s.user !== undefined) pods = pods.map(s.user);
        const p = pass(cs, pods);
        assert.deepEqual(writes(p, name), s.expect, `step ${i}`);
        pods = apply(pods, p.actions);
        const pod = byName(pods, name);
        assert.ok(pod);
        assert.equal(lifecycleStateOf(pod), s.state, `step ${i}`);
        assert.equal(isPodAvailable(pod, 0, T0), s.available, `step ${i}`);
      }
    });
  }

  test('a hook with a label and a finalizer needs both (allHooked); scheduling is not required', () => {
    const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { preNormal: { labelsHandler: { [DRAIN_LABEL]: 'true' }, finalizersHandler: [BLOCKER] } });
    const pod = aPod(cs).instanceId('aaaaa').pending().state('PreparingNormal').build();
    assert.equal(refreshTarget(cs, withHandler(pod, 'labels', true)), undefined);
    assert.equal(refreshTarget(cs, withHandler(pod, 'finalizers', true)), undefined);
    assert.equal(refreshTarget(cs, withHandler(withHandler(pod, 'labels', true), 'finalizers', true)), 'Normal');
  });

  test('without a preNormal hook a pod becomes Normal once scheduled', () => {
    const cs = aCloneSet('sample').replicas(1).build();
    assert.equal(refreshTarget(cs, aPod(cs).pending().state('PreparingNormal').build()), undefined);
    assert.equal(refreshTarget(cs, aPod(cs).pending().onNode('n1').state('PreparingNormal').build()), 'Normal');
  });
});

describe('preDelete hook (docs/features.md#scaling, #lifecycle-states)', () => {
  for (const kind of HANDLERS) {
    for (const mark of [false, true]) {
      test(`${kind} handler${mark ? ', markPodNotReady' : ''}: scale-in → PreparingDelete, waits while hooked, deleted once released`, () => {
        const cs = withLifecycle(aCloneSet('sample').replicas(0).build(), { preDelete: hookOf(kind, mark) });
        const victim = withKruiseGate(withHandler(aPod(cs).instanceId('zzzzz').ready().build(), kind, true), { status: 'True' });
        let pods = [victim];
        const name = 'sample-zzzzz';
        const steps: { user?: (p: Pod) => Pod; expect: string[]; state?: string }[] = [
          { expect: mark ? ['KruisePodReady=False', 'Ready=False', 'PreparingDelete'] : ['PreparingDelete'], state: 'PreparingDelete' },
          { expect: [], state: 'PreparingDelete' },
          { expect: [], state: 'PreparingDelete' },
          { user: (p) => withHandler(p, kind, false), expect: ['delete'] },
        ];
        for (const [i, s] of steps.entries()) {
          if (s.user !== undefined) pods = pods.map((p) => (p.metadata.name === name ? (s.user?.(p) ?? p) : p));
          const p = pass(cs, pods);
          assert.deepEqual(writes(p, name), s.expect, `step ${i}`);
          pods = apply(pods, p.actions);
          const pod = byName(pods, name);
          if (s.state === undefined) {
            assert.equal(pod, undefined, `step ${i}: deleted`);
            continue;
          }
          assert.ok(pod);
          assert.equal(lifecycleStateOf(pod), s.state, `step ${i}`);
          const cond = pod.status?.conditions?.find((c) => c.type === CONDITION_KRUISE_POD_READY);
          assert.equal(cond?.status, mark ? 'False' : 'True', `step ${i}`);
          if (mark) assert.equal(cond?.message, '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]');
        }
      });
    }
  }

  test('an unhooked pod is deleted at once even when the CloneSet has a preDelete hook', () => {
    const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { preDelete: hookOf('finalizers') });
    const pods = [...readyPods(cs, 1), aPod(cs).instanceId('zzzzz').pending().build()];
    assert.deepEqual(writes(pass(cs, pods), 'sample-zzzzz'), ['delete']);
  });

  test('a pod in PreparingDelete is never an update candidate', () => {
    const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { preDelete: hookOf('labels') });
    const waiting = withHandler(aPod(cs).instanceId('zzzzz').ready().state('PreparingDelete').specifiedDelete().build(), 'labels', true);
    const p = planCloneSet({ cloneSet: cs, pods: [waiting], pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(
      p.actions.filter((a) => a.kind !== 'SetInPlaceUpdateReady'),
      [],
    );
  });
});

describe('inPlaceUpdate hook (docs/features.md#update-types, #lifecycle-states)', () => {
  for (const kind of HANDLERS) {
    test(`${kind} handler: Normal → PreparingUpdate → (released) Updating → Updated → (handler back) Normal`, () => {
      const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { inPlaceUpdate: hookOf(kind) });
      let pod = withHandler(aPod(cs).instanceId('aaaaa').ready().build(), kind, true);
      const ctx = { updateRevision: 'sample-r2', isUpdateComplete: () => true };
      // chosen for an in-place update while hooked: PreparingUpdate, the update waits
      const d = inPlaceUpdateLifecycle(cs, pod);
      assert.equal(d.kind, 'wait');
      if (d.kind !== 'wait') return;
      assert.deepEqual(
        d.actions.map((a) => (a.kind === 'PatchPodLifecycle' ? a.state : a.kind)),
        ['PreparingUpdate'],
      );
      [pod] = apply([pod], d.actions) as [Pod];
      // chosen again, still hooked: waits without writes, every pass
      for (let i = 0; i < 2; i++) assert.deepEqual(inPlaceUpdateLifecycle(cs, pod), { kind: 'wait', actions: [], reason: 'waiting for the inPlaceUpdate hook to be released' });
      assert.equal(refreshTarget(cs, pod, ctx), undefined, 'a PreparingUpdate pod of the old revision stays');
      // the user controller releases the hook: the update goes ahead (the in-place write sets Updating)
      pod = withHandler(pod, kind, false);
      assert.deepEqual(inPlaceUpdateLifecycle(cs, pod), { kind: 'proceed' });
      pod = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, 'lifecycle.apps.kruise.io/state': 'Updating', 'controller-revision-hash': 'sample-r2' } } };
      assert.equal(refreshTarget(cs, pod, { ...ctx, isUpdateComplete: () => false }), undefined, 'Updating until complete');
      assert.equal(refreshTarget(cs, pod, ctx), 'Updated', 'complete, handler not back: Updated');
      [pod] = apply([pod], refreshLifecycle(cs, pod, ctx).actions) as [Pod];
      assert.equal(lifecycleStateOf(pod), 'Updated');
      assert.equal(refreshTarget(cs, pod, ctx), undefined, 'Updated waits for the handler');
      assert.equal(isPodAvailable(pod, 0, T0), false, 'Updated is not available');
      pod = withHandler(pod, kind, true);
      assert.equal(refreshTarget(cs, pod, ctx), 'Normal');
    });

    test(`${kind} handler: an Updated pod chosen for another update goes back to PreparingUpdate and gets the handler again`, () => {
      const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { inPlaceUpdate: hookOf(kind) });
      const pod = aPod(cs).instanceId('aaaaa').ready().state('Updated').build();
      const d = inPlaceUpdateLifecycle(cs, pod);
      assert.equal(d.kind, 'wait');
      if (d.kind !== 'wait') return;
      const patch = d.actions.find((a) => a.kind === 'PatchPodLifecycle');
      assert.deepEqual(patch, {
        kind: 'PatchPodLifecycle',
        pod: { name: 'sample-aaaaa', uid: 'uid-sample-aaaaa', resourceVersion: '1' },
        state: 'PreparingUpdate',
        ...(kind === 'labels' ? { addLabels: { [DRAIN_LABEL]: 'true' } } : { addFinalizers: [BLOCKER] }),
      });
      const [after] = apply([pod], d.actions) as [Pod];
      assert.deepEqual(inPlaceUpdateLifecycle(cs, after).kind, 'wait', 'hooked again: waits for the user controller');
    });
  }

  test('state table of updatePod (docs/features.md#update-types): not hooked → proceed; other states', () => {
    const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { inPlaceUpdate: hookOf('labels') });
    const at = (state: string): Pod => {
      const p = aPod(cs).instanceId('aaaaa').ready().state('').build();
      return state === '' ? p : { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, 'lifecycle.apps.kruise.io/state': state } } };
    };
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('')), { kind: 'proceed' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('PreparingNormal')), { kind: 'proceed' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('Normal')), { kind: 'proceed' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('PreparingUpdate')), { kind: 'proceed' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('Updating')), { kind: 'proceed' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('Custom')), { kind: 'refuse', error: 'not allowed to in-place update pod sample-aaaaa in state Custom' });
    assert.deepEqual(inPlaceUpdateLifecycle(cs, at('PreparingDelete')).kind, 'refuse');
    const noHook = aCloneSet('sample').replicas(1).build();
    assert.deepEqual(inPlaceUpdateLifecycle(noHook, at('Updated')).kind, 'wait');
    assert.equal(refreshTarget(noHook, at('Updated')), 'Normal', 'without lifecycle an Updated pod goes to Normal');
    assert.equal(refreshTarget(noHook, at('Updating'), { isUpdateComplete: () => true }), 'Normal', 'without lifecycle: straight to Normal');
    const otherHookOnly = withLifecycle(noHook, { preDelete: hookOf('labels') });
    assert.equal(refreshTarget(otherHookOnly, at('Updating'), { isUpdateComplete: () => true }), 'Updated', 'lifecycle without inPlaceUpdate: one pass in Updated');
    assert.equal(refreshTarget(otherHookOnly, at('Updated')), 'Normal');
  });

  test('a pod left in PreparingUpdate by an update no longer wanted goes back to Normal (seed 4421; Kruise leaves it there)', () => {
    // 3 replicas, partition 2: one pod of r2 is all the update wants, and a scale-up already made it.
    const base = withLifecycle(aCloneSet('sample').replicas(3).partition(2).build(), { inPlaceUpdate: hookOf('finalizers') });
    const cs: CloneSet = { ...base, spec: { ...base.spec, updateStrategy: { ...base.spec.updateStrategy, type: 'InPlaceIfPossible' } } };
    const released = aPod(cs).instanceId('aaaaa').ready().state('PreparingUpdate').build(); // its hook was released
    const pods = [released, aPod(cs).instanceId('bbbbb').ready().build(), aPod(cs).instanceId('ccccc').ofRevision('r2').ready().build()];
    const p = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.deepEqual(
      p.actions.filter((a) => a.kind === 'PatchPodLifecycle').map((a) => `${a.pod.name} → ${a.kind === 'PatchPodLifecycle' ? a.state : ''}`),
      ['sample-aaaaa → Normal'],
    );
    // While the update still wants it, it stays and is updated first (Kruise: PreparingUpdate pods lead the candidates).
    const wanting: CloneSet = { ...cs, spec: { ...cs.spec, updateStrategy: { ...cs.spec.updateStrategy, partition: 1 } } };
    const next = planCloneSet({ cloneSet: wanting, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(wanting, 'r1', 'r2'), plannerConfig(), sequentialIds());
    assert.equal(
      next.actions.some((a) => a.kind === 'PatchPodLifecycle' && a.pod.name === 'sample-aaaaa' && a.state === 'Normal'),
      false,
    );
  });

  test('a PreparingUpdate pod whose template was rolled back to its own revision leaves PreparingUpdate (kruise#1156)', () => {
    const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), { inPlaceUpdate: hookOf('labels') });
    const pod = aPod(cs).instanceId('aaaaa').ready().state('PreparingUpdate').build();
    assert.equal(refreshTarget(cs, pod, { updateRevision: 'sample-r1' }), 'Updated');
    assert.equal(refreshTarget(cs, withHandler(pod, 'labels', true), { updateRevision: 'sample-r1' }), 'Normal');
    assert.equal(refreshTarget(cs, pod, { updateRevision: 'sample-r2' }), undefined);
  });

  test('the default completion: not complete during a grace period or with an in-place state annotation', () => {
    const cs = aCloneSet('sample').replicas(1).build();
    const pod = aPod(cs).ready().state('Updating').build();
    const annotated = (k: string): Pod => ({ ...pod, metadata: { ...pod.metadata, annotations: { [k]: '{}' } } });
    assert.equal(refreshTarget(cs, pod), 'Normal');
    assert.equal(refreshTarget(cs, annotated('apps.kruise.io/inplace-update-grace')), undefined);
    assert.equal(refreshTarget(cs, annotated('apps.kruise.io/inplace-update-state')), undefined);
  });
});

describe('markPodNotReady and KruisePodReady (docs/features.md#markpodnotready)', () => {
  const lifecycle = { preDelete: hookOf('finalizers', true), inPlaceUpdate: hookOf('finalizers', true) };
  const cs = withLifecycle(aCloneSet('sample').replicas(1).build(), lifecycle);
  const conditionOf = (a: PlanAction | undefined): unknown => (a?.kind === 'PatchPodConditions' ? a.conditions : a);

  test('new pods of a CloneSet with markPodNotReady get the KruisePodReady gate; others do not', () => {
    const gates = (c: CloneSet): string[] =>
      (newPod(c, c.spec.template, 'sample-r1', 'aaaaa', { shortHashLabel: false, nowMs: T0 }).spec.readinessGates ?? []).map((g) => g.conditionType);
    assert.deepEqual(gates(cs), ['InPlaceUpdateReady', 'KruisePodReady']);
    assert.deepEqual(gates(withLifecycle(cs, { preDelete: hookOf('labels') })), ['InPlaceUpdateReady']);
    assert.deepEqual(gates(withLifecycle(cs, { inPlaceUpdate: hookOf('labels', true) })), ['InPlaceUpdateReady', 'KruisePodReady']);
  });

  test('the refresh initialises a missing condition to True; pods without the gate are left alone', () => {
    const pod = withKruiseGate(aPod(cs).ready().build());
    assert.deepEqual(conditionOf(kruisePodReadyAction(cs, pod, 'Normal')), [{ type: 'KruisePodReady', status: 'True' }]);
    assert.equal(kruisePodReadyAction(cs, withKruiseGate(aPod(cs).ready().build(), { status: 'True' }), 'Normal'), undefined);
    assert.equal(kruisePodReadyAction(cs, aPod(cs).ready().build(), 'PreparingDelete'), undefined);
  });

  test('entering PreparingUpdate adds preUpdateHook (Ready False), Updated removes it (True), Ready is left to the kubelet', () => {
    const pod = withKruiseGate(aPod(cs).ready().build(), { status: 'True' });
    const prep = setStateActions(cs, pod, 'PreparingUpdate');
    assert.deepEqual(conditionOf(prep[0]), [
      { type: 'KruisePodReady', status: 'False', message: '[{"userAgent":"Lifecycle","key":"preUpdateHook"}]' },
      { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'the status of pod readiness gate "KruisePodReady" is not "True", but False' },
    ]);
    const [prepared] = apply([pod], prep) as [Pod];
    assert.deepEqual(setStateActions(cs, prepared, 'PreparingUpdate'), [], 'already there, key present: nothing');
    const updating = { ...prepared, metadata: { ...prepared.metadata, labels: { ...prepared.metadata.labels, 'lifecycle.apps.kruise.io/state': 'Updating' } } };
    assert.equal(kruisePodReadyAction(cs, updating, 'Updating'), undefined, 'the key stays while Updating');
    const done = setStateActions(cs, updating, 'Updated');
    assert.deepEqual(conditionOf(done[0]), [{ type: 'KruisePodReady', status: 'True', message: '[]' }]);
  });

  test('fix for a Kruise markPodNotReady quirk (docs/features.md#markpodnotready): a pod going straight to Normal (all-hooked) loses preUpdateHook too', () => {
    const pod0 = withKruiseGate(aPod(cs).ready().state('Updating').build(), { status: 'False', message: '[{"userAgent":"Lifecycle","key":"preUpdateHook"}]' });
    const pod = withHandler(pod0, 'finalizers', true);
    const r = refreshLifecycle(cs, pod, { isUpdateComplete: () => true });
    assert.deepEqual(
      r.actions.map((a) => (a.kind === 'PatchPodLifecycle' ? a.state : conditionOf(a))),
      [[{ type: 'KruisePodReady', status: 'True', message: '[]' }], 'Normal'],
    );
    // and a pod already stuck in Normal with the key (left by Kruise) is repaired by the refresh
    const stuck = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, 'lifecycle.apps.kruise.io/state': 'Normal' } } };
    assert.deepEqual(refreshLifecycle(cs, stuck).actions.map(conditionOf), [[{ type: 'KruisePodReady', status: 'True', message: '[]' }]]);
  });

  test("other user agents' keys are kept, and keep the condition False", () => {
    const msg = '[{"userAgent":"Lifecycle","key":"preUpdateHook"},{"userAgent":"PUB","key":"x"}]';
    const pod = withKruiseGate(aPod(cs).ready().state('Updating').build(), { status: 'False', message: msg });
    assert.deepEqual(conditionOf(kruisePodReadyAction(cs, pod, 'Updated')), [{ type: 'KruisePodReady', status: 'False', message: '[{"userAgent":"PUB","key":"x"}]' }]);
  });

  test('messages: Go JSON, sorted by userAgent then key; unparsable → empty', () => {
    assert.equal(formatReadinessMessage([]), '[]');
    assert.equal(
      formatReadinessMessage([
        { userAgent: 'Lifecycle', key: 'preUpdateHook' },
        { userAgent: 'A<b>', key: 'k' },
        { userAgent: 'Lifecycle', key: 'preDeleteHook' },
      ]),
      '[{"userAgent":"A\\u003cb\\u003e","key":"k"},{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]',
    );
    assert.deepEqual(parseReadinessMessage('not json'), []);
    assert.deepEqual(parseReadinessMessage('{"a":1}'), []);
    assert.deepEqual(parseReadinessMessage('[{"userAgent":"Lifecycle","key":"preDeleteHook"}]'), [{ userAgent: 'Lifecycle', key: 'preDeleteHook' }]);
  });

  test('a PreparingDelete pod that is cancelled loses preDeleteHook (markPodNotReady turned off meanwhile)', () => {
    const plain = withLifecycle(cs, { preDelete: hookOf('finalizers') });
    const pod = withKruiseGate(aPod(plain).ready().state('PreparingDelete').build(), { status: 'False', message: '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]' });
    assert.deepEqual(
      setStateActions(plain, pod, 'PreparingNormal').map((a) => (a.kind === 'PatchPodLifecycle' ? a.state : conditionOf(a))),
      [[{ type: 'KruisePodReady', status: 'True', message: '[]' }], 'PreparingNormal'],
    );
    assert.equal(kruisePodReadyAction(plain, pod, 'PreparingDelete'), undefined, 'while still PreparingDelete the key stays');
  });
});

describe('scaling with PreparingDelete (manual "Scaling with PreparingDelete", docs/features.md#scaling)', () => {
  const N = 3;
  const build = (exclude: boolean, replicas: number, podsToDelete: string[] = []): CloneSet => {
    let b = aCloneSet('sample').replicas(replicas).preDeleteHook(hookOf('finalizers'));
    if (exclude) b = b.excludePreparingDelete();
    if (podsToDelete.length > 0) b = b.podsToDelete(...podsToDelete);
    return b.build();
  };
  const start = (cs: CloneSet): Pod[] => readyPods(cs, N).map((p) => withHandler(p, 'finalizers', true));
  const victimOf = (pods: readonly Pod[]): Pod | undefined => pods.find((p) => lifecycleStateOf(p) === 'PreparingDelete');
  /** Runs passes until nothing is written (at most 6). */
  const settle = (cs: CloneSet, pods: Pod[]): { pods: Pod[]; all: string[] } => {
    const all: string[] = [];
    for (let i = 0; i < 6; i++) {
      const p = pass(cs, pods);
      if (p.actions.length === 0) break;
      all.push(...p.actions.map((a) => (a.kind === 'PatchPodLifecycle' ? `${a.pod.name}=${a.state}` : a.kind)));
      pods = apply(pods, p.actions);
    }
    return { pods, all };
  };

  for (const exclude of [false, true]) {
    const tag = exclude ? 'with the exclude label' : 'by default';
    test(`${tag}: scale N → N−1, then back to N while the victim waits → the victim returns to Normal, no new pod`, () => {
      let { pods } = settle(build(exclude, N - 1), start(build(exclude, N)));
      const victim = victimOf(pods);
      assert.ok(victim, 'one pod waits in PreparingDelete');
      assert.equal(pods.length, N);
      ({ pods } = settle(build(exclude, N), pods));
      assert.equal(pods.length, N, 'no new pod');
      assert.equal(lifecycleStateOf(byName(pods, victim.metadata.name ?? '') ?? victim), 'Normal');
    });

    test(`${tag}: scale N → N−1 with the pod in podsToDelete, then back to N → ${exclude ? 'a new pod at once' : 'no new pod while it waits'}`, () => {
      const target = 'sample-old1x';
      let { pods } = settle(build(exclude, N - 1, [target]), start(build(exclude, N)));
      assert.equal(lifecycleStateOf(byName(pods, target) ?? pods[0] ?? ({} as Pod)), 'PreparingDelete');
      const r = settle(build(exclude, N, [target]), pods);
      pods = r.pods;
      assert.equal(lifecycleStateOf(byName(pods, target) ?? ({} as Pod)), 'PreparingDelete', 'a specified pod is never brought back');
      assert.equal(pods.length, exclude ? N + 1 : N);
      // once the hook is released the pod goes, and (by default) its replacement comes
      pods = pods.map((p) => (p.metadata.name === target ? withHandler(p, 'finalizers', false) : p));
      ({ pods } = settle(build(exclude, N, [target]), pods));
      assert.equal(byName(pods, target), undefined);
      assert.equal(pods.length, N);
    });

    test(`${tag}: a specified delete with replicas unchanged → ${exclude ? 'a new pod at once' : 'no new pod until the old one terminates'}`, () => {
      const target = 'sample-old1x';
      let { pods } = settle(build(exclude, N, [target]), start(build(exclude, N)));
      assert.equal(lifecycleStateOf(byName(pods, target) ?? ({} as Pod)), 'PreparingDelete');
      assert.equal(pods.length, exclude ? N + 1 : N);
      // cancelling the specified delete (the name leaves podsToDelete) brings the pod back — unless a new pod
      // already replaced it, in which case it is not wanted any more and stays in PreparingDelete
      ({ pods } = settle(build(exclude, N), pods));
      const back = byName(pods, target);
      assert.ok(back);
      assert.equal(lifecycleStateOf(back), exclude ? 'PreparingDelete' : 'Normal');
    });
  }

  test('with markPodNotReady a PreparingDelete pod is never brought back (docs/features.md#scaling)', () => {
    const cs = withLifecycle(build(false, N), { preDelete: hookOf('finalizers', true) });
    let { pods } = settle(withLifecycle(build(false, N - 1), { preDelete: hookOf('finalizers', true) }), start(cs));
    assert.ok(victimOf(pods));
    ({ pods } = settle(cs, pods));
    assert.ok(victimOf(pods), 'still waiting');
  });
});
