import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slowStartBatch } from './slow-start.ts';

/** Records which calls ran in which batch: a batch ends when its calls all settle. */
function recorder(failing: ReadonlySet<number> = new Set()): { fn: (i: number) => Promise<void>; batches: number[][] } {
  const batches: number[][] = [];
  let current: number[] | undefined;
  const fn = async (i: number): Promise<void> => {
    if (current === undefined) {
      const batch: number[] = [];
      current = batch;
      batches.push(batch);
      queueMicrotask(() => {
        if (current === batch) current = undefined;
      });
    }
    current.push(i);
    await Promise.resolve();
    if (failing.has(i)) throw new Error(`call ${i} failed`);
  };
  return { fn, batches };
}

test('slow start runs batches of 1, 2, 4, 8 and a clipped last batch', async () => {
  const { fn, batches } = recorder();
  const r = await slowStartBatch(20, 1, fn);
  assert.deepEqual(
    batches.map((b) => b.length),
    [1, 2, 4, 8, 5],
  );
  assert.deepEqual(
    batches.flat(),
    Array.from({ length: 20 }, (_, i) => i),
  );
  assert.deepEqual(r, { succeeded: 20, failed: 0, skipped: 0 });
});

test('slow start runs the calls of one batch concurrently', async () => {
  let inFlight = 0;
  let max = 0;
  await slowStartBatch(7, 1, async () => {
    inFlight++;
    max = Math.max(max, inFlight);
    await new Promise((r) => setImmediate(r));
    inFlight--;
  });
  assert.equal(max, 4);
});

test('slow start stops after the first batch with a failure and reports how many were skipped', async () => {
  const { fn, batches } = recorder(new Set([4]));
  const r = await slowStartBatch(20, 1, fn);
  assert.deepEqual(
    batches.map((b) => b.length),
    [1, 2, 4],
    'the whole failing batch ran; nothing after it',
  );
  assert.equal(r.succeeded, 6);
  assert.equal(r.failed, 1);
  assert.equal(r.skipped, 13);
  assert.ok(r.error instanceof Error && r.error.message === 'call 4 failed');
});

test('slow start honours the initial batch size and counts every failure of the failing batch', async () => {
  const { fn, batches } = recorder(new Set([0, 2]));
  const r = await slowStartBatch(10, 3, fn);
  assert.deepEqual(
    batches.map((b) => b.length),
    [3],
  );
  assert.equal(r.succeeded, 1);
  assert.equal(r.failed, 2);
  assert.equal(r.skipped, 7);
});

test('slow start with nothing to do calls nothing', async () => {
  let calls = 0;
  const r = await slowStartBatch(0, 1, async () => void calls++);
  assert.deepEqual(r, { succeeded: 0, failed: 0, skipped: 0 });
  assert.equal(calls, 0);
});

test('a call that throws synchronously counts as a failure', async () => {
  const r = await slowStartBatch(3, 1, (i) => {
    if (i === 0) throw new Error('sync');
    return Promise.resolve();
  });
  assert.equal(r.failed, 1);
  assert.equal(r.skipped, 2);
});

test('slow start with a concurrency keeps at most that many calls of a batch in flight and still makes every call', async () => {
  let inFlight = 0;
  let peak = 0;
  const calls: number[] = [];
  const r = await slowStartBatch(
    40,
    1,
    async (i) => {
      calls.push(i);
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((res) => setTimeout(res, 1));
      inFlight--;
    },
    undefined,
    3,
  );
  assert.equal(peak, 3);
  assert.deepEqual(
    calls,
    Array.from({ length: 40 }, (_, i) => i),
  );
  assert.deepEqual(r, { succeeded: 40, failed: 0, skipped: 0 });
});

test('slow start with a concurrency still finishes the batch of a failed call and starts no later batch', async () => {
  const calls: number[] = [];
  const r = await slowStartBatch(
    20,
    1,
    async (i) => {
      calls.push(i);
      await Promise.resolve();
      if (i === 4) throw new Error('denied by a webhook');
    },
    undefined,
    2,
  );
  // batches 0 | 1-2 | 3-6: the batch of call 4 runs to its end (3, 4, 5, 6), then nothing more
  assert.deepEqual(calls, [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(r.succeeded, 6);
  assert.equal(r.failed, 1);
  assert.equal(r.skipped, 13);
});
