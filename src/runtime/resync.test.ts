import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from './clock.ts';
import { startResync } from './resync.ts';

const HOUR = 3_600_000;

test('every key is enqueued once per sync period, on monotonic time only, until the signal aborts', () => {
  const clock = new FakeClock(0);
  const enqueued: string[] = [];
  const stop = new AbortController();
  startResync(
    clock,
    10 * HOUR,
    () => ['ns/a', 'ns/b'],
    (k) => enqueued.push(k),
    stop.signal,
  );
  clock.stepWall(11 * HOUR);
  assert.deepEqual(enqueued, [], 'a wall-clock step is not time passing');
  clock.advance(10 * HOUR - 1);
  assert.deepEqual(enqueued, []);
  clock.advance(1);
  assert.deepEqual(enqueued, ['ns/a', 'ns/b']);
  clock.advance(10 * HOUR);
  assert.deepEqual(enqueued, ['ns/a', 'ns/b', 'ns/a', 'ns/b']);
  stop.abort();
  clock.advance(30 * HOUR);
  assert.equal(enqueued.length, 4);
  assert.equal(clock.pendingTimers(), 0);
});

test('a sync period of 0 never enqueues', () => {
  const clock = new FakeClock(0);
  const enqueued: string[] = [];
  startResync(
    clock,
    0,
    () => ['ns/a'],
    (k) => enqueued.push(k),
    new AbortController().signal,
  );
  clock.advance(100 * HOUR);
  assert.deepEqual(enqueued, []);
});
