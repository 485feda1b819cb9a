import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket, type BucketTime } from './token-bucket.ts';

function fakeTime(): BucketTime & { t: number; slept: number[] } {
  const time = {
    t: 0,
    slept: [] as number[],
    now: () => time.t,
    sleep: async (ms: number) => {
      time.slept.push(ms);
    },
  };
  return time;
}

describe('TokenBucket', () => {
  it('lets a burst through, then spaces requests at 1/qps', () => {
    const time = fakeTime();
    const bucket = new TokenBucket(10, 3, time);
    const waits = [1, 2, 3, 4, 5].map(() => bucket.reserve());
    assert.deepEqual(
      waits.map((w) => Math.round(w)),
      [0, 0, 0, 100, 200],
    );
  });

  it('refills with time, up to the burst', () => {
    const time = fakeTime();
    const bucket = new TokenBucket(10, 2, time);
    bucket.reserve();
    bucket.reserve();
    time.t = 10_000; // long idle: only `burst` tokens saved up
    assert.deepEqual([bucket.reserve(), bucket.reserve(), Math.round(bucket.reserve())], [0, 0, 100]);
  });

  it('take() waits (does not fail) when empty', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket(2, 1, time);
    await bucket.take();
    await bucket.take();
    assert.deepEqual(time.slept, [500]);
  });

  it('qps <= 0 means unlimited', () => {
    const bucket = new TokenBucket(0, 1, fakeTime());
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 0]);
  });
});
