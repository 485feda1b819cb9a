// The tests' own bound arithmetic, pinned with literals (Kruise's rules: docs/features.md#scaling, #maxunavailable, #partition).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundsOf, partitionCount, percentOf } from './spec-bounds.ts';

test('a surge percentage rounds up, an unavailability percentage down when there is a surge and up without', () => {
  assert.equal(percentOf('30%', 5, true), 2);
  assert.deepEqual(boundsOf({ replicas: 5, hasRollingUpdate: true, maxSurge: 1, maxUnavailable: '30%' }), {
    partition: 0,
    maxSurge: 1,
    maxUnavailable: 1,
    scaleMaxUnavailable: 2147483647,
  });
  assert.deepEqual(boundsOf({ replicas: 5, hasRollingUpdate: true, maxUnavailable: '30%' }).maxUnavailable, 2);
});

test('paused leaves no surge; OnDelete leaves no surge, no partition and 20 % unavailable rounded down', () => {
  assert.equal(boundsOf({ replicas: 5, hasRollingUpdate: true, paused: true, maxSurge: '30%', maxUnavailable: '30%' }).maxUnavailable, 2);
  assert.deepEqual(boundsOf({ replicas: 5, hasRollingUpdate: false, maxSurge: 2, partition: 3 }), {
    partition: 0,
    maxSurge: 0,
    maxUnavailable: 1,
    scaleMaxUnavailable: 2147483647,
  });
});

test('whole percentages only for surge and unavailability, decimals for the partition', () => {
  assert.equal(percentOf('12.5%', 10, true), 0);
  assert.equal(partitionCount('12.5%', 10), 2);
  assert.equal(partitionCount('99%', 5), 4);
  assert.equal(partitionCount('100%', 5), 5);
  assert.equal(partitionCount(7, 5), 5);
});
