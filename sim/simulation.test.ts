// The deterministic simulation as a test: a run replays exactly from its seed, and seeds 1–1000 keep every
// invariant (sim/checker.ts) and converge. Seeds 1001–2000 are in simulation-more-seeds.test.ts, so that the
// two halves run in parallel. A failure names the seed and the command that replays it with its trace.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { partitionOf, scaled } from './checker.ts';
import { runSeed } from './harness.ts';
import { runSeedRange } from './seed-range.ts';

describe('the deterministic simulation', () => {
  test('the same seed always gives the same trace, and another seed a different one', async () => {
    // Seed 7: two controller replicas, both restarted with their memory lost, dropped watches, a slow cache, a rollout.
    const first = await runSeed({ seed: 7, trace: true, logs: true });
    const again = await runSeed({ seed: 7, trace: true, logs: true });
    const other = await runSeed({ seed: 8, trace: true, logs: true });
    assert.ok(first.trace.length > 100, `a trace of ${first.trace.length} lines`);
    assert.deepEqual(again.trace, first.trace);
    assert.equal(again.events, first.events);
    assert.notDeepEqual(other.trace, first.trace);
  });

  test('seeds 1–1000 keep every invariant and converge after their last fault', async () => {
    const r = await runSeedRange(1, 1000);
    assert.deepEqual(r.failures, [], `${r.failures.length} failing seeds:\n${r.failures.join('\n')}`);
    assert.ok(
      Object.values(r.faults).every((n) => n > 0),
      `every kind of fault was injected: ${JSON.stringify(r.faults)}`,
    );
  });
});

describe("the checker's own arithmetic (Kruise's rules, not the planner's functions)", () => {
  test('maxSurge rounds a percentage up, maxUnavailable down when there is a surge', () => {
    assert.equal(scaled('50%', 5, true, 0), 3);
    assert.equal(scaled('50%', 5, false, 0), 2);
    assert.equal(scaled(undefined, 5, true, '20%'), 1);
    assert.equal(scaled(2, 5, false, 0), 2);
    assert.equal(scaled('12.5%', 8, true, 0), 0);
  });

  test('a partition percentage rounds up but leaves one pod to update unless it is exactly 100%', () => {
    assert.equal(partitionOf('50%', 5), 3);
    assert.equal(partitionOf('99%', 5), 4);
    assert.equal(partitionOf('100%', 5), 5);
    assert.equal(partitionOf(7, 5), 5);
    assert.equal(partitionOf(undefined, 5), 0);
  });
});
