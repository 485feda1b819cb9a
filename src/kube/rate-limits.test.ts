import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RateLimits, limiterKey } from './rate-limits.ts';
import { CLONESETS, EVENTS, PODS } from './resources.ts';
import type { BucketTime } from './token-bucket.ts';

const frozenTime: BucketTime = { now: () => 0, sleep: async () => undefined };

describe('RateLimits (controller-runtime: one client-go token bucket per resource kind)', () => {
  it('names a limiter by group/version/resource, the core group as "core", the cache family with a suffix', () => {
    assert.equal(limiterKey(PODS, 'client'), 'core/v1/pods');
    assert.equal(limiterKey(CLONESETS, 'client'), 'apps.kruise.io/v1alpha1/clonesets');
    assert.equal(limiterKey(PODS, 'cache'), 'core/v1/pods (cache)');
  });

  it('gives each kind its own burst: pod creates past the burst wait, a CloneSet status write does not', () => {
    const limits = new RateLimits(10, 2, frozenTime);
    const pods = limits.for(limiterKey(PODS, 'client'));
    assert.deepEqual([pods.reserve(), pods.reserve(), pods.reserve()], [0, 0, 100]);
    assert.equal(limits.for(limiterKey(CLONESETS, 'client')).reserve(), 0);
    assert.equal(limits.for(limiterKey(EVENTS, 'client')).reserve(), 0);
  });

  it('lets the informers list and watch a kind while its writes are throttled', () => {
    const limits = new RateLimits(1, 1, frozenTime);
    assert.equal(limits.for(limiterKey(PODS, 'client')).reserve(), 0);
    assert.ok(limits.for(limiterKey(PODS, 'client')).reserve() > 0);
    assert.equal(limits.for(limiterKey(PODS, 'cache')).reserve(), 0);
  });

  it('returns the same bucket for the same key and lists keys in first-use order', () => {
    const limits = new RateLimits(10, 2, frozenTime);
    assert.equal(limits.for('a'), limits.for('a'));
    limits.for('b');
    assert.deepEqual(limits.keys(), ['a', 'b']);
  });

  it('is unlimited when qps is 0', () => {
    const limits = new RateLimits(0, 1, frozenTime);
    const pods = limits.for(limiterKey(PODS, 'client'));
    assert.deepEqual([pods.reserve(), pods.reserve(), pods.reserve()], [0, 0, 0]);
  });
});
