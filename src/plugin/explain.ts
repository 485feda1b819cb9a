// The "why" of a plan, pure and next to the planner rather than inside it: the same inputs planUpdate uses
// (replica diff, candidate order, maxUnavailable budget) recomputed read-only to say which pods update next and
// why those, what blocks the rest, and each planned write in words. Nothing here changes a decision; a test
// keeps the chosen pods of this explanation equal to the planner's own.
import { describeExtensionAction } from '../cloneset/plan/extensions.ts';
import type { CloneSet } from '../api/cloneset.ts';
import { ANNOTATION_POD_DELETION_COST, LABEL_SPECIFIED_DELETE } from '../api/well-known.ts';
import { inGracePeriod } from '../cloneset/inplace/plan.ts';
import type { PlanAction } from '../cloneset/plan/actions.ts';
import type { PlannerConfig, ResolvedRevisions, Snapshot } from '../cloneset/plan/index.ts';
import { isHooked } from '../cloneset/plan/lifecycle.ts';
import { isPodAvailable, isPodReady, lifecycleStateOf, podCondition, revisionMatches, timestampMs } from '../cloneset/plan/pod-predicates.ts';
import { computeReplicaDiff, replicaDiffInputFor, resolveLimits, type ReplicaDiff } from '../cloneset/plan/replica-diff.ts';
import { orderUpdateCandidates } from '../cloneset/plan/update-order.ts';
import type { Pod } from '../kube/types.ts';

export interface Candidate {
  readonly pod: string;
  /** Chosen for this pass (within the budget). */
  readonly next: boolean;
  /** The facts the update order compares, most significant first. */
  readonly why: string;
}

export interface Explanation {
  readonly limits: { readonly partition: number; readonly maxUnavailable: number; readonly maxSurge: number; readonly scaleMaxUnavailable?: number };
  readonly diff: ReplicaDiff;
  readonly unavailable: readonly string[];
  readonly candidates: readonly Candidate[];
  readonly blockers: readonly string[];
}

const nameOf = (p: Pod): string => p.metadata.name ?? '';

/** Describes one planned write. */
export function describeAction(a: PlanAction): string {
  switch (a.kind) {
    case 'CreatePods':
      return a.pods
        .map(
          (p) =>
            `create pod ${p.pod.metadata.name ?? p.pod.metadata.generateName ?? ''} at revision ${p.revision}${p.pvcs.length > 0 ? ` with PVCs ${p.pvcs.map((c) => c.metadata.name ?? '').join(', ')}` : ''}`,
        )
        .join('\n');
    case 'DeletePods':
      return a.pods
        .map(
          (p) =>
            `delete pod ${p.pod.name} (${p.cause === 'ScaleIn' ? 'scale in' : 'specified for deletion'})${p.pvcNames.length > 0 ? ` and its PVCs ${p.pvcNames.join(', ')}` : ''}`,
        )
        .join('\n');
    case 'AdoptPod':
      return `adopt pod ${a.pod.name}: add the CloneSet's controller owner reference`;
    case 'ReleasePod':
      return `release pod ${a.pod.name} (it no longer matches the selector): remove the owner reference`;
    case 'PatchPodLifecycle':
      return `set lifecycle state of pod ${a.pod.name} to ${a.state}`;
    case 'PatchPodConditions':
      return `set conditions of pod ${a.pod.name}: ${a.conditions.map((c) => `${c.type}=${c.status}`).join(', ')}`;
    case 'PatchPodTemplateHash':
      return `set pod-template-hash of pod ${a.pod.name} to ${a.hash}`;
    case 'SetInPlaceUpdateReady':
      return `mark pod ${a.pod.name} ready (InPlaceUpdateReady=True)${a.lifecycle !== undefined ? ` and set its lifecycle state to ${a.lifecycle.state}` : ''}`;
    case 'MarkPodNotReadyForInPlaceUpdate':
      return `mark pod ${a.pod.name} not ready (InPlaceUpdateReady=False) before updating it in place to ${a.revision}`;
    case 'UpdatePodInPlace': {
      const step = {
        update: 'update in place',
        finishGrace: 'apply the in-place update after its grace period',
        nextBatch: 'update the next container batch in place',
        dropGrace: 'drop the stale grace period',
      }[a.step];
      return `${step}: pod ${a.pod.name} → ${a.revision}${a.resize !== undefined ? ' (with a resize)' : ''}`;
    }
    case 'FailUpdate':
      return `fail the update pass: ${a.message}`;
    case 'MarkSpecifiedDelete':
      return `label pod ${a.pod.name} ${LABEL_SPECIFIED_DELETE}: it will be deleted and recreated at ${a.revision}`;
    case 'ReownPvc':
      return `hand PVC ${a.pvc.name} over ${a.podRef !== undefined ? `to pod ${a.podRef.name}` : 'to nobody'} (PVC reuse disabled)`;
    case 'DeletePvc':
      return `delete PVC ${a.pvc.name}: no pod has its instance id (PVC reuse disabled)`;
    case 'CreateRevision':
      return `create ControllerRevision ${a.revision.metadata.name ?? ''} for the new template`;
    case 'UpdateRevision':
      return `renumber ControllerRevision ${a.revision.metadata.name ?? ''} to ${a.revision.revision} (rollback to its template)`;
    case 'TruncateHistory':
      return `delete ControllerRevisions ${a.revisions.map((r) => r.name).join(', ')} (beyond revisionHistoryLimit, no pod uses them)`;
    case 'UpdateStatus':
      return 'write the status';
    case 'TruncatePodsToDelete':
      return `shorten scaleStrategy.podsToDelete to [${a.kept.join(', ')}]`;
    case 'CreateImagePullJob':
      return `create ImagePullJob ${a.job.metadata.name ?? ''} for image ${a.job.spec.image}`;
    case 'LabelRevision':
      return `label ControllerRevision ${a.revision} ${a.label}`;
    case 'DeleteImagePullJobs':
      return `delete the CloneSet's ImagePullJobs (revision ${a.revision} rolled out)`;
    default:
      return describeExtensionAction(a);
  }
}

/** The pods a plan updates next (in-place or recreate), in plan order. */
export function podsUpdatedBy(actions: readonly PlanAction[]): string[] {
  const out: string[] = [];
  for (const a of actions) {
    const pod = a.kind === 'MarkSpecifiedDelete' || a.kind === 'MarkPodNotReadyForInPlaceUpdate' || (a.kind === 'UpdatePodInPlace' && a.step === 'update') ? a.pod.name : undefined;
    if (pod !== undefined && !out.includes(pod)) out.push(pod);
  }
  return out;
}

function orderFacts(pod: Pod, nowMs: number, cs: CloneSet): string {
  const facts: string[] = [];
  if (lifecycleStateOf(pod) === 'PreparingUpdate') facts.push('PreparingUpdate (hooked updates go first)');
  if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined) facts.push('already marked specified-delete (an update in flight)');
  const weights = cs.spec.updateStrategy?.priorityStrategy?.weightPriority;
  if (weights !== undefined && weights.length > 0) {
    const labels = pod.metadata.labels ?? {};
    const w = weights.filter((t) => Object.entries(t.matchSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)).reduce((n, t) => n + t.weight, 0);
    facts.push(`priority weight ${w}`);
  }
  if (pod.spec.nodeName === undefined || pod.spec.nodeName === '') facts.push('not scheduled');
  else if (pod.status?.phase !== 'Running') facts.push(`phase ${pod.status?.phase ?? 'Pending'}`);
  if (!isPodReady(pod)) facts.push('not ready');
  else {
    const since = timestampMs(podCondition(pod, 'Ready')?.lastTransitionTime);
    if (since !== undefined) facts.push(`ready for ${Math.max(0, Math.round((nowMs - since) / 1000))}s`);
  }
  const restarts = (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  if (restarts > 0) facts.push(`${restarts} restarts`);
  facts.push(`created ${pod.metadata.creationTimestamp ?? '?'}`);
  return facts.join(', ');
}

/**
 * The facts the scale-in order compares (docs/features.md#deletion-order; Kruise pkg/controller/cloneset/sync/cloneset_scale.go: old revision first, then unscheduled, Pending, unavailable,
 * not ready, lower pod-deletion-cost, more pods on its node, most recently ready, most restarts, newest).
 */
export function deletionFacts(pod: Pod, updateRevision: string, nowMs: number): string {
  const facts: string[] = [revisionMatches(pod, updateRevision) ? 'update revision' : 'old revision'];
  if (pod.spec.nodeName === undefined || pod.spec.nodeName === '') facts.push('not scheduled');
  else if (pod.status?.phase !== 'Running') facts.push(`phase ${pod.status?.phase ?? 'Pending'}`);
  if (!isPodReady(pod)) facts.push('not ready');
  else {
    const since = timestampMs(podCondition(pod, 'Ready')?.lastTransitionTime);
    if (since !== undefined) facts.push(`ready for ${Math.max(0, Math.round((nowMs - since) / 1000))}s`);
  }
  const cost = pod.metadata.annotations?.[ANNOTATION_POD_DELETION_COST];
  if (cost !== undefined) facts.push(`deletion cost ${cost}`);
  const restarts = (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  if (restarts > 0) facts.push(`${restarts} restarts`);
  facts.push(`created ${pod.metadata.creationTimestamp ?? '?'}`);
  return facts.join(', ');
}

export function explainUpdate(s: Snapshot, revisions: ResolvedRevisions, cfg: PlannerConfig, claimed: readonly Pod[], actions: readonly PlanAction[]): Explanation {
  const cs = s.cloneSet;
  const input = replicaDiffInputFor(cs, claimed, {
    currentRevision: revisions.current.name,
    updateRevision: revisions.update.name,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
    nowMs: s.nowMs,
    flavour: 'update',
    ...(cfg.surgeRule !== undefined ? { surgeRule: cfg.surgeRule } : {}),
  });
  const limits = resolveLimits(input);
  const diff = computeReplicaDiff(input);
  const minReady = cs.spec.minReadySeconds ?? 0;
  const unavailable = claimed.filter((p) => !isPodAvailable(p, minReady, s.nowMs));
  const waiting = claimed.filter((p) => revisionMatches(p, revisions.update.name) === diff.updateNum < 0);
  const excluded = waiting.filter((p) => lifecycleStateOf(p) === 'PreparingDelete' || inGracePeriod(p));
  const ordered = orderUpdateCandidates(
    waiting.filter((p) => !excluded.includes(p)),
    claimed,
    cs,
    s.nowMs,
  );
  const marked = (p: Pod): boolean => p.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined;
  const candidates = [...ordered.filter(marked), ...ordered.filter((p) => !marked(p))];
  const next = new Set(podsUpdatedBy(actions));
  const blockers: string[] = [];
  const paused = cs.spec.updateStrategy?.paused === true;
  if (paused) blockers.push(`paused: updateStrategy.paused is true, no pod is updated (resume: kubectl cloneset rollout resume ${cs.metadata.name ?? ''})`);
  const updatedCount = claimed.filter((p) => revisionMatches(p, revisions.update.name)).length;
  if (!paused && diff.updateNum === 0 && limits.partition > 0 && updatedCount < claimed.length) {
    blockers.push(
      `partition: ${limits.partition} pods stay on the current revision ${revisions.current.name} (${updatedCount} of ${claimed.length} updated, as the partition asks); lower spec.updateStrategy.partition to go on`,
    );
  }
  if (!paused && diff.updateNum !== 0) {
    const want = Math.min(Math.abs(diff.updateNum), candidates.length);
    if (next.size < want) {
      const names = unavailable.map(nameOf);
      const taken = next.size > 0 ? ` and ${next.size} taken down by this pass` : '';
      blockers.push(
        `maxUnavailable: a budget of ${diff.updateMaxUnavailable} unavailable pods (maxUnavailable ${limits.maxUnavailable}${limits.maxSurge > 0 ? ' + surge pods' : ''}); ${unavailable.length} unavailable now${names.length > 0 ? ` (${names.join(', ')})` : ''}${taken}: ${want - next.size} more pod(s) wait until pods become available${minReady > 0 ? ` (minReadySeconds ${minReady})` : ''}`,
      );
    }
    for (const p of excluded) {
      blockers.push(
        inGracePeriod(p)
          ? `grace period: pod ${nameOf(p)} waits out inPlaceUpdateStrategy.gracePeriodSeconds before its in-place update is applied`
          : `pod ${nameOf(p)} is PreparingDelete: it is not updated`,
      );
    }
  }
  const hooks = cs.spec.lifecycle;
  for (const p of claimed) {
    const state = lifecycleStateOf(p);
    if (state === 'PreparingDelete' && isHooked(hooks?.preDelete, p))
      blockers.push(`lifecycle hook preDelete: pod ${nameOf(p)} waits in PreparingDelete until its hook labels/finalizers are removed`);
    if (state === 'PreparingUpdate' && isHooked(hooks?.inPlaceUpdate, p))
      blockers.push(`lifecycle hook inPlaceUpdate: pod ${nameOf(p)} waits in PreparingUpdate until its hook labels/finalizers are removed`);
    if (state === 'PreparingNormal' && isHooked(hooks?.preNormal, p)) blockers.push(`lifecycle hook preNormal: pod ${nameOf(p)} waits in PreparingNormal`);
  }
  if (diff.scaleUpNum > diff.scaleUpLimit) blockers.push(`scaleStrategy.maxUnavailable: ${diff.scaleUpNum} pods are missing, ${diff.scaleUpLimit} may be created now`);
  for (const c of cs.status?.conditions ?? []) {
    if ((c.type === 'FailedUpdate' || c.type === 'FailedScale') && c.status === 'True') blockers.push(`${c.type} condition: ${c.message ?? ''}`);
  }
  return {
    limits: {
      partition: limits.partition,
      maxUnavailable: limits.maxUnavailable,
      maxSurge: limits.maxSurge,
      ...(input.scaleMaxUnavailable !== undefined ? { scaleMaxUnavailable: limits.scaleMaxUnavailable } : {}),
    },
    diff,
    unavailable: unavailable.map(nameOf),
    // Without an update to make (done, or held by the partition) no pod is waiting for one.
    candidates: (diff.updateNum === 0 ? [] : candidates).map((p) => ({ pod: nameOf(p), next: next.has(nameOf(p)), why: orderFacts(p, s.nowMs, cs) })),
    blockers,
  };
}

/** What a plan made from outside the controller cannot know. */
export const UNKNOWABLE: readonly string[] = [
  'expectations: the controller waits for the creations/deletions it issued and for its own pod writes to show up in its cache before it plans again; they live in its memory, so a pass may be delayed beyond what is shown here',
  'cache lag: the controller plans from its informer cache, which may be a moment behind this snapshot',
  'names of new pods: instance ids are drawn at random when the controller creates them',
];
