// planCloneSet: one reconcile pass as a pure function — claim, then scale OR update (never both, spec §6).
import type { CloneSet } from '../../api/cloneset.ts';
import type { FeatureGates } from '../../api/well-known.ts';
import type { Node, PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import type { Plan, PlanAction } from './actions.ts';
import { claimPods } from './claim.ts';
import type { InstanceIdSource } from './instance-ids.ts';
import { planRefresh } from './refresh.ts';
import { planScale, type RevisionTemplate } from './scale.ts';
import { planUpdate } from './update.ts';

/** Everything a decision needs, read from the caches only. */
export interface Snapshot {
  readonly cloneSet: CloneSet;
  /** Pods carrying the CloneSet's UID in an owner reference, active or not. */
  readonly pods: readonly Pod[];
  /** Owned PVCs without a deletionTimestamp. */
  readonly pvcs: readonly PersistentVolumeClaim[];
  readonly nodes: ReadonlyMap<string, Node>;
  readonly nowMs: number;
}

export interface ResolvedRevisions {
  readonly current: RevisionTemplate;
  readonly update: RevisionTemplate;
  readonly collisionCount: number;
}

export interface PlannerConfig {
  readonly gates: FeatureGates;
  /** --cloneset-scaling-exclude-preparing-delete */
  readonly excludePreparingDelete: boolean;
}

export interface PlanResult extends Plan {
  /** The claimed active pods the plan was made for (the status counts them). */
  readonly claimed: readonly Pod[];
}

export function planCloneSet(s: Snapshot, revisions: ResolvedRevisions, cfg: PlannerConfig, ids: InstanceIdSource): PlanResult {
  const { claimed, release } = claimPods(s.cloneSet, s.pods);
  const base = { claimed, explain: [] as string[] };
  if (s.cloneSet.metadata.deletionTimestamp !== undefined) {
    return { ...base, phase: 'idle', actions: [], events: [], explain: ['CloneSet is being deleted'] };
  }
  const scale = planScale({
    cloneSet: s.cloneSet,
    pods: claimed,
    allPods: s.pods,
    pvcs: s.pvcs,
    nodes: s.nodes,
    current: revisions.current,
    update: revisions.update,
    nowMs: s.nowMs,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
    ids,
  });
  if (scale.actions.length > 0) {
    return { claimed, phase: 'scale', actions: [...release, ...scale.actions], events: scale.events, explain: scale.explain };
  }
  const refresh = planRefresh(s.cloneSet, claimed);
  const actions: PlanAction[] = [...release, ...refresh.actions];
  if (refresh.blocksUpdate) {
    return { claimed, phase: 'update', actions, events: scale.events, explain: [...scale.explain, 'refresh only'] };
  }
  const update = planUpdate({
    cloneSet: s.cloneSet,
    pods: claimed,
    currentRevision: revisions.current.name,
    updateRevision: revisions.update.name,
    nowMs: s.nowMs,
    gates: cfg.gates,
    excludePreparingDeleteFlag: cfg.excludePreparingDelete,
  });
  const all = [...actions, ...update.actions];
  return {
    claimed,
    phase: all.length > 0 ? 'update' : release.length > 0 ? 'claim' : 'idle',
    actions: all,
    events: [...scale.events, ...update.events],
    explain: [...scale.explain, ...update.explain],
  };
}
