// Seeds 1001–2000 of the deterministic simulation (the first thousand are in simulation.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeedRange } from './seed-range.ts';

test('seeds 1001–2000 keep every invariant and converge after their last fault', async () => {
  const r = await runSeedRange(1001, 1000);
  assert.deepEqual(r.failures, [], `${r.failures.length} failing seeds:\n${r.failures.join('\n')}`);
});
