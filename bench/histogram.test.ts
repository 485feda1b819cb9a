import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { histogramBuckets, histogramQuantile } from './histogram.ts';

const scrape = (fast: number, slow: number): string =>
  [
    '# TYPE controller_runtime_reconcile_time_seconds histogram',
    `controller_runtime_reconcile_time_seconds_bucket{controller="cloneset",le="0.01"} ${fast}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="cloneset",le="0.1"} ${fast + slow}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="cloneset",le="+Inf"} ${fast + slow}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="other",le="0.01"} 1`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="other",le="0.1"} 1`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="other",le="+Inf"} 1`,
    `controller_runtime_reconcile_time_seconds_sum{controller="cloneset"} 3`,
  ].join('\n');

describe('histogram quantiles between two scrapes', () => {
  it('sums the buckets of every label set by upper bound', () => {
    assert.deepEqual(
      [...histogramBuckets(scrape(10, 5), 'controller_runtime_reconcile_time_seconds')],
      [
        [0.01, 11],
        [0.1, 16],
        [Number.POSITIVE_INFINITY, 16],
      ],
    );
  });

  it('interpolates inside the bucket of the rank, counting only what was observed between the scrapes', () => {
    const before = histogramBuckets(scrape(10, 0), 'controller_runtime_reconcile_time_seconds');
    const after = histogramBuckets(scrape(20, 10), 'controller_runtime_reconcile_time_seconds');
    // 10 observations ≤ 10 ms and 10 in (10 ms, 100 ms]: the median is the top of the first bucket, p99 at 98 %
    // of the way through the second: 0.01 + 0.09 × (19.8 − 10) / 10
    assert.equal(histogramQuantile(0.5, after, before), 0.01);
    assert.ok(Math.abs((histogramQuantile(0.99, after, before) ?? 0) - 0.0982) < 1e-9);
  });

  it('has no quantile without observations', () => {
    const same = histogramBuckets(scrape(10, 5), 'controller_runtime_reconcile_time_seconds');
    assert.equal(histogramQuantile(0.5, same, same), undefined);
  });
});
