import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBounded } from './bounded-parallel.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('never runs more than the limit at once, and runs every task', async () => {
  let inFlight = 0;
  let peak = 0;
  const tasks = Array.from({ length: 20 }, (_, i) => async () => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await tick();
    inFlight--;
    return i;
  });
  const { results, error } = await runBounded(tasks, 4);
  assert.equal(error, undefined);
  assert.equal(peak, 4);
  assert.deepEqual(
    [...results].sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test('starts no new task after a failure, lets the ones in flight finish, and reports the first error', async () => {
  const started: number[] = [];
  const tasks = Array.from({ length: 10 }, (_, i) => async () => {
    started.push(i);
    await tick();
    if (i === 1) throw new Error('boom 1');
    return i;
  });
  const { results, error } = await runBounded(tasks, 2);
  assert.equal((error as Error).message, 'boom 1');
  assert.ok(started.length <= 3, `started ${started.join(',')}`);
  assert.ok(results.includes(0));
});
