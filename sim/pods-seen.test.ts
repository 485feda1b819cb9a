// What a controller's pod cache can have seen, and since when (pods-seen.ts): the checker measures its
// PLAN_LAG_MS allowance from when a change reached the process, not from when the server committed it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PodsSeen } from './pods-seen.ts';

describe('PodsSeen', () => {
  test('a resourceVersion is reached when the first list or event at or above it arrives', () => {
    const seen = new PodsSeen();
    seen.saw('controller-0', 10, 1_000);
    seen.saw('controller-0', 25, 7_000); // a late watch: rv 11..25 arrive together
    assert.equal(seen.reachedAt('controller-0', 10), 1_000);
    assert.equal(seen.reachedAt('controller-0', 11), 7_000);
    assert.equal(seen.reachedAt('controller-0', 25), 7_000);
    assert.equal(seen.reachedAt('controller-0', 26), undefined);
    assert.equal(seen.newest('controller-0'), 25);
  });

  test('processes are apart, and an older or equal resourceVersion arriving again changes nothing', () => {
    const seen = new PodsSeen();
    seen.saw('controller-0', 10, 1_000);
    seen.saw('controller-0', 10, 5_000);
    seen.saw('controller-0', 4, 6_000);
    assert.equal(seen.reachedAt('controller-0', 10), 1_000);
    assert.equal(seen.reachedAt('controller-1', 1), undefined);
    assert.equal(seen.newest('controller-1'), 0);
  });

  test('arrivals older than a minute are forgotten in bulk and count as seen long ago', () => {
    const seen = new PodsSeen();
    for (let rv = 1; rv <= 2_000; rv++) seen.saw('controller-0', rv, rv * 100);
    // the last arrival at 200 s: everything before 140 s may be forgotten
    assert.equal(seen.reachedAt('controller-0', 5), Number.NEGATIVE_INFINITY);
    assert.equal(seen.reachedAt('controller-0', 1_900), 190_000);
    assert.equal(seen.newest('controller-0'), 2_000);
  });
});
