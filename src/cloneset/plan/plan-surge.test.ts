// The sustained surge rule (replica-diff.ts `SurgeRule`, beyond Kruise: kruise#1442, kruise#2491), pass by pass:
// rows of a 50-pod ReCreate rollout at maxSurge 20 % (10) and maxUnavailable 0, each step's pods written by the test.
// The whole rollout under both rules (at most 60 pods, at least 50 available, Kruise's rule letting the surge decay
// and finishing later) and a rollback by partition are scenarios on the simulation (sim/scenarios.test.ts "sustained
// surge"); random specs are the simulation's surge, unavailable and convergence invariants (seeds 1–2000 of
// sim/simulation.test.ts). The diff arithmetic itself is in replica-diff.test.ts ("surgeRule 'sustained'").
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction } from './actions.ts';
import { planCloneSet } from './index.ts';
import { aCloneSet, aPod, plannerConfig, revisions, sequentialIds, T0 } from './testing/builders.ts';
import { describePods } from './testing/describe.ts';

const cs = aCloneSet('sample').replicas(50).maxSurge('20%').maxUnavailable(0).build();

/** `n` pods of a kind, with ids `<prefix>000`, `<prefix>001`, … */
function many(n: number, prefix: string, make: (id: string) => Pod): Pod[] {
  return Array.from({ length: n }, (_, i) => make(`${prefix}${String(i).padStart(3, '0')}`));
}
const old = (n: number): Pod[] => many(n, 'oa', (id) => aPod(cs).instanceId(id).ready().build());
const marked = (n: number): Pod[] => many(n, 'om', (id) => aPod(cs).instanceId(id).ready().specifiedDelete().build());
const updated = (n: number): Pod[] => many(n, 'na', (id) => aPod(cs).ofRevision('r2').instanceId(id).ready().build());
/** Created, scheduled, Normal with InPlaceUpdateReady True, containers not ready yet. */
const starting = (n: number): Pod[] => many(n, 'ns', (id) => aPod(cs).ofRevision('r2').instanceId(id).running().build());

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

describe('sustained surge: passes of a 50-pod ReCreate rollout at maxSurge 20 %, maxUnavailable 0 (kruise#2491)', () => {
  const rows: readonly { readonly pods: readonly Pod[]; readonly row: string }[] = [
    { pods: old(50), row: '50 old | create 10' },
    { pods: [...old(50), ...starting(10)], row: '50 old + 10 new(not ready) | -' },
    { pods: [...old(50), ...updated(3), ...starting(7)], row: '50 old + 3 new + 7 new(not ready) | mark 3' },
    { pods: [...old(47), ...marked(3), ...updated(6), ...starting(4)], row: '47 old + 3 old(specified-delete) + 6 new + 4 new(not ready) | delete 3' },
    // Back to 60 pods: the surge stays 10 while 10 or more old pods remain.
    { pods: [...old(47), ...updated(9), ...starting(1)], row: '47 old + 9 new + 1 new(not ready) | create 3' },
    { pods: [...old(21), ...updated(29), ...starting(4)], row: '21 old + 29 new + 4 new(not ready) | create 6' },
    // Fewer old pods than maxSurge: a surge of 7, 57 pods.
    { pods: [...old(7), ...updated(43), ...starting(6)], row: '7 old + 43 new + 6 new(not ready) | create 1' },
    // The new revision is complete (50 new pods, ready or not): the old ones go as the new ones become available.
    { pods: [...old(7), ...updated(46), ...starting(4)], row: '7 old + 46 new + 4 new(not ready) | delete 3' },
    { pods: [...old(1), ...updated(49), ...starting(1)], row: '1 old + 49 new + 1 new(not ready) | -' },
    { pods: [...old(1), ...updated(50)], row: '1 old + 50 new | delete 1' },
    { pods: updated(50), row: '50 new | -' },
  ];

  test('each pass does what the table says under the sustained rule', () => {
    const got = rows.map(({ pods }) => {
      const p = planCloneSet(
        { cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 },
        revisions(cs, 'r1', 'r2'),
        { ...plannerConfig(), surgeRule: 'sustained' },
        sequentialIds(),
      );
      return `${describePods(cs, pods, 'sample-r2', T0)} | ${summary(p.actions)}`;
    });
    assert.deepEqual(
      got,
      rows.map((r) => r.row),
    );
  });
});
