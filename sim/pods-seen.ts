// What each controller process's pod cache can have seen, and since when: the checker excuses a write planned
// on a cache that had not shown a pod's change yet, or had shown it less than PLAN_LAG_MS before (sim/checker.ts).
// The time must be when the change reached the process, not when the server committed it: a slow or stalled
// watch delivers a change seconds after it happened.

/** How long the arrival times stay known; anything older counts as seen long ago (far beyond PLAN_LAG_MS). */
const RETAIN_MS = 60_000;

interface Arrivals {
  /** resourceVersions, increasing, and when each first reached the process. */
  readonly rvs: number[];
  readonly atMs: number[];
  /** The newest resourceVersion whose arrival time was forgotten: seen long ago. */
  forgotten: number;
}

export class PodsSeen {
  readonly #by = new Map<string, Arrivals>();

  /** A pod list answer or watch event of resourceVersion `rv` reached `identity` at `atMs`. */
  saw(identity: string, rv: number, atMs: number): void {
    let a = this.#by.get(identity);
    if (a === undefined) {
      a = { rvs: [], atMs: [], forgotten: 0 };
      this.#by.set(identity, a);
    }
    if (rv <= this.newest(identity)) return;
    a.rvs.push(rv);
    a.atMs.push(atMs);
    // Forget in bulk, and only once the older half is past retention: each forget drops at least half the
    // entries, so the splice is amortised O(1) per event (forgetting as soon as the oldest one aged would splice
    // a long array for one entry on every event of a large run).
    const middle = a.atMs[a.atMs.length >> 1];
    if (a.rvs.length >= 1024 && middle !== undefined && atMs - middle > RETAIN_MS) this.#forget(a, atMs - RETAIN_MS);
  }

  /** The newest resourceVersion of pods `identity` can have seen (0: none). */
  newest(identity: string): number {
    const a = this.#by.get(identity);
    if (a === undefined) return 0;
    return a.rvs[a.rvs.length - 1] ?? a.forgotten;
  }

  /** When `identity` first could have seen resourceVersion `rv` (−∞: long ago), or undefined if not yet. */
  reachedAt(identity: string, rv: number): number | undefined {
    const a = this.#by.get(identity);
    if (a === undefined) return undefined;
    if (rv <= a.forgotten) return Number.NEGATIVE_INFINITY;
    // The first arrival at or above rv: binary search over the increasing resourceVersions.
    let lo = 0;
    let hi = a.rvs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((a.rvs[mid] ?? 0) < rv) lo = mid + 1;
      else hi = mid;
    }
    return a.atMs[lo];
  }

  #forget(a: Arrivals, beforeMs: number): void {
    let n = 0;
    while (n < a.atMs.length - 1 && (a.atMs[n] ?? 0) < beforeMs) n++;
    if (n === 0) return;
    a.forgotten = a.rvs[n - 1] ?? a.forgotten;
    a.rvs.splice(0, n);
    a.atMs.splice(0, n);
  }
}
