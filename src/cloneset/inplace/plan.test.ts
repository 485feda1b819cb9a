// The in-place engine inside planCloneSet (docs/features.md#update-types, #in-place-update, #lifecycle-states; Kruise pkg/controller/cloneset/sync/cloneset_update.go), step by step against a small
// simulated API server + kubelet with a pinned clock: the not-ready step and kruise#2276, the grace period,
// completion, readiness given back, InPlaceOnly, and a whole rollout under maxUnavailable.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetUpdateStrategy } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction } from '../plan/actions.ts';
import { planCloneSet, type PlanResult, type ResolvedRevisions } from '../plan/index.ts';
import { isPodAvailable, podCondition, revisionMatches } from '../plan/pod-predicates.ts';
import { rfc3339 } from '../plan/pod-template.ts';
import { newRevision, templateFromRevision } from '../plan/revisions.ts';
import { aCloneSet, plannerConfig, readyPods, revisionName, revisions, sequentialIds, T0 } from '../plan/testing/builders.ts';
import { applyPodPatch, applyPodStatusPatch, PatchConflict } from './testing/apply-patch.ts';
import { decodeState } from './state.ts';

type Action<K extends PlanAction['kind']> = Extract<PlanAction, { kind: K }>;

function inPlaceCloneSet(replicas: number, strategy: Partial<CloneSetUpdateStrategy> = {}): CloneSet {
  const cs = aCloneSet().replicas(replicas).build();
  return { ...cs, spec: { ...cs.spec, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, ...strategy } } };
}

/**
 * A rollout to r2 rolled back to r1 before it finished: revisions r1 (current and update) and r2 in the history, and
 * one pod on r2 still drained for its update (InPlaceUpdateReady False, StartInPlaceUpdate).
 */
function rolledBackToR1(cs: CloneSet): { revs: ResolvedRevisions; drained: Pod[] } {
  const named = (rev: string, n: number) => {
    const r = newRevision({ ...cs, spec: { ...cs.spec, template: revisions(cs, rev).current.template } }, n, 0);
    return { ...r, metadata: { ...r.metadata, name: revisionName(cs, rev) } };
  };
  const [r1, r2] = [named('r1', 1), named('r2', 2)];
  const template = templateFromRevision(r1);
  assert.ok(template !== undefined);
  const current = { name: revisionName(cs, 'r1'), template };
  const drained = readyPods(cs, 1, 'r2').map((p) => ({
    ...p,
    status: {
      ...p.status,
      conditions: [...(p.status?.conditions ?? []).filter((c) => c.type !== 'InPlaceUpdateReady'), { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' }],
    },
  }));
  return { revs: { current, update: current, collisionCount: 0, history: [r1, r2] }, drained };
}

/** A running pod as the kubelet reports it: container status with an imageID, ContainersReady. */
function running(p: Pod): Pod {
  const image = p.spec.containers[0]?.image ?? '';
  return {
    ...p,
    status: {
      ...p.status,
      conditions: [...(p.status?.conditions ?? []), { type: 'ContainersReady', status: 'True' }],
      containerStatuses: [{ name: 'main', image, imageID: `id-${image}`, ready: true, restartCount: 0 }],
    },
  };
}

/** The API server (pods, resourceVersions) and a kubelet that restarts a container whose image changed. */
class World {
  pods: Pod[];
  cloneSet: CloneSet;
  now = T0;
  rv = 10;
  readonly revs: ResolvedRevisions;
  readonly log: string[] = [];

  constructor(cs: CloneSet, pods: readonly Pod[], revs: ResolvedRevisions) {
    this.cloneSet = cs;
    this.revs = revs;
    this.pods = pods.map((p) => ({ ...running(p), metadata: { ...p.metadata, resourceVersion: String(this.rv++) } }));
  }

  plan(cache: readonly Pod[] = this.pods): PlanResult {
    return planCloneSet({ cloneSet: this.cloneSet, pods: cache, pvcs: [], nodes: new Map(), nowMs: this.now }, this.revs, plannerConfig(), sequentialIds());
  }

  pod(name: string): Pod {
    const p = this.pods.find((x) => x.metadata.name === name);
    assert.ok(p !== undefined, name);
    return p;
  }

  #replace(name: string, edit: (p: Pod) => Pod): void {
    this.pods = this.pods.map((p) => (p.metadata.name === name ? { ...edit(p), metadata: { ...edit(p).metadata, resourceVersion: String(this.rv++) } } : p));
  }

  /** Performs the writes the executor would; a stale resourceVersion precondition is refused (409). */
  apply(actions: readonly PlanAction[]): void {
    const now = rfc3339(this.now);
    for (const a of actions) {
      switch (a.kind) {
        case 'MarkPodNotReadyForInPlaceUpdate':
          this.#replace(a.pod.name, (p) => applyPodStatusPatch(p, a.patch));
          break;
        case 'UpdatePodInPlace':
          try {
            const rv = a.pod.resourceVersion ?? '';
            const patched = applyPodPatch(this.pod(a.pod.name), { ...a.patch, metadata: { ...(a.patch['metadata'] as object), resourceVersion: rv } });
            this.#replace(a.pod.name, () => patched);
            this.log.push(`${a.step} ${a.pod.name}`);
          } catch (e) {
            if (!(e instanceof PatchConflict)) throw e;
            this.log.push(`conflict ${a.pod.name}`);
          }
          break;
        case 'SetInPlaceUpdateReady':
          this.#replace(a.pod.name, (p) =>
            applyPodStatusPatch(p, { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True', reason: null, lastTransitionTime: now }] } }),
          );
          if (a.lifecycle !== undefined) {
            const state = a.lifecycle.state;
            this.#replace(a.pod.name, (p) => applyPodPatch(p, { metadata: { labels: { 'lifecycle.apps.kruise.io/state': state } } }));
          }
          break;
        case 'PatchPodLifecycle':
          this.#replace(a.pod.name, (p) => applyPodPatch(p, { metadata: { labels: { 'lifecycle.apps.kruise.io/state': a.state } } }));
          break;
        case 'FailUpdate':
          this.log.push(`fail ${a.message}`);
          break;
        default:
          throw new Error(`unexpected ${a.kind}`);
      }
    }
  }

  /** One kubelet step: restart containers whose image changed, then report them ready, Ready from the gates. */
  kubelet(): void {
    for (const p of this.pods) {
      const c = p.spec.containers[0];
      const s = p.status?.containerStatuses?.[0];
      if (c === undefined || s === undefined) continue;
      if (c.image !== s.image) {
        this.#replace(p.metadata.name ?? '', (q) => ({
          ...q,
          status: { ...q.status, containerStatuses: [{ ...s, image: c.image ?? '', imageID: `id-${c.image ?? ''}`, ready: false, restartCount: (s.restartCount ?? 0) + 1 }] },
        }));
        this.#replace(p.metadata.name ?? '', (q) =>
          applyPodStatusPatch(q, {
            status: {
              conditions: [
                { type: 'ContainersReady', status: 'False' },
                { type: 'Ready', status: 'False' },
              ],
            },
          }),
        );
        continue;
      }
      const gates = (p.spec.readinessGates ?? []).every((g) => podCondition(p, g.conditionType)?.status === 'True');
      const want = s.ready === true || c.image === s.image ? (gates ? 'True' : 'False') : 'False';
      if (s.ready !== true) {
        this.#replace(p.metadata.name ?? '', (q) => ({ ...q, status: { ...q.status, containerStatuses: [{ ...s, ready: true }] } }));
        this.#replace(p.metadata.name ?? '', (q) =>
          applyPodStatusPatch(q, {
            status: {
              conditions: [
                { type: 'ContainersReady', status: 'True' },
                { type: 'Ready', status: want },
              ],
            },
          }),
        );
      } else if (podCondition(p, 'Ready')?.status !== want) {
        this.#replace(p.metadata.name ?? '', (q) =>
          applyPodStatusPatch(q, { status: { conditions: [{ type: 'Ready', status: want, lastTransitionTime: rfc3339(this.now - 3_600_000) }] } }),
        );
      }
    }
  }
}

const ofKind = <K extends PlanAction['kind']>(actions: readonly PlanAction[], kind: K): Action<K>[] => actions.filter((a): a is Action<K> => a.kind === kind);

describe('in-place update, step by step', () => {
  test('pass 1 marks the pod not ready; pass 2 (the cache shows the mark) patches it, guarded by its resourceVersion', () => {
    const cs = inPlaceCloneSet(3);
    const w = new World(cs, readyPods(cs, 3), revisions(cs, 'r1', 'r2'));
    const p1 = w.plan();
    const marks = ofKind(p1.actions, 'MarkPodNotReadyForInPlaceUpdate');
    assert.equal(marks.length, 1, 'maxUnavailable 1');
    assert.equal(ofKind(p1.actions, 'UpdatePodInPlace').length, 0);
    const name = marks[0]?.pod.name ?? '';
    assert.deepEqual(marks[0]?.patch, {
      status: {
        conditions: [
          { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate', lastTransitionTime: rfc3339(T0) },
          {
            type: 'Ready',
            status: 'False',
            reason: 'ReadinessGatesNotReady',
            message: 'the status of pod readiness gate "InPlaceUpdateReady" is not "True", but False',
            lastTransitionTime: null,
          },
        ],
      },
    });
    w.apply(p1.actions);

    w.now = T0 + 300;
    const p2 = w.plan();
    const updates = ofKind(p2.actions, 'UpdatePodInPlace');
    assert.equal(updates.length, 1);
    const u = updates[0];
    assert.ok(u !== undefined);
    assert.equal(u.pod.name, name);
    assert.equal(u.pod.resourceVersion, w.pod(name).metadata.resourceVersion, 'the cached resourceVersion goes with the patch');
    assert.equal(u.step, 'update');
    const md = u.patch['metadata'] as { labels: Record<string, string>; annotations: Record<string, string | null> };
    assert.deepEqual(md.labels, { 'controller-revision-hash': 'sample-r2', 'pod-template-hash': 'r2', 'lifecycle.apps.kruise.io/state': 'Updating' });
    assert.deepEqual(u.patch['spec'], { containers: [{ name: 'main', image: 'nginx:r2' }] });
    assert.equal(md.annotations['apps.kruise.io/inplace-update-grace'], null);
    assert.equal(md.annotations['inplace-update-state'], null);
    assert.equal(
      md.annotations['apps.kruise.io/inplace-update-state'],
      `{"revision":"sample-r2","updateTimestamp":"${rfc3339(T0 + 300)}","lastContainerStatuses":{"main":{"imageID":"id-nginx:r1"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"${rfc3339(T0 + 300)}","containers":["main"]}]}`,
    );
    // Nothing else moves while the first pod has not become available again (maxUnavailable 1).
    assert.equal(ofKind(p2.actions, 'MarkPodNotReadyForInPlaceUpdate').length, 0);
  });

  test('kruise#2276: a stale cache that does not show the mark yet plans the mark again, never the pod patch', () => {
    const cs = inPlaceCloneSet(1);
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    const stale = w.pods;
    const p1 = w.plan();
    w.apply(p1.actions);
    assert.equal(podCondition(w.pods[0] as Pod, 'InPlaceUpdateReady')?.status, 'False');
    const again = w.plan(stale);
    assert.deepEqual(
      again.actions.map((a) => a.kind),
      ['MarkPodNotReadyForInPlaceUpdate'],
    );
  });

  test('a rollback to the current revision mid-rollout: a drained pod on the abandoned revision is updated back, its readiness not given back first', () => {
    // `roll out r2 (partition)` drained a pod and moved it to r2, then the template went back to r1 before the
    // rollout finished: update revision == current revision == r1. Giving the pod back (InPlaceUpdateReady True)
    // in the same pass as its pod patch moved the resourceVersion under the patch (409), and the next pass marked
    // it again: a livelock `npm run chaos` found (docs/chaos.md).
    const cs = inPlaceCloneSet(1);
    const { revs, drained } = rolledBackToR1(cs);
    const w = new World(cs, drained, revs);
    const plan = w.plan();
    assert.deepEqual(
      plan.actions.map((a) => a.kind),
      ['UpdatePodInPlace'],
      'no SetInPlaceUpdateReady in the pass that updates it',
    );
    w.apply(plan.actions);
    assert.deepEqual(w.log, [`update ${drained[0]?.metadata.name ?? ''}`]);
    assert.equal(w.pods[0]?.spec.containers[0]?.image, 'nginx:r1');
  });

  test('a rollback to the current revision with a partition: a drained pod the partition keeps gets its readiness back', () => {
    const cs = inPlaceCloneSet(1, { partition: 1 });
    const { revs, drained } = rolledBackToR1(cs);
    assert.deepEqual(
      new World(cs, drained, revs).plan().actions.map((a) => a.kind),
      ['SetInPlaceUpdateReady'],
      'partition 1 keeps the one pod on r2',
    );
  });

  test('update revision == current revision with a partition: a pass never gives a pod its readiness back and patches it in place', () => {
    // A controller that never wrote a status takes the update revision as current; pods drained for the rollout
    // before it are still on r2. Refresh and update step disagreed on such a pod: 409 on every pass
    // (`npm run sim -- --seed 365`, docs/simulation.md).
    const cs = inPlaceCloneSet(2, { partition: 1 });
    const { revs, drained } = rolledBackToR1(cs);
    const other = readyPods(cs, 2, 'r2').slice(1);
    const pods = [...drained, ...other];
    const plan = new World(cs, pods, revs).plan();
    const podOf = (a: { readonly pod?: { readonly name: string } }): string => a.pod?.name ?? '';
    const updated = plan.actions.filter((a) => a.kind === 'UpdatePodInPlace').map((a) => podOf(a as { pod?: { name: string } }));
    const givenBack = plan.actions.filter((a) => a.kind === 'SetInPlaceUpdateReady').map((a) => podOf(a as { pod?: { name: string } }));
    assert.ok(updated.length + givenBack.length > 0, JSON.stringify(plan.actions.map((a) => a.kind)));
    assert.deepEqual(
      updated.filter((n) => givenBack.includes(n)),
      [],
    );
  });

  test('kruise#2276: the refresh never turns a pod marked for its update back to True; a pod patch from a stale cache is refused', () => {
    const cs = inPlaceCloneSet(1);
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    w.apply(w.plan().actions);
    const cached = w.pods;
    const p2 = w.plan();
    assert.deepEqual(
      p2.actions.map((a) => a.kind),
      ['UpdatePodInPlace'],
      'no SetInPlaceUpdateReady before the update',
    );
    // Meanwhile somebody else wrote the pod: the cached resourceVersion no longer matches, the patch is refused.
    w.apply([{ kind: 'PatchPodLifecycle', pod: { name: cached[0]?.metadata.name ?? '', uid: '' }, state: 'Normal' }]);
    w.apply(p2.actions);
    assert.deepEqual(w.log, [`conflict ${cached[0]?.metadata.name ?? ''}`]);
    assert.equal(w.pods[0]?.spec.containers[0]?.image, 'nginx:r1');
  });

  test('completion: the new imageID → InPlaceUpdateReady True (guarded) and lifecycle Normal in one write', () => {
    const cs = inPlaceCloneSet(1);
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    w.apply(w.plan().actions);
    w.apply(w.plan().actions);
    assert.equal(w.pods[0]?.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Updating');
    assert.deepEqual(w.plan().actions, [], 'the kubelet has not restarted the container yet');
    w.kubelet();
    const done = w.plan();
    assert.deepEqual(
      done.actions.map((a) => a.kind),
      ['SetInPlaceUpdateReady'],
    );
    assert.equal(ofKind(done.actions, 'SetInPlaceUpdateReady')[0]?.guardResourceVersion, true);
    assert.equal(ofKind(done.actions, 'SetInPlaceUpdateReady')[0]?.lifecycle?.state, 'Normal');
    w.apply(done.actions);
    w.kubelet();
    const pod = w.pods[0] as Pod;
    assert.ok(isPodAvailable(pod, 0, w.now));
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount, 1);
  });

  test('with a lifecycle set, Updating → Updated → Normal (no inPlaceUpdate hook)', () => {
    const base = inPlaceCloneSet(1);
    const cs: CloneSet = { ...base, spec: { ...base.spec, lifecycle: { preDelete: { labelsHandler: { x: 'y' } } } } };
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    w.apply(w.plan().actions);
    w.apply(w.plan().actions);
    w.kubelet();
    const p = w.plan();
    assert.equal(ofKind(p.actions, 'SetInPlaceUpdateReady')[0]?.lifecycle?.state, 'Updated');
    w.apply(p.actions);
    assert.equal(ofKind(w.plan().actions, 'PatchPodLifecycle')[0]?.state, 'Normal');
  });

  test('grace period (pinned clock): labels and grace annotation first, the new image ≥ gracePeriodSeconds later', () => {
    const cs = inPlaceCloneSet(1, { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } });
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    w.now = T0 + 900; // the not-ready mark, late in a second
    w.apply(w.plan().actions);
    w.now = T0 + 950;
    const p2 = w.plan();
    const u = ofKind(p2.actions, 'UpdatePodInPlace')[0];
    assert.ok(u !== undefined);
    assert.equal(u.patch['spec'], undefined, 'no new image during the grace period');
    const ann = (u.patch['metadata'] as { annotations: Record<string, string> }).annotations;
    assert.equal(ann['apps.kruise.io/inplace-update-grace'], '{"revision":"sample-r2","containerImages":{"main":"nginx:r2"},"graceSeconds":5}');
    assert.equal(ann['apps.kruise.io/inplace-update-state'], `{"revision":"sample-r2","updateTimestamp":"${rfc3339(T0)}","lastContainerStatuses":null,"updateImages":true}`);
    assert.equal(p2.requeueAfterMs, 5000);
    w.apply(p2.actions);
    assert.equal(w.pods[0]?.metadata.labels?.['controller-revision-hash'], 'sample-r2', 'counted as updated during the grace period (docs/features.md#in-place-update)');

    // The state's timestamp is T0 (second precision) although the mark was at T0+0.9 s: the grace is counted
    // from the end of that second, so the new spec never comes less than 5 s after the mark.
    for (const [at, left] of [
      [T0 + 1000, 5000],
      [T0 + 4950, 2000],
      [T0 + 5900, 1000],
    ] as const) {
      w.now = at;
      const p = w.plan();
      assert.deepEqual(p.actions, [], `nothing at +${at - T0} ms`);
      assert.equal(p.requeueAfterMs, left, `requeue at +${at - T0} ms (rounded up to seconds)`);
    }
    w.now = T0 + 6000;
    const end = w.plan();
    const finish = ofKind(end.actions, 'UpdatePodInPlace')[0];
    assert.equal(finish?.step, 'finishGrace');
    assert.deepEqual(finish?.patch['spec'], { containers: [{ name: 'main', image: 'nginx:r2' }] });
    const ann2 = (finish?.patch['metadata'] as { annotations: Record<string, string | null> } | undefined)?.annotations ?? {};
    assert.equal(ann2['apps.kruise.io/inplace-update-grace'], null);
    const state = decodeState(ann2['apps.kruise.io/inplace-update-state'] ?? '');
    assert.equal(state.updateTimestamp, rfc3339(T0), 'the update timestamp is kept');
    assert.deepEqual(state.lastContainerStatuses, { main: { imageID: 'id-nginx:r1' } });
    assert.ok(6000 - 900 >= 5000);
  });

  test('a pod marked not ready that the rollout no longer wants (paused) gets its readiness back', () => {
    const cs = inPlaceCloneSet(1);
    const w = new World(cs, readyPods(cs, 1), revisions(cs, 'r1', 'r2'));
    w.apply(w.plan().actions);
    w.cloneSet = { ...cs, spec: { ...cs.spec, updateStrategy: { ...cs.spec.updateStrategy, paused: true } } };
    const p = w.plan();
    assert.deepEqual(
      p.actions.map((a) => a.kind),
      ['SetInPlaceUpdateReady'],
    );
  });

  test('a change that cannot be applied in place: InPlaceIfPossible recreates, InPlaceOnly fails the update with the reason', () => {
    const cs = inPlaceCloneSet(2);
    const revs = revisions(cs, 'r1', 'r2');
    const envRevs: ResolvedRevisions = {
      ...revs,
      update: { ...revs.update, template: { ...revs.update.template, spec: { containers: [{ name: 'main', image: 'nginx:r2', env: [{ name: 'A', value: '1' }] }] } } },
    };
    const w = new World(cs, readyPods(cs, 2), envRevs);
    assert.deepEqual(
      w.plan().actions.map((a) => a.kind),
      ['MarkSpecifiedDelete'],
    );
    w.cloneSet = { ...cs, spec: { ...cs.spec, updateStrategy: { ...cs.spec.updateStrategy, type: 'InPlaceOnly' } } };
    const only = w.plan();
    assert.deepEqual(
      only.actions.map((a) => a.kind),
      ['FailUpdate'],
    );
    assert.match(
      ofKind(only.actions, 'FailUpdate')[0]?.message ?? '',
      /^find Pod sample-\w+ update strategy is InPlaceOnly but can not update in-place: add of \/spec\/containers\/0\/env/,
    );
    assert.equal(only.events[0]?.reason, 'FailedUpdatePodInPlace');
  });

  test('InPlaceOnly ignores maxSurge (treated as 0) and says so on the first pass of a generation', () => {
    const cs = inPlaceCloneSet(3, { type: 'InPlaceOnly', maxSurge: 1 });
    const w = new World(cs, readyPods(cs, 3), revisions(cs, 'r1', 'r2'));
    const p = w.plan();
    assert.equal(ofKind(p.actions, 'CreatePods').length, 0, 'no surge pod');
    assert.equal(ofKind(p.actions, 'MarkPodNotReadyForInPlaceUpdate').length, 1);
    assert.deepEqual(
      p.events.map((e) => e.reason),
      ['InvalidMaxSurge'],
    );
    w.cloneSet = { ...cs, status: { replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 0, updatedReadyReplicas: 0, observedGeneration: 1 } };
    assert.deepEqual(
      w.plan().events.map((e) => e.reason),
      [],
    );
  });

  test('a whole rollout: 10 pods, maxUnavailable 2 — same pods, one restart each, never more than 2 not ready', () => {
    const cs = inPlaceCloneSet(10, { maxUnavailable: 2 });
    const w = new World(cs, readyPods(cs, 10), revisions(cs, 'r1', 'r2'));
    const uids = w.pods.map((p) => p.metadata.uid).sort();
    let maxNotReady = 0;
    for (let step = 0; step < 200; step++) {
      w.now = T0 + step * 100;
      w.apply(w.plan().actions);
      maxNotReady = Math.max(maxNotReady, w.pods.filter((p) => podCondition(p, 'Ready')?.status !== 'True').length);
      w.kubelet();
      maxNotReady = Math.max(maxNotReady, w.pods.filter((p) => podCondition(p, 'Ready')?.status !== 'True').length);
      if (w.pods.every((p) => revisionMatches(p, 'sample-r2') && isPodAvailable(p, 0, w.now))) break;
    }
    assert.ok(
      w.pods.every((p) => revisionMatches(p, 'sample-r2') && isPodAvailable(p, 0, w.now)),
      'rolled out',
    );
    assert.deepEqual(w.pods.map((p) => p.metadata.uid).sort(), uids);
    assert.ok(w.pods.every((p) => p.status?.containerStatuses?.[0]?.restartCount === 1));
    assert.equal(maxNotReady, 2);
    assert.ok(!w.log.some((l) => l.startsWith('conflict')));
  });
});
