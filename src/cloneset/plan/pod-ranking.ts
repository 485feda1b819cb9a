// Which pods go first: the scale-in deletion order (docs/features.md#deletion-order; Kruise pkg/controller/cloneset/sync/cloneset_scale.go, Kruise `ActivePodsWithRanks` + rankers) and
// the default update order (docs/features.md#update-order; Kruise pkg/controller/cloneset/core/cloneset_core.go, Kubernetes `ActivePods`). "Smaller" sorts first = deleted/updated first.
//
// Sorting is STABLE here (Array.prototype.sort is stable): pods that compare equal keep their list order.
// Kruise uses Go's sort.Sort, which is unstable for more than 12 elements, so for ties its choice is
// arbitrary; any stable order is one Kruise could produce, and stability makes our plans deterministic.
import type { Node, Pod, TopologySpreadConstraint } from '../../kube/types.ts';
import { ANNOTATION_POD_DELETION_COST } from '../../api/well-known.ts';
import { isPodAvailable, isPodReady, readySinceMs, timestampMs } from './pod-predicates.ts';

export interface RankOptions {
  readonly minReadySeconds: number;
  readonly nowMs: number;
  /** Nodes by name, from the snapshot (the spread ranker reads their labels; missing nodes are skipped). */
  readonly nodes: ReadonlyMap<string, Node>;
  /** The UPDATE revision template's constraints; non-empty → spread ranker, else same-node ranker. */
  readonly topologySpreadConstraints?: readonly TopologySpreadConstraint[];
}

const HOSTNAME_LABEL = 'kubernetes.io/hostname';
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Negative: a goes first; positive: b goes first; 0: tie (a rule decides nothing). */
type Compare = (a: Pod, b: Pod) => number;
type Ranks = ReadonlyMap<Pod, number>;

const boolFirst = (aFirst: boolean, bFirst: boolean): number => (aFirst === bFirst ? 0 : aFirst ? -1 : 1);

/** Phase ordinal: Pending < Unknown < Running; any other phase (or none) counts as Pending. */
function phaseOrdinal(pod: Pod): number {
  const phase = pod.status?.phase;
  return phase === 'Running' ? 2 : phase === 'Unknown' ? 1 : 0;
}

/**
 * `controller.kubernetes.io/pod-deletion-cost` as Kubernetes reads it: `0`, `-digits`, or digits without a
 * leading zero, within int32; anything else (missing, `+1`, `007`, junk, out of range) counts as 0.
 */
export function deletionCost(pod: Pod): number {
  const v = pod.metadata.annotations?.[ANNOTATION_POD_DELETION_COST];
  if (v === undefined || !/^(0|-[0-9]+|[1-9][0-9]*)$/.test(v)) return 0;
  const n = Number(v);
  return n >= INT32_MIN && n <= INT32_MAX ? (n === 0 ? 0 : n) : 0;
}

function maxRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** Go's `afterOrZero` as a comparison: a later time goes first; an unknown (zero) time counts as latest. */
function laterOrZeroFirst(a: number | undefined, b: number | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a > b ? -1 : 1;
}

// The tie-breaker ladder. Each rule returns 0 when it cannot tell the two pods apart.
/** Rule 1: a pod not yet scheduled to a node goes before a scheduled one. */
const unassignedFirst: Compare = (a, b) => boolFirst(!a.spec.nodeName, !b.spec.nodeName);
/** Rule 2: Pending < Unknown < Running. */
const earlierPhaseFirst: Compare = (a, b) => phaseOrdinal(a) - phaseOrdinal(b);
/** Rule 3: a not-available pod (lifecycle + minReadySeconds) goes first. */
const unavailableFirst =
  (o: RankOptions): Compare =>
  (a, b) =>
    boolFirst(!isPodAvailable(a, o.minReadySeconds, o.nowMs), !isPodAvailable(b, o.minReadySeconds, o.nowMs));
/** Rule 4: a not-Ready pod goes first. */
const notReadyFirst: Compare = (a, b) => boolFirst(!isPodReady(a), !isPodReady(b));
/** Rule 5: the lower pod-deletion-cost goes first. */
const lowerCostFirst: Compare = (a, b) => deletionCost(a) - deletionCost(b);
/** Rule 6: the higher rank (more crowded spot) goes first. */
const higherRankFirst =
  (ranks: Ranks): Compare =>
  (a, b) => {
    const ra = ranks.get(a) ?? 0;
    const rb = ranks.get(b) ?? 0;
    return ra === rb ? 0 : ra > rb ? -1 : 1;
  };
/** Rule 7: when both are Ready, the more recently ready one goes first (unknown time = most recent). */
const recentlyReadyFirst: Compare = (a, b) => (isPodReady(a) && isPodReady(b) ? laterOrZeroFirst(readySinceMs(a), readySinceMs(b)) : 0);
/** Rule 8: more container restarts goes first. */
const moreRestartsFirst: Compare = (a, b) => maxRestarts(b) - maxRestarts(a);
/** Rule 9: the newer pod goes first (no creation time = newest). */
const newerFirst: Compare = (a, b) => laterOrZeroFirst(timestampMs(a.metadata.creationTimestamp), timestampMs(b.metadata.creationTimestamp));

function ladder(rules: readonly Compare[]): Compare {
  return (a, b) => {
    for (const rule of rules) {
      const c = rule(a, b);
      if (c !== 0) return c;
    }
    return 0; // Rule 10: a tie — the stable sort keeps list order.
  };
}

/** Kruise's ranker-internal order: rules 1, 2, 4, 5, (6 with the given ranks), 7, 8, 9 — no availability rule. */
function rankerOrder(ranks: Ranks | undefined): Compare {
  const rank = ranks !== undefined ? [higherRankFirst(ranks)] : [];
  return ladder([unassignedFirst, earlierPhaseFirst, notReadyFirst, lowerCostFirst, ...rank, recentlyReadyFirst, moreRestartsFirst, newerFirst]);
}

/**
 * Same-node ranker: on every node holding several of the pods, all but the most valuable pod get ranks
 * m, m−1, …, 1 in deletion order (m = pods on the node − 1), so crowded nodes are thinned out first.
 * Example: node-c holding p5, p3, p4 (in that order) → p5 = 2, p3 = 1, p4 = 0.
 */
export function sameNodeRanks(pods: readonly Pod[]): Map<Pod, number> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    const node = pod.spec.nodeName;
    if (node) byNode.set(node, [...(byNode.get(node) ?? []), pod]);
  }
  const ranks = new Map<Pod, number>();
  for (const group of byNode.values()) {
    if (group.length < 2) continue;
    const sorted = group.toSorted(rankerOrder(undefined)).slice(0, -1);
    sorted.forEach((pod, i) => {
      ranks.set(pod, sorted.length - i);
    });
  }
  return ranks;
}

/**
 * Spread-constraints ranker: for each constraint's topology key, pods are grouped by their node's label value;
 * within a group the i-th pod in deletion order gets (groupSize − i) × ln(groups + 2), summed over
 * constraints — so the biggest domains lose pods first. Pods whose node is unknown or lacks the label are
 * ignored for that constraint. Within a non-hostname domain, same-node ranks break ties.
 */
export function spreadConstraintRanks(pods: readonly Pod[], constraints: readonly TopologySpreadConstraint[], nodes: ReadonlyMap<string, Node>): Map<Pod, number> {
  // Nodes in order of first appearance, each with its pods (list order).
  const podsOnNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    const name = pod.spec.nodeName;
    if (!name || !nodes.has(name)) continue;
    podsOnNode.set(name, [...(podsOnNode.get(name) ?? []), pod]);
  }
  const sameNode = sameNodeRanks(pods);
  const ranks = new Map<Pod, number>();
  for (const constraint of constraints) {
    const domains = new Map<string, Pod[]>();
    for (const [nodeName, onNode] of podsOnNode) {
      const value = nodes.get(nodeName)?.metadata.labels?.[constraint.topologyKey];
      if (value === undefined) continue;
      domains.set(value, [...(domains.get(value) ?? []), ...onNode]);
    }
    const order = rankerOrder(constraint.topologyKey === HOSTNAME_LABEL ? undefined : sameNode);
    const weight = Math.log(domains.size + 2);
    for (const domain of domains.values()) {
      domain.toSorted(order).forEach((pod, i) => {
        ranks.set(pod, (ranks.get(pod) ?? 0) + (domain.length - i) * weight);
      });
    }
  }
  return ranks;
}

/**
 * Sorts pods "delete first" (docs/features.md#deletion-order; Kruise pkg/controller/cloneset/sync/cloneset_scale.go) with rules 1–9: unassigned, phase, not available, not Ready,
 * lower deletion cost, higher rank, more recently Ready, more restarts, newer. Ranks come from the spread
 * ranker when `topologySpreadConstraints` is non-empty, else from the same-node ranker, over these pods only.
 */
export function rankPodsForDeletion(pods: readonly Pod[], opts: RankOptions): Pod[] {
  const constraints = opts.topologySpreadConstraints ?? [];
  const ranks = constraints.length > 0 ? spreadConstraintRanks(pods, constraints, opts.nodes) : sameNodeRanks(pods);
  return pods.toSorted(
    ladder([unassignedFirst, earlierPhaseFirst, unavailableFirst(opts), notReadyFirst, lowerCostFirst, higherRankFirst(ranks), recentlyReadyFirst, moreRestartsFirst, newerFirst]),
  );
}

/** Kruise's `choose`: the first n pods in deletion order; sorting is skipped when all of them go anyway. */
function choose(pods: readonly Pod[], n: number, opts: RankOptions): Pod[] {
  if (n <= 0) return [];
  if (n >= pods.length) return [...pods];
  return rankPodsForDeletion(pods, opts).slice(0, n);
}

/**
 * Scale-in victims (docs/features.md#deletion-order; Kruise pkg/controller/cloneset/sync/cloneset_scale.go): old-revision pods first, up to `scaleDownNumOldRevision`, then updated pods
 * for the rest. When a whole list is taken it keeps its original order (as Kruise, which does not sort it).
 */
export function choosePodsToDelete(updated: readonly Pod[], notUpdated: readonly Pod[], scaleDownNum: number, scaleDownNumOldRevision: number, opts: RankOptions): Pod[] {
  if (scaleDownNumOldRevision >= scaleDownNum) return choose(notUpdated, scaleDownNum, opts);
  if (scaleDownNumOldRevision > 0) {
    return [...choose(notUpdated, scaleDownNumOldRevision, opts), ...choose(updated, scaleDownNum - scaleDownNumOldRevision, opts)];
  }
  return choose(updated, scaleDownNum, opts);
}

/**
 * Default update order (docs/features.md#update-order; Kruise pkg/controller/cloneset/core/cloneset_core.go, Kubernetes `ActivePods`): unassigned, Pending < Unknown < Running,
 * not Ready, more recently Ready, more restarts, newer — first. `nowMs` is unused by this order (it has no
 * minReadySeconds rule) and kept for a uniform planner signature.
 */
export function sortPodsForUpdate(pods: readonly Pod[], nowMs: number): Pod[] {
  void nowMs;
  return pods.toSorted(ladder([unassignedFirst, earlierPhaseFirst, notReadyFirst, recentlyReadyFirst, moreRestartsFirst, newerFirst]));
}
