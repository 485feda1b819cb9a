// Per-CloneSet metrics as Prometheus reads them: computed from the caches when scraped, for admitted CloneSets only,
// and gone with the CloneSet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { CloneSet } from './api/cloneset.ts';
import { cloneSetMetrics } from './cloneset-metrics.ts';
import { aCloneSet, aPod, readyPods, revisionName, T0 } from './cloneset/plan/testing/builders.ts';
import { RolloutObserver } from './cloneset/rollout-observer.ts';
import { INDEX_OWNER_UID } from './cloneset/snapshot.ts';
import type { Pod } from './kube/types.ts';
import { FakeClock } from './runtime/clock.ts';
import { indexByOwnerUid, ObjectStore } from './runtime/store.ts';

test('status replicas, conditions, pods by lifecycle state and blocked reasons per CloneSet; nothing once it is forgotten', async () => {
  const registry = new Registry();
  const cloneSets = new ObjectStore<CloneSet>();
  const pods = new ObjectStore<Pod>({ [INDEX_OWNER_UID]: indexByOwnerUid });
  let observer: RolloutObserver | undefined;
  const sink = cloneSetMetrics(registry, () => (observer === undefined ? undefined : { cloneSets, pods, rollouts: observer }));
  observer = new RolloutObserver({ clock: new FakeClock(T0), logger: pino({ level: 'silent' }), sink, maxCloneSets: 10, warnBlockedAfterMs: 600_000 });
  const cs = aCloneSet('shop')
    .replicas(3)
    .status({
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 1,
      updatedReadyReplicas: 0,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
    })
    .build();
  cloneSets.apply(cs);
  const members = [...readyPods(cs, 2, 'r1'), aPod(cs).ofRevision('r2').instanceId('new00').running().state('PreparingUpdate').build()];
  for (const p of members) pods.apply(p);
  observer.observe('default/shop', {
    cloneSet: cs,
    pods: members,
    updateRevision: revisionName(cs, 'r2'),
    updateRevisionCreatedMs: T0,
    blockers: [{ reason: 'maxUnavailable', message: 'budget spent' }],
  });
  const text = await registry.metrics();
  const series = (name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`));
  assert.deepEqual(series('cloneset_status_replicas'), [
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="desired"} 3',
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="current"} 3',
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="updated"} 1',
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="ready"} 2',
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="available"} 2',
    'cloneset_status_replicas{namespace="default",cloneset="shop",state="updated_ready"} 0',
  ]);
  assert.deepEqual(series('cloneset_status_condition'), [
    'cloneset_status_condition{namespace="default",cloneset="shop",condition="Progressing",status="False",reason="ProgressDeadlineExceeded"} 1',
  ]);
  assert.ok(series('cloneset_pods').includes('cloneset_pods{namespace="default",cloneset="shop",lifecycle_state="Normal"} 2'));
  assert.ok(series('cloneset_pods').includes('cloneset_pods{namespace="default",cloneset="shop",lifecycle_state="PreparingUpdate"} 1'));
  assert.deepEqual(series('cloneset_rollout_blocked'), ['cloneset_rollout_blocked{namespace="default",cloneset="shop",reason="maxUnavailable"} 1']);
  sink.rolloutFinished('default', 'shop', 42);
  assert.match(await registry.metrics(), /^cloneset_rollout_duration_seconds_count\{namespace="default",cloneset="shop"\} 1$/m);
  observer.forget('default/shop');
  assert.doesNotMatch(await registry.metrics(), /cloneset="shop"/);
});
