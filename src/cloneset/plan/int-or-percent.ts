// Integer-or-percent conversions used by the replica diff (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go). There are two different parsers on
// purpose: Kruise resolves maxSurge / maxUnavailable / scaleStrategy.maxUnavailable with Kubernetes' legacy
// `GetValueFromIntOrPercent` (integer percents only, every string is a percentage) but the partition with its
// own `CalculatePartitionReplicas` (decimal percents, "at least one pod updated"). A CloneSet written for
// Kruise must resolve to the same numbers here, quirks included (docs/features.md#maxunavailable, #partition; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go).
import type { IntOrString } from '../../api/cloneset.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.Atoi` (base 10, optional sign, 64-bit range); undefined when Go would return an error. */
function goAtoi(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const big = BigInt(s);
  if (big < INT64_MIN || big > INT64_MAX) return undefined;
  return Number(big);
}

/** Go's `strconv.ParseFloat(s, 64)` restricted to finite decimal notation; undefined on error. */
function goParseFloat(s: string): number | undefined {
  // Go also accepts "Inf"/"NaN"/hex floats; their result would be meaningless here, so they count as errors.
  if (!/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(s)) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

/** Go's int(x) for integral x, without the negative zero that Math.ceil can produce. */
function toInt(x: number): number {
  return x === 0 ? 0 : x;
}

/** An IntOrString integer: Go holds an int32, so anything fractional is truncated. */
function intValue(v: number): number {
  return toInt(Math.trunc(v));
}

/**
 * Resolves maxSurge / maxUnavailable / scaleStrategy.maxUnavailable against `total` exactly like Kubernetes'
 * deprecated `intstr.GetValueFromIntOrPercent`, which Kruise calls with the error ignored:
 * - `undefined` → 0 (the Go helper errors on nil; callers apply their defaults first);
 * - an integer is returned as is;
 * - a string is ALWAYS a percentage: every `%` is removed and the rest must be a base-10 integer, so `"5"`
 *   means 5 % and `"12.5%"` is a parse error → 0;
 * - the percentage is `ceil` (roundUp) or `floor` of `p * total / 100` in float64.
 */
export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return intValue(v);
  const p = goAtoi(v.replaceAll('%', ''));
  if (p === undefined) return 0;
  const scaled = (p * total) / 100;
  return toInt(roundUp ? Math.ceil(scaled) : Math.floor(scaled));
}

/** Whether Kruise's `CalculatePartitionReplicas` accepts the value (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go: a string must be a decimal percent). */
export function partitionParses(v: IntOrString | undefined): boolean {
  return typeof v !== 'string' || (v.endsWith('%') && goParseFloat(v.slice(0, -1)) !== undefined);
}

/**
 * The absolute partition (number of pods kept at the current revision), Kruise's `CalculatePartitionReplicas`:
 * - `undefined` → 0; an integer → itself;
 * - a string must end in `%` (else it is an error → 0) and may have decimals: `ceil(p * replicas / 100)`;
 * - when `replicas > 1` and a percent string other than the literal `"100%"` resolves to all replicas, one pod
 *   is still updated (`"99%"` of 5 → 4, but `"100%"` → 5 and `"100.0%"` → 4);
 * - finally clamped to `[0, replicas]`.
 * Kruise logs parse errors and carries on with partition 0; so do we (validation rejects them at admission).
 */
export function partitionAbs(v: IntOrString | undefined, replicas: number): number {
  if (v === undefined) return 0;
  let p: number;
  if (typeof v === 'number') {
    p = intValue(v);
  } else {
    if (!v.endsWith('%')) return 0;
    const pct = goParseFloat(v.slice(0, -1));
    if (pct === undefined) return 0;
    p = toInt(Math.ceil((pct * replicas) / 100));
    if (replicas > 1 && p === replicas && v !== '100%') p = replicas - 1;
  }
  return toInt(Math.max(Math.min(p, replicas), 0));
}
