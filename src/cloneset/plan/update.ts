// planUpdate: the Update() step (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go) — choose which pods move to the target revision, within partition
// and maxUnavailable; update them in place (InPlaceIfPossible/InPlaceOnly, inplace/plan.ts) or mark them for
// deletion-and-recreation (ReCreate, and the InPlaceIfPossible fallback).
import type { FeatureGates } from '../../api/well-known.ts';
import { LABEL_SPECIFIED_DELETE } from '../../api/well-known.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { inGracePeriod, isInPlacePolicy, planInPlaceUpdate, restoreReadiness, updatePolicyOf, type InPlaceContext } from '../inplace/plan.ts';
import { minDelay, podRefOf, type PlanAction, type PlannedEvent } from './actions.ts';
import { setStateActions } from './lifecycle-state.ts';
import { isPodAvailable, lifecycleStateOf, revisionMatches } from './pod-predicates.ts';
import { passReplicaDiffs, type PassReplicaDiffs, type SurgeRule } from './replica-diff.ts';
import { orderUpdateCandidates } from './update-order.ts';

export interface UpdateInput {
  readonly cloneSet: CloneSet;
  readonly pods: readonly Pod[];
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDeleteFlag: boolean;
  /** undefined → 'kruise' (see SurgeRule). */
  readonly surgeRule?: SurgeRule;
  /** The in-place engine's inputs; without them every update is a ReCreate. */
  readonly inPlace?: InPlaceContext;
  /** The pass's replica diffs of these pods and inputs (planPass shares them with Scale); made here without. */
  readonly diffs?: PassReplicaDiffs;
}

export interface UpdateResult {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  readonly explain: readonly string[];
  /** In-place grace periods: look again when the nearest one ends. */
  readonly requeueAfterMs?: number;
}

export function planUpdate(input: UpdateInput): UpdateResult {
  const { cloneSet, pods, nowMs } = input;
  const none = new Set<Pod>();
  // OnDelete: pods are never updated; they pick up the new template when deleted and re-created by scaling
  // (docs/features.md#ondelete; Kruise pkg/controller/cloneset/sync/cloneset_update.go). Readiness left by an earlier in-place update is still restored.
  if (cloneSet.spec.updateStrategy?.type === 'OnDelete') {
    return { actions: restoreReadiness(cloneSet, pods, none, input.inPlace), events: [], explain: ['updateStrategy OnDelete: pods update when deleted'] };
  }
  if (cloneSet.spec.updateStrategy?.paused === true) {
    return { actions: restoreReadiness(cloneSet, pods, none, input.inPlace), events: [], explain: ['update paused'] };
  }
  const diffs =
    input.diffs ??
    passReplicaDiffs(cloneSet, pods, {
      currentRevision: input.currentRevision,
      updateRevision: input.updateRevision,
      gates: input.gates,
      excludePreparingDeleteFlag: input.excludePreparingDeleteFlag,
      nowMs,
      ...(input.surgeRule !== undefined ? { surgeRule: input.surgeRule } : {}),
    });
  const diff = diffs.update();
  if (diff.updateNum === 0) {
    const withdrawn = withdrawnUpdates(cloneSet, pods, input.updateRevision);
    return {
      actions: [...restoreReadiness(cloneSet, pods, none, input.inPlace), ...withdrawn.actions],
      events: [],
      explain: ['no pod to update', ...withdrawn.explain],
    };
  }
  const target = diff.updateNum > 0 ? input.updateRevision : input.currentRevision;
  const waiting = pods.filter((p) => revisionMatches(p, input.updateRevision) === diff.updateNum < 0);
  const candidates = markedFirst(
    orderUpdateCandidates(
      waiting.filter((p) => lifecycleStateOf(p) !== 'PreparingDelete' && !inGracePeriod(p)),
      pods,
      cloneSet,
      nowMs,
    ),
  );
  const chosen = limitUpdates(candidates, pods, Math.abs(diff.updateNum), diff.updateMaxUnavailable, target, input);
  // Pods marked not ready that this rollout no longer wants get their readiness back first (inplace/plan.ts).
  const actions: PlanAction[] = restoreReadiness(cloneSet, pods, new Set(candidates.slice(0, Math.abs(diff.updateNum))), input.inPlace);
  const events: PlannedEvent[] = [];
  const explain: string[] = [];
  let requeueAfterMs: number | undefined;
  const policy = updatePolicyOf(cloneSet);
  for (const pod of chosen) {
    const name = pod.metadata.name ?? '';
    if (input.inPlace !== undefined && isInPlacePolicy(cloneSet)) {
      const r = planInPlaceUpdate(cloneSet, pod, target, input.inPlace);
      if (r.kind === 'inPlace') {
        actions.push(...r.actions);
        events.push(...r.events);
        explain.push(r.explain);
        requeueAfterMs = minDelay(requeueAfterMs, r.requeueAfterMs);
        continue;
      }
      if (r.kind === 'error' || policy === 'InPlaceOnly') {
        // The first error ends the update pass (FailedUpdate condition + error requeue, docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go).
        const message = r.kind === 'error' ? r.message : `find Pod ${name} update strategy is InPlaceOnly but can not update in-place: ${r.reason}`;
        events.push({ type: 'Warning', reason: 'FailedUpdatePodInPlace', message: `failed to update pod ${name} in-place(revision ${target}): ${message}` });
        actions.push({ kind: 'FailUpdate', message });
        explain.push(message);
        break;
      }
      explain.push(`${name}: ${r.reason}; recreating`);
    }
    if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] === undefined) {
      // The executor records SuccessfulUpdatePodReCreate once the patch succeeded (FailedUpdatePodReCreate if not).
      actions.push({ kind: 'MarkSpecifiedDelete', pod: podRefOf(pod), revision: target });
    }
    // A pod chosen again with the label already there gets no second event. Kruise records one on every pass
    // (docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go) and relies on client-go's spam filter to drop them; without that filter the marked pods that
    // wait for deleteReadyLimit would cost one event write each, on every pass.
  }
  return {
    actions,
    events,
    explain: [`update ${chosen.length} of ${candidates.length} candidates to ${target}`, ...explain],
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

/**
 * Beyond Kruise: candidates already marked specified-delete by an earlier pass come first. They are updates in
 * flight (waiting for deleteReadyLimit), and choosing them again costs no new write. Kruise keeps them as plain
 * candidates, so when the order changes between passes — ties broken by cache order, a pod that turns Ready —
 * each pass would mark one MORE pod: with minReadySeconds (pods not yet available spend no budget) a 10-pod
 * rollout at maxUnavailable 1 would have every old pod marked within 150 ms, and pausing would not stop it.
 * Pods in PreparingUpdate stay ahead of them, as Kruise's order ends (they are updates in flight too, and not
 * available): behind an available marked pod they could wait for a budget that they themselves use up — two pods
 * in PreparingUpdate at maxUnavailable 2 and a marked pod first, and no pass ever chose anything (simulation
 * seed 7244).
 */
export function markedFirst(candidates: readonly Pod[]): Pod[] {
  const preparing = (p: Pod): boolean => lifecycleStateOf(p) === 'PreparingUpdate';
  const marked = (p: Pod): boolean => !preparing(p) && p.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined;
  return [...candidates.filter(preparing), ...candidates.filter(marked), ...candidates.filter((p) => !preparing(p) && !marked(p))];
}

/**
 * limitUpdateIndexes (docs/features.md#maxunavailable; Kruise pkg/controller/cloneset/sync/cloneset_update.go): every update spends budget against the target revision's unavailable
 * pods; updating an already-unavailable pod does not spend the global budget.
 */
function limitUpdates(candidates: readonly Pod[], all: readonly Pod[], count: number, maxUnavailable: number, target: string, input: UpdateInput): Pod[] {
  const minReady = input.cloneSet.spec.minReadySeconds ?? 0;
  const unavailablePods = all.filter((p) => !isPodAvailable(p, minReady, input.nowMs));
  let unavailable = unavailablePods.length;
  const targetUnavailable = unavailablePods.filter((p) => revisionMatches(p, target)).length;
  const chosen: Pod[] = [];
  for (const pod of candidates.slice(0, count)) {
    if (targetUnavailable + chosen.length >= maxUnavailable) break;
    if (isPodAvailable(pod, minReady, input.nowMs)) {
      if (unavailable >= maxUnavailable) break;
      unavailable++;
    }
    chosen.push(pod);
  }
  return chosen;
}

/**
 * Pods left in PreparingUpdate by an update that is no longer wanted go back to Normal. A pod enters
 * PreparingUpdate when it is chosen for an in-place update and its inPlaceUpdate hook holds it; if the update's
 * target is then met without it — a scale-up with a partition creates pods of the update revision, or the partition
 * is raised — no pass chooses it again, and Kruise (PreparingUpdateAsUpdate off, its default) leaves it there for
 * good: never available, counted against maxUnavailable. Found by the simulation (seed 4421). Unlike Kruise, it
 * returns to Normal here, where the user's hook handler finds it as any other Normal pod.
 */
function withdrawnUpdates(cloneSet: CloneSet, pods: readonly Pod[], updateRevision: string): { readonly actions: readonly PlanAction[]; readonly explain: readonly string[] } {
  const actions: PlanAction[] = [];
  const explain: string[] = [];
  for (const pod of pods) {
    if (lifecycleStateOf(pod) !== 'PreparingUpdate' || revisionMatches(pod, updateRevision) || pod.metadata.deletionTimestamp !== undefined) continue;
    actions.push(...setStateActions(cloneSet, pod, 'Normal'));
    explain.push(`${pod.metadata.name ?? ''}: its update is no longer wanted: PreparingUpdate → Normal`);
  }
  return { actions, explain };
}
