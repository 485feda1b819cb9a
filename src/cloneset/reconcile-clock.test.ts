// Time: every duration the controller measures (expectation TTLs, requeue delays, backoff) runs on the monotonic
// clock; the wall clock only stamps objects. A rollout driven pass by pass through the real reconciler, once with
// the wall clock stepped by ±1 h between passes (NTP, a VM resumed) and once without, makes the same writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CloneSet } from '../api/cloneset.ts';
import { FakeClock } from '../runtime/clock.ts';
import { aCloneSet, HOUR, T0 } from './plan/testing/builders.ts';
import { reconcileHarness } from './testing/reconcile-harness.ts';

const withImage =
  (image: string) =>
  (cs: CloneSet): CloneSet => ({
    ...cs,
    spec: { ...cs.spec, template: { ...cs.spec.template, spec: { ...cs.spec.template.spec, containers: [{ name: 'main', image }] } } },
  });

/**
 * Scale to 4, then roll out a new image. Each pass is followed by two more on the same (lagging) cache — the
 * moment a clock step hurts: the first finds the expectations unsatisfied and starts their TTL, then the wall
 * clock steps by `wallStep(pass)`; with TTLs on the wall clock, +1 h would expire them and the third pass would
 * plan without the pods still in flight.
 */
async function run(wallStep: (pass: number) => number): Promise<{ readonly passes: readonly string[]; readonly pods: number }> {
  const clock = new FakeClock(T0);
  const h = reconcileHarness(clock, aCloneSet('sample').replicas(4).maxUnavailable(1).build());
  const passes: string[] = [];
  const pass = async (label: string): Promise<void> => {
    const before = h.writes.length;
    await h.reconcile();
    passes.push(`${label}: ${h.writes.slice(before).join(', ') || '-'}`);
  };
  for (let i = 0; i < 24; i++) {
    if (i === 4) h.editSpec(withImage('nginx:2'));
    await pass(`pass ${i}`);
    await pass(`pass ${i} again, cache not caught up`);
    clock.stepWall(wallStep(i));
    await pass(`pass ${i} once more, after the step`);
    clock.advance(1000);
    h.syncCache();
  }
  return { passes, pods: h.pods().length };
}

test('a wall-clock step of ±1 h in the middle of a rollout changes no write', async () => {
  const steady = await run(() => 0);
  const stepped = await run((pass) => (pass % 2 === 0 ? HOUR : -HOUR));
  assert.deepEqual(stepped.passes, steady.passes);
  assert.equal(stepped.pods, 4);
  // The scenario does reach the moments that matter: pods in flight when the second pass runs, and a rollout.
  assert.match(steady.passes.join('\n'), /pass 0: create controllerrevisions\/sample-\w+, create pods\/sample-\w+/);
  assert.match(steady.passes.join('\n'), /pass 0 again, cache not caught up: -/);
  assert.match(steady.passes.join('\n'), /pass 5: create controllerrevisions\/sample-\w+/);
  assert.match(steady.passes.join('\n'), /pass 6: delete pods\/sample-bbbbb\npass 6 again, cache not caught up: -\npass 6 once more, after the step: -/);
  assert.equal(steady.passes.at(-3), 'pass 23: -', 'the rollout is over');
});

test('objects the cache shows older than our last write to them (an etcd restore) time out together, one expectation timeout after the pass that found them', async () => {
  const clock = new FakeClock(T0);
  const h = reconcileHarness(clock, aCloneSet('sample').replicas(2).build());
  for (let i = 0; i < 4; i++) {
    await h.reconcile();
    clock.advance(1000);
    h.syncCache();
  }
  const pods = h.pods();
  assert.equal(pods.length, 2);
  // Our last writes to both pods, undone by the restore: the cache will never show these resourceVersions.
  for (const p of pods) h.rvExpectations.expect(p.metadata.uid ?? '', '999999');
  const waiting = await h.reconcile();
  assert.ok(waiting.requeueAfterMs !== undefined, 'the pass waits for the cache');
  clock.advance(60_000); // the harness's expectation timeout
  await h.reconcile();
  for (const p of pods) {
    assert.equal(h.rvExpectations.isSatisfied(p.metadata.uid ?? '', p.metadata.resourceVersion ?? '').satisfied, true, `${p.metadata.name ?? ''} given up on`);
  }
});
