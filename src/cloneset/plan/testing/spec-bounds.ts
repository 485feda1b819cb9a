// The bounds a CloneSet's rolling-update fields set, by the tests' own small arithmetic: Kubernetes'
// integer-or-percent rule and Kruise's partition rule written out again here on purpose (docs/features.md#scaling,
// #maxunavailable, #partition), never asked of the planner's `resolveLimits`, so that a slip in the planner's
// arithmetic cannot move the bound it is checked against.
import type { IntOrString } from '../../../api/cloneset.ts';

/** The fields the bounds depend on (a subset of the planner's ReplicaDiffInput, and of a CloneSet's spec). */
export interface BoundFields {
  readonly replicas: number;
  /** False for OnDelete without a partition: no surge, no partition, the default maxUnavailable. */
  readonly hasRollingUpdate: boolean;
  readonly paused?: boolean;
  readonly partition?: IntOrString;
  readonly maxSurge?: IntOrString;
  readonly maxUnavailable?: IntOrString;
  readonly scaleMaxUnavailable?: IntOrString;
}

export interface SpecBounds {
  readonly partition: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
  readonly scaleMaxUnavailable: number;
}

/** An integer as it is; "N%" of `total` for a whole N, rounded up or down; anything else 0. */
export function percentOf(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const digits = v.replaceAll('%', '');
  if (!/^[+-]?\d+$/.test(digits)) return 0;
  const exact = (Number(digits) * total) / 100;
  return (roundUp ? Math.ceil(exact) : Math.floor(exact)) || 0;
}

/** A partition: an integer, or a decimal percentage rounded up that leaves one pod to update unless it is 100%; clamped. */
export function partitionCount(v: IntOrString | undefined, replicas: number): number {
  if (v === undefined) return 0;
  let p = 0;
  if (typeof v === 'number') p = v;
  else if (v.endsWith('%') && /^\d+(\.\d+)?$/.test(v.slice(0, -1))) {
    p = Math.ceil((Number(v.slice(0, -1)) * replicas) / 100);
    if (replicas > 1 && p === replicas && v !== '100%') p = replicas - 1;
  }
  return Math.max(0, Math.min(replicas, p));
}

export function boundsOf(f: BoundFields): SpecBounds {
  const r = f.replicas;
  const scaleMaxUnavailable = f.scaleMaxUnavailable === undefined ? 2147483647 : percentOf(f.scaleMaxUnavailable, r, true);
  if (!f.hasRollingUpdate) return { partition: 0, maxSurge: 0, maxUnavailable: percentOf('20%', r, false), scaleMaxUnavailable };
  const maxSurge = f.paused === true ? 0 : percentOf(f.maxSurge, r, true);
  // With a surge, maxUnavailable rounds down.
  const maxUnavailable = percentOf(f.maxUnavailable ?? '20%', r, maxSurge === 0);
  return { partition: partitionCount(f.partition, r), maxSurge, maxUnavailable, scaleMaxUnavailable };
}
