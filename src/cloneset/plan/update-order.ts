// Update order (docs/features.md#update-order; Kruise pkg/controller/cloneset/core/cloneset_core.go): the default ActivePods order, then the CloneSet's priority strategy, then its
// scatter strategy, and finally every `PreparingUpdate` candidate moved to the front. Pure.
import type { CloneSet, UpdatePriorityStrategy, UpdateScatterTerm } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { matchesLabelSelector } from '../../kube/selectors.ts';
import { lifecycleStateOf } from './pod-predicates.ts';
import { sortPodsForUpdate } from './pod-ranking.ts';

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const labelsOf = (pod: Pod): Readonly<Record<string, string>> => pod.metadata.labels ?? NO_LABELS;

const INT64_MAX = (1n << 63n) - 1n;

/**
 * The integer formed by the trailing decimal digits of `value` (`"sts-10"` → 10, `"5"` → 5); 0 when there are
 * none or when they overflow int64 (Go's `strconv.ParseInt` fails there).
 */
function trailingInteger(value: string): bigint {
  let start = value.length;
  while (start > 0) {
    const c = value.charCodeAt(start - 1);
    if (c < 48 || c > 57) break;
    start--;
  }
  if (start === value.length) return 0n;
  const n = BigInt(value.slice(start));
  return n > INT64_MAX ? 0n : n;
}

/**
 * Priority strategy (docs/features.md#update-order; Kruise pkg/util/updatesort/priority_sort.go). A **stable** sort — pods of equal priority keep their incoming order (the
 * default order), which is what kruise#2106 asks for. `weightPriority` (when non-empty): sum of the weights of
 * the matching terms, higher first. Otherwise `orderPriority`: (level, order) from the first term whose
 * `orderedKey` is a label of the pod; pods with none of the keys have level −1 and come FIRST; then higher
 * order first (`o-10` before `o-5`). Both empty or no strategy → unchanged.
 */
export function sortPodsByPriority(pods: readonly Pod[], strategy: UpdatePriorityStrategy | undefined): Pod[] {
  const weightTerms = strategy?.weightPriority ?? [];
  const orderTerms = strategy?.orderPriority ?? [];
  if (weightTerms.length > 0) {
    const weightOf = (pod: Pod): number => {
      const labels = labelsOf(pod);
      let w = 0;
      for (const term of weightTerms) if (matchesLabelSelector(term.matchSelector, labels)) w += term.weight;
      return w;
    };
    const weights = new Map(pods.map((p) => [p, weightOf(p)] as const));
    return pods.toSorted((a, b) => (weights.get(b) ?? 0) - (weights.get(a) ?? 0));
  }
  if (orderTerms.length > 0) {
    const priorityOf = (pod: Pod): { level: number; order: bigint } => {
      const labels = labelsOf(pod);
      for (const [level, term] of orderTerms.entries()) {
        const value = labels[term.orderedKey];
        if (value !== undefined) return { level, order: trailingInteger(value) };
      }
      return { level: -1, order: 0n };
    };
    const priorities = new Map(pods.map((p) => [p, priorityOf(p)] as const));
    return pods.toSorted((a, b) => {
      const pa = priorities.get(a) ?? { level: -1, order: 0n };
      const pb = priorities.get(b) ?? { level: -1, order: 0n };
      if (pa.level !== pb.level) return pa.level - pb.level;
      return pa.order === pb.order ? 0 : pa.order > pb.order ? -1 : 1;
    });
  }
  return [...pods];
}

/** Scatter membership as Kruise tests it: a missing label reads as "". */
const matchesTerm = (pod: Pod, term: UpdateScatterTerm): boolean => (labelsOf(pod)[term.key] ?? '') === term.value;

/**
 * The terms to apply (docs/features.md#update-order; Kruise pkg/util/updatesort/scatter_sort.go): a single-term strategy as is; otherwise the distinct terms matched (label
 * present and equal) by at least one candidate, most-matched first, ties in strategy order.
 */
function scatterTerms(candidates: readonly Pod[], scatter: readonly UpdateScatterTerm[]): UpdateScatterTerm[] {
  if (scatter.length === 1) return [...scatter];
  const counts = new Map<string, { term: UpdateScatterTerm; count: number }>();
  for (const term of scatter) {
    for (const pod of candidates) {
      if (labelsOf(pod)[term.key] !== term.value) continue;
      const id = `${term.key}:${term.value}`;
      const seen = counts.get(id);
      if (seen === undefined) counts.set(id, { term: { key: term.key, value: term.value }, count: 1 });
      else seen.count++;
    }
  }
  return [...counts.values()].toSorted((a, b) => b.count - a.count).map((e) => e.term);
}

interface ScatterGroup {
  readonly groups: number;
  readonly matchedSize: number;
  readonly unmatchedSize: number;
  readonly remainder: number;
}

/** Go's `math.Round`: half away from zero. */
const roundHalfAwayFromZero = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

function newGroup(matched: number, unmatched: number): ScatterGroup {
  const groups = Math.min(matched, unmatched);
  return {
    groups,
    matchedSize: roundHalfAwayFromZero(matched / groups),
    unmatchedSize: roundHalfAwayFromZero(unmatched / groups),
    remainder: 0,
  };
}

/** float32(a) / float32(b), as Go computes it. */
const ratio32 = (a: number, b: number): number => Math.fround(Math.fround(a) / Math.fround(b));

function group(totalMatched: number, totalUnmatched: number, updMatched: number, updUnmatched: number): ScatterGroup {
  if (ratio32(totalUnmatched, totalMatched) >= ratio32(updUnmatched, updMatched)) return newGroup(updMatched, updUnmatched);
  const { matchedSize, unmatchedSize } = newGroup(totalMatched, totalUnmatched);
  const groups = Math.min(Math.trunc(updMatched / matchedSize), Math.trunc(updUnmatched / unmatchedSize));
  return { groups, matchedSize, unmatchedSize, remainder: updUnmatched - groups * unmatchedSize };
}

function scatterByTerm(candidates: readonly Pod[], allPods: readonly Pod[], term: UpdateScatterTerm): readonly Pod[] {
  const matched: Pod[] = [];
  const unmatched: Pod[] = [];
  for (const pod of candidates) (matchesTerm(pod, term) ? matched : unmatched).push(pod);
  const last = matched.pop();
  if (last === undefined || matched.length === 0 || unmatched.length <= 1) return candidates;

  let totalMatched = 0;
  for (const pod of allPods) if (matchesTerm(pod, term)) totalMatched++;
  const totalUnmatched = allPods.length - totalMatched;
  totalMatched--; // `last` is set aside

  const g = group(totalMatched, totalUnmatched, matched.length, unmatched.length);
  const out: Pod[] = unmatched.slice(0, g.remainder);
  let mi = 0;
  let ui = out.length;
  for (let i = 0; i < g.groups; i++) {
    const m = matched.slice(mi, mi + g.matchedSize);
    mi += m.length;
    const u = unmatched.slice(ui, ui + g.unmatchedSize);
    ui += u.length;
    out.push(...m, ...u);
  }
  out.push(...matched.slice(mi), ...unmatched.slice(ui), last);
  return out;
}

/**
 * Scatter strategy (docs/features.md#update-order; Kruise pkg/util/updatesort/scatter_sort.go): spreads the candidates matching each term evenly among the others, with the
 * density measured over `allPods` (every claimed pod). Empty strategy or ≤ 1 candidate → unchanged.
 */
export function scatterPods(candidates: readonly Pod[], allPods: readonly Pod[], scatter: readonly UpdateScatterTerm[] | undefined): Pod[] {
  if (scatter === undefined || scatter.length === 0 || candidates.length <= 1) return [...candidates];
  let order: readonly Pod[] = candidates;
  for (const term of scatterTerms(candidates, scatter)) order = scatterByTerm(order, allPods, term);
  return [...order];
}

/**
 * The full update order of the candidates (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go): default sort, priority, scatter, then a stable
 * move of the `PreparingUpdate` candidates to the front.
 */
export function orderUpdateCandidates(candidates: readonly Pod[], allPods: readonly Pod[], cloneSet: CloneSet, nowMs: number): Pod[] {
  const strategy = cloneSet.spec.updateStrategy;
  const ordered = scatterPods(sortPodsByPriority(sortPodsForUpdate(candidates, nowMs), strategy?.priorityStrategy), allPods, strategy?.scatterStrategy);
  const preparing = (p: Pod): number => (lifecycleStateOf(p) === 'PreparingUpdate' ? 0 : 1);
  return ordered.toSorted((a, b) => preparing(a) - preparing(b));
}
