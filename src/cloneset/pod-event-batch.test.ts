// The batch period of pod events (pod-event-batch.ts): none for small CloneSets, growing with the replicas, capped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../api/cloneset.ts';
import { podEventBatchMs } from './pod-event-batch.ts';

const withReplicas = (replicas: number, statusReplicas?: number): CloneSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'sample', namespace: 'ns' },
  spec: { replicas, selector: { matchLabels: { app: 'sample' } }, template: { spec: { containers: [] } } },
  ...(statusReplicas !== undefined ? { status: { replicas: statusReplicas, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 } } : {}),
});

test('a pod event of a CloneSet with fewer than 100 replicas wakes it at once', () => {
  assert.equal(podEventBatchMs(withReplicas(99)), 0);
  assert.equal(podEventBatchMs(withReplicas(3)), 0);
});

test('a pod event of a CloneSet no longer in the cache wakes it at once (the pass forgets it)', () => {
  assert.equal(podEventBatchMs(undefined), 0);
});

test('the batch period is 50 µs per replica: 50 ms at 1 000 replicas, 500 ms at 10 000', () => {
  assert.equal(podEventBatchMs(withReplicas(1000)), 50);
  assert.equal(podEventBatchMs(withReplicas(10_000)), 500);
});

test('a CloneSet scaling in counts the pods it still has, not its new replicas', () => {
  assert.equal(podEventBatchMs(withReplicas(0, 10_000)), 500);
});

test('the batch period never exceeds one second', () => {
  assert.equal(podEventBatchMs(withReplicas(1_000_000)), 1000);
});

test('a rule of its own (the simulation draws one per seed) batches small CloneSets too', () => {
  const rule = { fromReplicas: 1, usPerReplica: 100_000, maxMs: 1000 };
  assert.equal(podEventBatchMs(withReplicas(3), rule), 300);
  assert.equal(podEventBatchMs(withReplicas(0), rule), 0);
  assert.equal(podEventBatchMs(withReplicas(50), rule), 1000);
});
