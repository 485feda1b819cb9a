// planUpdate: the Update() step (spec §11.1) for the ReCreate policy — choose which pods move to the
// target revision, within partition and maxUnavailable, and mark them for deletion-and-recreation.
import type { FeatureGates } from '../../api/well-known.ts';
import { LABEL_SPECIFIED_DELETE } from '../../api/well-known.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { podRefOf, type PlanAction, type PlannedEvent } from './actions.ts';
import { isPodAvailable, lifecycleStateOf, revisionMatches } from './pod-predicates.ts';
import { computeReplicaDiff, replicaDiffInputFor } from './replica-diff.ts';
import { orderUpdateCandidates } from './update-order.ts';

export interface UpdateInput {
  readonly cloneSet: CloneSet;
  readonly pods: readonly Pod[];
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDeleteFlag: boolean;
}

export interface UpdateResult {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  readonly explain: readonly string[];
}

export function planUpdate(input: UpdateInput): UpdateResult {
  const { cloneSet, pods, nowMs } = input;
  if (cloneSet.spec.updateStrategy?.paused === true) return { actions: [], events: [], explain: ['update paused'] };
  const diff = computeReplicaDiff(
    replicaDiffInputFor(cloneSet, pods, {
      currentRevision: input.currentRevision,
      updateRevision: input.updateRevision,
      gates: input.gates,
      excludePreparingDeleteFlag: input.excludePreparingDeleteFlag,
      nowMs,
      flavour: 'update',
    }),
  );
  if (diff.updateNum === 0) return { actions: [], events: [], explain: ['no pod to update'] };
  const target = diff.updateNum > 0 ? input.updateRevision : input.currentRevision;
  const waiting = pods.filter((p) => revisionMatches(p, input.updateRevision) === diff.updateNum < 0);
  const candidates = orderUpdateCandidates(
    waiting.filter((p) => lifecycleStateOf(p) !== 'PreparingDelete'),
    pods,
    cloneSet,
    nowMs,
  );
  const chosen = limitUpdates(candidates, pods, Math.abs(diff.updateNum), diff.updateMaxUnavailable, target, input);
  const actions: PlanAction[] = [];
  const events: PlannedEvent[] = [];
  for (const pod of chosen) {
    if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] === undefined) {
      actions.push({ kind: 'MarkSpecifiedDelete', pod: podRefOf(pod), revision: target });
    }
    events.push({
      type: 'Normal',
      reason: 'SuccessfulUpdatePodReCreate',
      message: `successfully patch pod ${pod.metadata.name ?? ''} specified-delete for update(revision ${target})`,
    });
  }
  return { actions, events, explain: [`update ${chosen.length} of ${candidates.length} candidates to ${target}`] };
}

/**
 * limitUpdateIndexes (spec §11.5): every update spends budget against the target revision's unavailable
 * pods; updating an already-unavailable pod does not spend the global budget.
 */
function limitUpdates(
  candidates: readonly Pod[],
  all: readonly Pod[],
  count: number,
  maxUnavailable: number,
  target: string,
  input: UpdateInput,
): Pod[] {
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
