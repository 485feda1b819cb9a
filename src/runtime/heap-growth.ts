// The old generation's growth between full collections, bounded in MiB rather than in percent
// (docs/performance.md, "Heap growth bounded in MiB").
//
// Under the controller's node flags (`--optimize-for-size`, bin/cloneset-controller) V8 lets the old generation
// grow a tenth past what survived the last full collection (at least 8 MB) before it marks the whole heap again.
// A tenth is little on a small heap: a 10 000-pod CloneSet (~35 MB live) pays a full mark every ~8 MB of garbage
// from its watch events and answers. `--heap-growing-percent=50` saved a seventh of a 10 000-pod scale-up's CPU,
// but at 100 000 pods (~150 MB live) a half let 75 MB of garbage pile up and pushed the peak RSS over 350 MiB.
// So the percent follows the live heap: `budget / live`, between V8's own 10 % and 50 %: small heaps get the
// half, large ones the budget's share, and heaps past ten times the budget V8's own tenth, as without this.
//
// V8 reads `--heap-growing-percent` at every full collection (heap-controller.cc, MemoryController::GrowingFactor),
// so setting it at run time (v8.setFlagsFromString) takes effect from the next limit V8 computes.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';

export interface HeapGrowthPolicy {
  /** Garbage the old generation may gather between full collections, in bytes; 0 = leave V8's growth alone. */
  readonly budgetBytes: number;
  /** V8's own growth under `--optimize-for-size` (kMinGrowingFactor 1.1): never collect more often than it. */
  readonly minPercent: number;
  /** The largest growth measured (session 30); V8's own default growth cost ~200 MiB more peak RSS in a 100 000-pod list. */
  readonly maxPercent: number;
}

export const DEFAULT_HEAP_GROWTH_MIB = 24;
const MIN_PERCENT = 10;
const MAX_PERCENT = 50;

export function heapGrowthPolicy(budgetMib: number): HeapGrowthPolicy {
  return { budgetBytes: budgetMib * 1024 * 1024, minPercent: MIN_PERCENT, maxPercent: MAX_PERCENT };
}

/** The growth, in percent of the live heap, that lets the old generation gather about `budgetBytes` of garbage. */
export function heapGrowingPercent(liveBytes: number, policy: HeapGrowthPolicy): number {
  if (!(liveBytes > 0)) return policy.maxPercent;
  const percent = Math.floor((100 * policy.budgetBytes) / liveBytes);
  return Math.min(policy.maxPercent, Math.max(policy.minPercent, percent));
}

/** Whether the process was started with its own `--heap-growing-percent` (NODE_OPTIONS or node's arguments): that one wins. */
export function growthSetByUser(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const given = (arg: string): boolean => /^--heap[-_]growing[-_]percent(=|$)/.test(arg);
  return execArgv.some(given) || (nodeOptions ?? '').split(/\s+/).some(given);
}

export interface HeapGrowthDeps {
  readonly setFlags: (flags: string) => void;
  /** The heap in use: read right after a full collection, what survived it (and what was allocated since). */
  readonly usedHeapBytes: () => number;
  /** Calls `onMajor` after every full (mark-compact) collection; returns how to stop. */
  readonly onMajorGc: (onMajor: () => void) => () => void;
}

export const nodeHeapGrowthDeps: HeapGrowthDeps = {
  setFlags: (flags) => v8.setFlagsFromString(flags),
  usedHeapBytes: () => v8.getHeapStatistics().used_heap_size,
  onMajorGc: (onMajor) => {
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        // A gc entry's `detail` is { kind, flags } (node:perf_hooks); @types/node leaves it off PerformanceEntry.
        const detail: unknown = 'detail' in entry ? entry.detail : undefined;
        if (typeof detail === 'object' && detail !== null && 'kind' in detail && detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
          onMajor();
          return;
        }
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    return () => observer.disconnect();
  },
};

/**
 * Keeps V8's `--heap-growing-percent` at `heapGrowingPercent` of the heap each full collection leaves, from now
 * until the returned stop. Returns undefined (and changes nothing) when the budget is 0.
 */
export function controlHeapGrowth(policy: HeapGrowthPolicy, deps: HeapGrowthDeps, onChange?: (percent: number) => void): (() => void) | undefined {
  if (policy.budgetBytes <= 0) return undefined;
  let current = -1;
  const apply = (): void => {
    const percent = heapGrowingPercent(deps.usedHeapBytes(), policy);
    if (percent === current) return;
    current = percent;
    deps.setFlags(`--heap-growing-percent=${percent}`);
    onChange?.(percent);
  };
  apply();
  return deps.onMajorGc(apply);
}
