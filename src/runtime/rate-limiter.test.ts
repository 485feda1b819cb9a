import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.ts';
import { defaultControllerRateLimiter, ItemExponentialRateLimiter, TokenBucketRateLimiter } from './rate-limiter.ts';

test('per-item exponential backoff grows 5, 10, 20 ms and caps at the max delay', () => {
  const rl = new ItemExponentialRateLimiter(5, 1_000_000);
  assert.deepEqual(
    [1, 2, 3, 4].map(() => rl.when('a')),
    [5, 10, 20, 40],
  );
  for (let i = 0; i < 30; i++) rl.when('a');
  assert.equal(rl.when('a'), 1_000_000);
  for (let i = 0; i < 2000; i++) rl.when('a'); // 2^2000 overflows to Infinity: still capped
  assert.equal(rl.when('a'), 1_000_000);
  assert.equal(rl.numRequeues('a'), 2036);
});

test('forget resets the backoff of that key only', () => {
  const rl = new ItemExponentialRateLimiter(5, 1000);
  rl.when('a');
  rl.when('a');
  rl.when('b');
  rl.forget('a');
  assert.equal(rl.numRequeues('a'), 0);
  assert.equal(rl.when('a'), 5);
  assert.equal(rl.when('b'), 10);
});

test('token bucket allows the burst, then spaces requests at qps, and refills with time', () => {
  const clock = new FakeClock(0);
  const rl = new TokenBucketRateLimiter(clock, 10, 3);
  assert.deepEqual(
    [1, 2, 3].map(() => rl.when('x')),
    [0, 0, 0],
  );
  assert.equal(rl.when('x'), 100);
  assert.equal(rl.when('y'), 200);
  clock.advance(1000); // repays the 2-token debt and refills to the burst of 3
  assert.deepEqual(
    [1, 2, 3, 4].map(() => rl.when('z')),
    [0, 0, 0, 100],
  );
});

test('the default controller limiter is the max of exponential backoff and the global bucket', () => {
  const clock = new FakeClock(0);
  const rl = defaultControllerRateLimiter(clock, { baseDelayMs: 5, maxDelayMs: 1000, qps: 10, burst: 2 });
  assert.equal(rl.when('a'), 5);
  assert.equal(rl.when('a'), 10);
  assert.equal(rl.when('b'), 100); // bucket exhausted: 100 ms > 5 ms
  assert.equal(rl.numRequeues('a'), 2);
  rl.forget('a');
  assert.equal(rl.numRequeues('a'), 0);
});

test('the default parameters are Kruise’s: 5 ms base, 1000 s cap, burst 100 at 10 qps', () => {
  const clock = new FakeClock(0);
  const rl = defaultControllerRateLimiter(clock);
  assert.equal(rl.when('k'), 5);
  for (let i = 0; i < 99; i++) rl.when(`other-${i}`);
  assert.equal(rl.when('fresh'), 100); // the 101st token within the same instant waits 1/qps
  const exp = defaultControllerRateLimiter(clock, { qps: 1e9, burst: 1e9 });
  let last = 0;
  for (let i = 0; i < 40; i++) last = exp.when('k');
  assert.equal(last, 1_000_000);
});
