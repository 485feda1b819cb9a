// Quantiles of a Prometheus histogram between two scrapes of the controller's /metrics (the benchmarks' latency
// figures: controller_runtime_reconcile_time_seconds, workqueue_queue_duration_seconds).

/** Cumulative bucket counts (upper bound → count) of a histogram, summed over its label sets, from a Prometheus text body. */
export function histogramBuckets(body: string, name: string): Map<number, number> {
  const out = new Map<number, number>();
  const re = new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)$`, 'gm');
  for (const m of body.matchAll(re)) {
    const le = /(?:^|,)le="([^"]+)"/.exec(m[1] ?? '')?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + Number(m[2]));
  }
  return out;
}

/**
 * The q-quantile of the observations between two scrapes of a histogram (`after` − `before`), interpolated linearly
 * inside its bucket as Prometheus's histogram_quantile does; undefined without observations.
 */
export function histogramQuantile(q: number, after: Map<number, number>, before: Map<number, number>): number | undefined {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  for (const [i, bound] of bounds.entries()) {
    const count = counts[i] ?? 0;
    if (count < rank) continue;
    const lower = i === 0 ? 0 : (bounds[i - 1] ?? 0);
    const below = i === 0 ? 0 : (counts[i - 1] ?? 0);
    if (bound === Number.POSITIVE_INFINITY) return lower;
    return count === below ? bound : lower + ((bound - lower) * (rank - below)) / (count - below);
  }
  return bounds.at(-2);
}
