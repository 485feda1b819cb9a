import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { controlHeapGrowth, growthSetByUser, heapGrowingPercent, heapGrowthPolicy, nodeHeapGrowthDeps, type HeapGrowthDeps } from './heap-growth.ts';

const MiB = 1024 * 1024;
const policy = heapGrowthPolicy(24);

describe('heap growth bounded in MiB', () => {
  it('lets a small heap grow by half before the next full collection', () => {
    assert.equal(heapGrowingPercent(20 * MiB, policy), 50);
    assert.equal(heapGrowingPercent(48 * MiB, policy), 50);
  });

  it("gives a large heap the budget's share of it, never less than V8's own tenth", () => {
    assert.equal(heapGrowingPercent(96 * MiB, policy), 25); // 24 of 96 MiB
    assert.equal(heapGrowingPercent(160 * MiB, policy), 15);
    assert.equal(heapGrowingPercent(2048 * MiB, policy), 10);
  });

  it('treats an unknown heap size as a small heap', () => {
    assert.equal(heapGrowingPercent(0, policy), 50);
    assert.equal(heapGrowingPercent(Number.NaN, policy), 50);
  });

  it("sets V8's flag at start and again after each full collection, only when the percent changes", () => {
    let used = 30 * MiB;
    const set: string[] = [];
    let major: (() => void) | undefined;
    let stopped = false;
    const deps: HeapGrowthDeps = {
      setFlags: (f) => void set.push(f),
      usedHeapBytes: () => used,
      onMajorGc: (f) => {
        major = f;
        return () => {
          stopped = true;
        };
      },
    };
    const stop = controlHeapGrowth(policy, deps);
    assert.deepEqual(set, ['--heap-growing-percent=50']);
    used = 40 * MiB;
    major?.();
    assert.deepEqual(set, ['--heap-growing-percent=50'], 'still 50 %: no new flag');
    used = 120 * MiB;
    major?.();
    assert.deepEqual(set, ['--heap-growing-percent=50', '--heap-growing-percent=20']);
    stop?.();
    assert.ok(stopped);
  });

  it('changes nothing with a budget of 0', () => {
    const set: string[] = [];
    const stop = controlHeapGrowth(heapGrowthPolicy(0), { ...nodeHeapGrowthDeps, setFlags: (f) => void set.push(f) });
    assert.equal(stop, undefined);
    assert.deepEqual(set, []);
  });

  it("leaves a user's own --heap-growing-percent alone, from node's arguments or NODE_OPTIONS", () => {
    assert.ok(growthSetByUser(['--heap-growing-percent=40'], undefined));
    assert.ok(growthSetByUser([], '--max-old-space-size=512 --heap_growing_percent=30'));
    assert.ok(!growthSetByUser(['--max-semi-space-size=2', '--optimize-for-size'], '--max-old-space-size=512'));
  });

  it('observes real full collections in this process', async () => {
    let majors = 0;
    const stop = nodeHeapGrowthDeps.onMajorGc(() => majors++);
    // A full collection on demand: `gc` exposed to a fresh context (the flag is read when a context is made).
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const deadline = Date.now() + 10_000;
    while (majors === 0 && Date.now() < deadline) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20)); // gc entries are delivered after the collection
    }
    stop();
    assert.ok(majors > 0, 'a major GC was seen within 10 s');
  });
});
