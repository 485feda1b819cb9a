import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, sleep, systemClock } from './clock.ts';

test('FakeClock fires due timers in order of due time, then creation order', () => {
  const clock = new FakeClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 20);
  clock.advance(15);
  assert.deepEqual(fired, ['a@1010']);
  assert.equal(clock.now(), 1015);
  clock.advance(5);
  assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1020']);
});

test('FakeClock fires timers scheduled by a callback when they fall due within the same advance', () => {
  const clock = new FakeClock();
  const fired: number[] = [];
  clock.setTimeout(() => {
    fired.push(clock.now());
    clock.setTimeout(() => fired.push(clock.now()), 5);
  }, 5);
  clock.advance(12);
  assert.deepEqual(fired, [5, 10]);
  assert.equal(clock.now(), 12);
});

test('a cancelled FakeClock timer never fires', () => {
  const clock = new FakeClock();
  let fired = false;
  clock.setTimeout(() => (fired = true), 5).cancel();
  clock.advance(10);
  assert.equal(fired, false);
  assert.equal(clock.pendingTimers(), 0);
});

test('FakeClock.set jumps to an absolute time and fires what fell due', () => {
  const clock = new FakeClock(0);
  let at = -1;
  clock.setTimeout(() => (at = clock.now()), 100);
  clock.set(500);
  assert.equal(at, 100);
  assert.equal(clock.now(), 500);
});

test('systemClock runs a timer and can cancel one', async () => {
  const before = systemClock.now();
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 5));
  assert.ok(systemClock.now() - before >= 4);
  let fired = false;
  systemClock.setTimeout(() => (fired = true), 1).cancel();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(fired, false);
});

test('sleep resolves when its time has passed, or at once when the signal aborts', async () => {
  const clock = new FakeClock(0);
  let slept = false;
  const done = sleep(clock, 1000, new AbortController().signal).then(() => {
    slept = true;
  });
  clock.advance(999);
  await Promise.resolve();
  assert.equal(slept, false);
  clock.advance(1);
  await done;
  const abort = new AbortController();
  const aborted = sleep(clock, 1000, abort.signal);
  abort.abort();
  await aborted;
  assert.equal(clock.pendingTimers(), 0, 'the abort cancels the timer');
  abort.abort();
  await sleep(clock, 1000, abort.signal);
  assert.equal(clock.pendingTimers(), 0, 'an aborted signal sets no timer');
});
