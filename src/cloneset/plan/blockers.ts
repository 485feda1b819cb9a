// What holds a rollout back, as reason codes a metric can carry (cloneset_rollout_blocked{reason}) and a sentence an
// engineer can act on. Read-only over the same inputs the planner used, and over the plan it returned: the pods it
// chose to update this pass tell whether the maxUnavailable budget held the others back. The same findings that
// `kubectl cloneset plan` prints (src/plugin/explain.ts), made from inside the controller.
import type { CloneSet } from '../../api/cloneset.ts';
import { inGracePeriod } from '../inplace/plan.ts';
import type { Pod } from '../../kube/types.ts';
import type { PlanAction, PlanPhase } from './actions.ts';
import type { PlannerConfig } from './index.ts';
import { isHooked } from './lifecycle.ts';
import { isPodAvailable, isPodReady, lifecycleStateOf, podCondition, revisionMatches } from './pod-predicates.ts';
import { computeReplicaDiff, replicaDiffInputFor, type ReplicaDiff } from './replica-diff.ts';

/** The `reason` label values of cloneset_rollout_blocked (docs/observability.md#metrics). */
export const BLOCK_REASONS = [
  'paused',
  'partition',
  'maxUnavailable',
  'readinessGate',
  'preDeleteHook',
  'inPlaceUpdateHook',
  'gracePeriod',
  'failedUpdate',
  'progressDeadline',
  'expectations',
] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];

/** Deliberate holds: the user asked for them, nothing is wrong (alerts leave them out). */
export const DELIBERATE_HOLDS: ReadonlySet<BlockReason> = new Set(['paused', 'partition']);

export interface Blocker {
  readonly reason: BlockReason;
  readonly message: string;
}

export interface BlockerInput {
  readonly cloneSet: CloneSet;
  /** The claimed active pods of the pass. */
  readonly pods: readonly Pod[];
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly phase: PlanPhase;
  readonly actions: readonly PlanAction[];
  readonly config: PlannerConfig;
  readonly nowMs: number;
  /** The pass's replica diff of these pods and spec (PlanResult.replicaDiff), if it built one: not built again. */
  readonly replicaDiff?: ReplicaDiff;
}

const nameOf = (p: Pod): string => p.metadata.name ?? '';
/** A few pod names: enough to start looking, never the whole fleet in one log line. */
const examples = (pods: readonly Pod[]): string => `${pods.slice(0, 3).map(nameOf).join(', ')}${pods.length > 3 ? ', …' : ''}`;

/** Pods the plan starts updating this pass (recreate or in place). */
function podsStartedUpdating(actions: readonly PlanAction[]): Set<string> {
  const out = new Set<string>();
  for (const a of actions) {
    if (a.kind === 'MarkSpecifiedDelete' || a.kind === 'MarkPodNotReadyForInPlaceUpdate' || (a.kind === 'UpdatePodInPlace' && a.step === 'update')) out.add(a.pod.name);
  }
  return out;
}

/** Every pod at the update revision and available, as many as desired: nothing to hold back. */
export function isRolledOut(cloneSet: CloneSet, pods: readonly Pod[], updateRevision: string, nowMs: number): boolean {
  const minReady = cloneSet.spec.minReadySeconds ?? 0;
  return pods.length === (cloneSet.spec.replicas ?? 1) && pods.every((p) => revisionMatches(p, updateRevision) && isPodAvailable(p, minReady, nowMs));
}

/** Why the rollout does not move on; empty when it is done or nothing holds it. */
export function rolloutBlockers(input: BlockerInput): Blocker[] {
  const { cloneSet: cs, pods, updateRevision, nowMs } = input;
  if (isRolledOut(cs, pods, updateRevision, nowMs)) return [];
  const out: Blocker[] = [];
  const name = cs.metadata.name ?? '';
  const paused = cs.spec.updateStrategy?.paused === true;
  const hooks = cs.spec.lifecycle;
  // Every per-pod finding in one walk over the pods (a pass runs this over all of them, every time).
  const outdated: Pod[] = [];
  const gated: Pod[] = [];
  const notTrueGates = new Set<string>();
  const preDelete: Pod[] = [];
  const preUpdate: Pod[] = [];
  let grace = 0;
  for (const p of pods) {
    if (!revisionMatches(p, updateRevision)) outdated.push(p);
    else if (!isPodReady(p)) {
      let waitsForGate = false;
      // Indexed over the pod's frozen array (see podCondition in pod-predicates.ts).
      const gates = p.spec.readinessGates ?? [];
      for (let i = 0; i < gates.length; i++) {
        const type = gates[i]?.conditionType;
        if (type === undefined || podCondition(p, type)?.status === 'True') continue;
        waitsForGate = true;
        notTrueGates.add(type);
      }
      if (waitsForGate) gated.push(p);
    }
    const state = lifecycleStateOf(p);
    if (state === 'PreparingDelete' && isHooked(hooks?.preDelete, p)) preDelete.push(p);
    if (state === 'PreparingUpdate' && isHooked(hooks?.inPlaceUpdate, p)) preUpdate.push(p);
    if (inGracePeriod(p)) grace++;
  }
  if (paused && outdated.length > 0)
    out.push({ reason: 'paused', message: `updateStrategy.paused is true: ${outdated.length} pods wait (resume: kubectl cloneset rollout resume ${name})` });
  // The replica diff (a pass over every pod) matters only with outdated pods: both findings below need some (the
  // pods waiting for the budget are outdated ones). A scale-up at the update revision, the commonest large pass,
  // has none.
  const diff =
    outdated.length === 0
      ? undefined
      : (input.replicaDiff ??
        computeReplicaDiff(
          replicaDiffInputFor(cs, pods, {
            currentRevision: input.currentRevision,
            updateRevision,
            gates: input.config.gates,
            excludePreparingDeleteFlag: input.config.excludePreparingDelete,
            nowMs,
            flavour: 'update',
            ...(input.config.surgeRule !== undefined ? { surgeRule: input.config.surgeRule } : {}),
          }),
        ));
  if (!paused && diff !== undefined && diff.updateNum === 0 && (cs.spec.updateStrategy?.partition ?? 0) !== 0) {
    out.push({ reason: 'partition', message: `updateStrategy.partition keeps ${outdated.length} pods on the current revision ${input.currentRevision}; lower it to go on` });
  }
  // Scaling and updating never share a pass: a scale pass says nothing about the budget. Any other pass planned the
  // update (one that starts nothing is 'idle').
  if (!paused && diff !== undefined && diff.updateNum > 0 && input.phase !== 'scale') {
    const waiting = outdated.filter((p) => lifecycleStateOf(p) !== 'PreparingDelete' && !inGracePeriod(p));
    const started = podsStartedUpdating(input.actions);
    // Held back only when the pass starts nothing: a rollout going at the pace the budget allows is not blocked.
    if (started.size === 0 && waiting.length > 0) {
      const minReady = cs.spec.minReadySeconds ?? 0;
      const unavailable = pods.filter((p) => !isPodAvailable(p, minReady, nowMs)).length;
      out.push({
        reason: 'maxUnavailable',
        message: `maxUnavailable budget of ${diff.updateMaxUnavailable} spent (${unavailable} pods unavailable): ${Math.min(diff.updateNum, waiting.length)} pods wait for others to become available`,
      });
    }
  }
  if (gated.length > 0) {
    out.push({ reason: 'readinessGate', message: `${gated.length} updated pods are not ready: readiness gate ${[...notTrueGates].join(', ')} not True (${examples(gated)})` });
  }
  if (preDelete.length > 0) out.push({ reason: 'preDeleteHook', message: `${preDelete.length} pods wait in PreparingDelete for their preDelete hook (${examples(preDelete)})` });
  if (preUpdate.length > 0)
    out.push({ reason: 'inPlaceUpdateHook', message: `${preUpdate.length} pods wait in PreparingUpdate for their inPlaceUpdate hook (${examples(preUpdate)})` });
  if (grace > 0) out.push({ reason: 'gracePeriod', message: `${grace} pods wait out inPlaceUpdateStrategy.gracePeriodSeconds` });
  for (const c of cs.status?.conditions ?? []) {
    if (c.type === 'FailedUpdate' && c.status === 'True') out.push({ reason: 'failedUpdate', message: `FailedUpdate: ${c.message ?? ''}` });
    if (c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded') {
      out.push({ reason: 'progressDeadline', message: `progressDeadlineSeconds (${cs.spec.progressDeadlineSeconds ?? 0}s) exceeded` });
    }
  }
  return out;
}
