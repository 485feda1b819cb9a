// planCloneSet: one reconcile pass as a pure function — claim, then scale OR update (never both, docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go).
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import type { FeatureGates } from '../../api/well-known.ts';
import type { Node, PersistentVolumeClaim, Pod, StorageClass } from '../../kube/types.ts';
import { inPlaceRevisions, withoutInPlaceOnlySurge, type InPlaceContext } from '../inplace/plan.ts';
import { minDelay, type Plan, type PlanAction } from './actions.ts';
import { claimPods } from './claim.ts';
import { planExtensions, type ExtensionsPlan } from './extensions.ts';
import type { InstanceIdSource } from './instance-ids.ts';
import { planPvcCleanup } from './pvc-cleanup.ts';
import { applyPvcRetention, pvcsForScaling, retainedPvcsOf } from './pvc-retention.ts';
import { planRefresh } from './refresh.ts';
import { podCondition } from './pod-predicates.ts';
import { CONDITION_INPLACE_UPDATE_READY } from '../../api/well-known.ts';
import { planScale } from './scale.ts';
import { passReplicaDiffs, type ReplicaDiff, type SurgeRule } from './replica-diff.ts';
import { planUpdate } from './update.ts';
import type { ResolvedRevisions } from './resolved-revisions.ts';

export type { ResolvedRevisions } from './resolved-revisions.ts';

/** Everything a decision needs, read from the caches only. */
export interface Snapshot {
  readonly cloneSet: CloneSet;
  /** Pods carrying the CloneSet's UID in an owner reference, active or not. */
  readonly pods: readonly Pod[];
  /** Owned PVCs without a deletionTimestamp. */
  readonly pvcs: readonly PersistentVolumeClaim[];
  /** PVCs labelled cloneset-controller.io/retained-by=<name> (docs/features.md#pvc-retention-policy); none when absent. */
  readonly retainedPvcs?: readonly PersistentVolumeClaim[];
  /** StorageClasses of the CloneSet's claims by name (docs/features.md#pvc-resize-in-place); only loaded when it asks for in-place resize. */
  readonly storageClasses?: ReadonlyMap<string, StorageClass>;
  readonly nodes: ReadonlyMap<string, Node>;
  readonly nowMs: number;
}

export interface PlannerConfig {
  readonly gates: FeatureGates;
  /** --cloneset-scaling-exclude-preparing-delete */
  readonly excludePreparingDelete: boolean;
  /** How rollouts size their surge; undefined → 'kruise' (the controller passes --cloneset-surge-rule). */
  readonly surgeRule?: SurgeRule;
  /** The API server has the `pods/<name>/resize` subresource (decided at start-up; default false). */
  readonly resizeSubresource?: boolean;
}

export interface PlanResult extends Plan {
  /** The claimed active pods the plan was made for (the status counts them). */
  readonly claimed: readonly Pod[];
  /** Conditions our opt-in extensions want in the status (docs/features.md#beyond-kruise). */
  readonly conditions?: readonly CloneSetCondition[];
  /**
   * The replica diff (Update's flavour) of `claimed` under the snapshot's CloneSet, when the pass built one: the
   * rollout blockers read it instead of walking every pod again. Absent when the pass planned with a changed
   * spec (InPlaceOnly without its maxSurge), whose diff is not the one the blockers would build.
   */
  readonly replicaDiff?: ReplicaDiff;
}

export function planCloneSet(snapshot: Snapshot, revisions: ResolvedRevisions, cfg: PlannerConfig, ids: InstanceIdSource): PlanResult {
  // InPlaceOnly never surges (docs/features.md#update-types): the whole pass works on a copy without maxSurge.
  const surge = withoutInPlaceOnlySurge(snapshot.cloneSet);
  const s: Snapshot = surge.cloneSet === snapshot.cloneSet ? snapshot : { ...snapshot, cloneSet: surge.cloneSet };
  const retained = retainedPvcsOf(s.cloneSet, s.retainedPvcs ?? []);
  const pass = planPass(s, retained, revisions, cfg, ids);
  const kept = { ...pass, actions: applyPvcRetention(s.cloneSet, pass.actions, [...s.pvcs, ...retained], s.pods) };
  const extended = withExtensions(kept, planExtensions({ ...s, retainedPvcs: retained }, revisions, pass.claimed));
  const planned = s === snapshot ? extended : withoutReplicaDiff(extended);
  return surge.event === undefined ? planned : { ...planned, events: [surge.event, ...planned.events] };
}

function withoutReplicaDiff(plan: PlanResult): PlanResult {
  const { replicaDiff: _diff, ...rest } = plan;
  return rest;
}

/** The extensions' writes go last (docs/features.md#beyond-kruise): nothing Kruise would write waits for them. */
function withExtensions(pass: PlanResult, ext: ExtensionsPlan): PlanResult {
  if (ext.actions.length === 0 && ext.events.length === 0 && ext.conditions.length === 0 && ext.explain.length === 0) return pass;
  const requeueAfterMs = minDelay(pass.requeueAfterMs, ext.requeueAfterMs);
  return {
    ...pass,
    phase: pass.phase === 'idle' && ext.actions.length > 0 ? 'claim' : pass.phase,
    actions: [...pass.actions, ...ext.actions],
    events: [...pass.events, ...ext.events],
    explain: [...pass.explain, ...ext.explain],
    ...(ext.conditions.length > 0 ? { conditions: ext.conditions } : {}),
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

function inPlaceContextOf(s: Snapshot, revisions: ResolvedRevisions, cfg: PlannerConfig): InPlaceContext {
  return {
    nowMs: s.nowMs,
    gates: cfg.gates,
    resizeSubresource: cfg.resizeSubresource ?? false,
    revisions: inPlaceRevisions(revisions),
    currentRevision: revisions.current.name,
    updateRevision: revisions.update.name,
  };
}

/**
 * The readiness writes of pods that wait for nothing else, planned while a scale-up is still creating
 * (docs/features.md#reconcile-pass, "Readiness beside a long scale-up"): the pass that creates a slow-start
 * scale-up holds its CloneSet until the last batch is answered, and a new pod cannot become Ready before the
 * controller writes its InPlaceUpdateReady condition, which Kruise's order (a pass scales *or* updates) leaves
 * to the next pass. These are exactly the `SetInPlaceUpdateReady` writes the next pass's refresh would make
 * (with PreparingNormal → Normal riding along once the pod is scheduled), for the pods whose refresh makes no
 * other write and that the in-place engine never touched (a new pod's first True); everything else still waits
 * for the next pass.
 */
export function planReadinessBesideScaleUp(s: Snapshot, revisions: ResolvedRevisions, cfg: PlannerConfig): readonly PlanAction[] {
  const surge = withoutInPlaceOnlySurge(s.cloneSet);
  const cloneSet = surge.cloneSet;
  // Only a pod whose InPlaceUpdateReady is not True can get this write: the others are not claimed and refreshed
  // again on every tick of a long scale-up (at 10 000 pods, a tick would otherwise cost a whole pass's refresh).
  const waiting = s.pods.filter((p) => podCondition(p, CONDITION_INPLACE_UPDATE_READY)?.status !== 'True');
  const { claimed } = claimPods(cloneSet, waiting);
  const refresh = planRefresh(cloneSet, claimed, { updateRevision: revisions.update.name }, inPlaceContextOf(s, revisions, cfg));
  const writesPerPod = new Map<string, number>();
  for (const a of refresh.actions) {
    if ('pod' in a) writesPerPod.set(a.pod.uid, (writesPerPod.get(a.pod.uid) ?? 0) + 1);
  }
  // A pod's first True only (unguarded): a pod the in-place engine touched waits for the next pass as before.
  return refresh.actions.filter((a) => a.kind === 'SetInPlaceUpdateReady' && a.guardResourceVersion !== true && writesPerPod.get(a.pod.uid) === 1);
}

function planPass(s: Snapshot, retained: readonly PersistentVolumeClaim[], revisions: ResolvedRevisions, cfg: PlannerConfig, ids: InstanceIdSource): PlanResult {
  const inPlace = inPlaceContextOf(s, revisions, cfg);
  // docs/features.md#reconcile-pass (Kruise pkg/controller/cloneset/cloneset_controller.go), before claiming: with PVC reuse disabled, PVCs of vanished pods go; scaling only sees the rest.
  const cleanup = planPvcCleanup(s.cloneSet, s.pods, s.pvcs);
  const { claimed, release: released } = claimPods(s.cloneSet, s.pods);
  // The cleanup writes lead every plan (they never count as scaling or updating: the phase stays the same).
  const release = [...cleanup.actions, ...released];
  if (s.cloneSet.metadata.deletionTimestamp !== undefined) {
    return { claimed, phase: cleanup.actions.length > 0 ? 'claim' : 'idle', actions: cleanup.actions, events: [], explain: [...cleanup.explain, 'CloneSet is being deleted'] };
  }
  // Scale, Update and the rollout blockers read the same diff: built once, on first use (PlanResult.replicaDiff).
  const diffs = passReplicaDiffs(s.cloneSet, claimed, {
    currentRevision: revisions.current.name,
    updateRevision: revisions.update.name,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
    nowMs: s.nowMs,
    ...(cfg.surgeRule !== undefined ? { surgeRule: cfg.surgeRule } : {}),
  });
  const withDiff = (plan: PlanResult): PlanResult => {
    const replicaDiff = diffs.built();
    return replicaDiff === undefined ? plan : { ...plan, replicaDiff };
  };
  const scale = planScale({
    cloneSet: s.cloneSet,
    pods: claimed,
    allPods: s.pods,
    pvcs: pvcsForScaling(s.cloneSet, cleanup.pvcs, retained),
    retiredPvcs: s.pvcs.filter((c) => !cleanup.pvcs.includes(c)),
    nodes: s.nodes,
    current: revisions.current,
    update: revisions.update,
    nowMs: s.nowMs,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
    ids,
    ...(cfg.surgeRule !== undefined ? { surgeRule: cfg.surgeRule } : {}),
    diffs,
  });
  if (scale.actions.length > 0) {
    return withDiff({ claimed, phase: 'scale', actions: [...release, ...scale.actions], events: scale.events, explain: [...cleanup.explain, ...scale.explain] });
  }
  const refresh = planRefresh(s.cloneSet, claimed, { updateRevision: revisions.update.name }, inPlace);
  const actions: PlanAction[] = [...release, ...refresh.actions];
  if (refresh.blocksUpdate) {
    const requeue = refresh.requeueAfterMs !== undefined ? { requeueAfterMs: refresh.requeueAfterMs } : {};
    return withDiff({ claimed, phase: 'update', actions, events: scale.events, explain: [...cleanup.explain, ...scale.explain, ...refresh.explain, 'refresh only'], ...requeue });
  }
  const update = planUpdate({
    cloneSet: s.cloneSet,
    pods: claimed,
    currentRevision: revisions.current.name,
    updateRevision: revisions.update.name,
    nowMs: s.nowMs,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
    ...(cfg.surgeRule !== undefined ? { surgeRule: cfg.surgeRule } : {}),
    inPlace,
    diffs,
  });
  const all = [...actions, ...update.actions];
  const requeueAfterMs = minDelay(refresh.requeueAfterMs, update.requeueAfterMs);
  return withDiff({
    claimed,
    phase: all.length > 0 ? 'update' : release.length > 0 ? 'claim' : 'idle',
    actions: all,
    events: [...scale.events, ...update.events],
    explain: [...cleanup.explain, ...scale.explain, ...refresh.explain, ...update.explain],
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  });
}
