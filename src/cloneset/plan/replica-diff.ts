// The replica diff (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go, Kruise `calculateDiffsWithExpectation`): from the desired numbers and the
// facts about the current pods, how many pods to create / delete / update and with which budgets. Both
// Scale and Update start from it. The arithmetic is deliberately a line-by-line port (conformance: docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils_test.go,
// 80 cases) — including its asymmetries — because users tune their rollouts against Kruise's numbers.
import type { CloneSet, IntOrString } from '../../api/cloneset.ts';
import { DEFAULT_MAX_UNAVAILABLE, type FeatureGates, type LifecycleState } from '../../api/well-known.ts';
import { hasRollingUpdate } from '../../api/conversion.ts';
import type { Pod } from '../../kube/types.ts';
import { partitionAbs, scaledValue } from './int-or-percent.ts';
import { isPodAvailable, isSpecifiedDelete, lifecycleStateOf, revisionMatches } from './pod-predicates.ts';

/** What the diff needs to know about one claimed active pod. */
export interface PodFacts {
  /** On the update revision (see {@link isUpdatedPod} for the two flavours). */
  readonly isUpdate: boolean;
  readonly lifecycleState: LifecycleState | '';
  /** docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go) `available(pod)` (lifecycle unset/Normal and ready for minReadySeconds). */
  readonly available: boolean;
  /** Label `apps.kruise.io/specified-delete` or listed in `scaleStrategy.podsToDelete`. */
  readonly specifiedDelete: boolean;
}

export interface ReplicaDiffInput {
  readonly replicas: number;
  readonly partition?: IntOrString;
  readonly maxSurge?: IntOrString;
  /** undefined → "20%". */
  readonly maxUnavailable?: IntOrString;
  /** v1alpha1 always has its rolling-update fields; false models OnDelete without rollingUpdate (v1beta1). */
  readonly hasRollingUpdate: boolean;
  /** updateStrategy.paused: forces maxSurge to 0 (which also flips maxUnavailable's rounding). */
  readonly paused: boolean;
  /** scaleStrategy.maxUnavailable; undefined → unlimited. */
  readonly scaleMaxUnavailable?: IntOrString;
  /** PreparingDelete pods are not counted toward replicas (flag or CloneSet label). */
  readonly excludePreparingDelete: boolean;
  /** Feature gate CloneSetPartitionRollback. */
  readonly partitionRollbackGate: boolean;
  /** currentRevision === updateRevision. */
  readonly currentIsUpdate: boolean;
  readonly pods: readonly PodFacts[];
  /** How the update surge and update count are sized; undefined → 'kruise' (see {@link SurgeRule}). */
  readonly surgeRule?: SurgeRule;
}

/**
 * How a rollout sizes its surge (and its update count) while pods move from one revision to the other.
 *
 * - `kruise`: Kruise's arithmetic, line by line (the 80 conformance cases of docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils_test.go). Both numbers are
 *   `min(surplus on the side pods leave, shortfall on the side they go to)`. The surge pods already created
 *   sit on the arriving side and shrink its shortfall, but the old pods they will replace are still there:
 *   once fewer than about 2 × maxSurge old pods remain, the surge decays to about half of them
 *   (10 → 9 → 5 → 3 → 2 → 1 for 50 pods at maxSurge 20 %), and so does the number of pods updated per pass.
 *   See https://github.com/openkruise/kruise/issues/1442 (198 pods at maxSurge 25 %: useSurge 50 → 22 near
 *   the end, closed as wontfix) and https://github.com/openkruise/kruise/issues/2491 (the decay, and a
 *   V1→V2→V3 rollout 7–8× slower; attempted fix kruise#2494).
 * - `sustained` (our default, beyond Kruise): while the arriving side is still short of pods, both numbers
 *   are the surplus on the leaving side — the pods that really still have to be replaced — so the surge
 *   stays at full maxSurge until fewer than maxSurge old pods remain, and then equals the old pods left.
 *   Everything else is Kruise's: the surge never exceeds maxSurge, deletions are still bounded by
 *   `deleteReadyLimit` (maxUnavailable), and once the arriving side is complete the surplus old pods are
 *   scaled in as Kruise does. Both rules agree without surge (maxSurge 0 or paused) and whenever there are
 *   no more active pods than replicas, so they differ only in the middle of a surge rollout: 3 of the 80
 *   conformance cases (27, 31, 32; pinned in replica-diff.test.ts).
 */
export type SurgeRule = 'kruise' | 'sustained';

export interface ReplicaDiff {
  /** Pods missing: create this many (at most `scaleUpLimit` of them in this pass). */
  readonly scaleUpNum: number;
  /** How many of the pods to create belong to the current (old) revision; may exceed scaleUpNum. */
  readonly scaleUpNumOldRevision: number;
  /** Creations allowed now by scaleStrategy.maxUnavailable (≤ scaleUpNum). */
  readonly scaleUpLimit: number;
  /** Surplus pods to delete, beyond those already specified for deletion. */
  readonly scaleDownNum: number;
  /** How many of the surplus are old-revision pods; may exceed scaleDownNum. */
  readonly scaleDownNumOldRevision: number;
  /** How many ready pods may be deleted now (deleting not-ready pods is free), from maxUnavailable. */
  readonly deleteReadyLimit: number;
  /** Extra pods temporarily wanted above replicas (≤ maxSurge). */
  readonly useSurge: number;
  /** The part of useSurge that should be at the old revision. */
  readonly useSurgeOldRevision: number;
  /** > 0: move this many pods to the update revision; < 0: roll this many back to the current one. */
  readonly updateNum: number;
  /** Budget of unavailable pods for updating (maxUnavailable + surplus pods); may be negative. */
  readonly updateMaxUnavailable: number;
}

/** The resolved absolute numbers the diff works with (useful for logs and explanations). */
export interface ResolvedLimits {
  readonly partition: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
  readonly scaleMaxUnavailable: number;
}

const INT32_MAX = 2147483647;

/** docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go): percentages resolved against replicas, with Kruise's rounding rules (docs/features.md#maxunavailable; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go). */
export function resolveLimits(input: ReplicaDiffInput): ResolvedLimits {
  const r = input.replicas;
  let partition = 0;
  let maxSurge = 0;
  let maxUnavailable: number;
  if (input.hasRollingUpdate) {
    partition = partitionAbs(input.partition, r);
    maxSurge = input.maxSurge !== undefined && !input.paused ? scaledValue(input.maxSurge, r, true) : 0;
    // Rounds DOWN when surge is in use: surge pods already cover the rounding slack.
    maxUnavailable = scaledValue(input.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, r, maxSurge === 0);
  } else {
    maxUnavailable = scaledValue(DEFAULT_MAX_UNAVAILABLE, r, false);
  }
  const scaleMaxUnavailable = scaledValue(input.scaleMaxUnavailable ?? INT32_MAX, r, true);
  return { partition, maxSurge, maxUnavailable, scaleMaxUnavailable };
}

/** Per-revision counters; index 0 = old revision, 1 = update revision. */
type Pair = [number, number];

/** docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go): computes the scale and update numbers for one reconcile pass. */
export function computeReplicaDiff(input: ReplicaDiffInput): ReplicaDiff {
  const R = input.replicas;
  const { partition: P, maxSurge: MS, maxUnavailable: MU, scaleMaxUnavailable: SMU } = resolveLimits(input);
  // Without surge (maxSurge 0, or paused) the rules are the same: Kruise's arithmetic.
  const sustained = input.surgeRule === 'sustained' && MS > 0;

  const count: Pair = [0, 0];
  const active: Pair = [0, 0];
  const preDel: Pair = [0, 0];
  const toDel: Pair = [0, 0];
  const unavail: Pair = [0, 0];
  for (const pod of input.pods) {
    const s = pod.isUpdate ? 1 : 0;
    count[s]++;
    if (pod.lifecycleState === 'PreparingDelete') {
      preDel[s]++;
      continue;
    }
    active[s]++;
    // A specified-delete pod is on its way out: it counts neither as available nor as unavailable.
    if (pod.specifiedDelete) toDel[s]++;
    else if (!(pod.available && (pod.lifecycleState === '' || pod.lifecycleState === 'Normal'))) unavail[s]++;
  }

  let updOld = active[0] - P;
  let updNew = active[1] - (R - P);
  const totalUnavail = preDel[0] + preDel[1] + unavail[0] + unavail[1];
  // Without rollback, pods only ever move towards the update revision.
  if (input.currentIsUpdate || !input.partitionRollbackGate) {
    updOld = Math.max(updOld, 0);
    updNew = Math.min(updNew, 0);
  }

  let useSurge = 0;
  let useSurgeOld = 0;
  if (MS > 0) {
    // Surge to replace specified-delete pods without exceeding maxUnavailable ...
    const td = toDel[0] + toDel[1];
    const scaleSurge = td > 0 ? Math.min(Math.max(totalUnavail + td - MU, 0), td) : 0;
    const scaleOldSurge = scaleSurge > toDel[1] ? scaleSurge - toDel[1] : 0;
    // ... or to move pods between revisions (one side has too many, the other too few).
    let updSurge = 0;
    let updOldSurge = 0;
    if (sustained && updOld > 0 && updNew < 0) {
      updSurge = updOld; // forward: every old pod above the partition still needs a replacement
    } else if (sustained && updOld < 0 && updNew > 0) {
      updSurge = updNew; // rollback: every update-revision pod above replicas − partition goes back
      updOldSurge = updSurge;
    } else if ((updOld < 0 && updNew > 0) || (updOld > 0 && updNew < 0)) {
      if (Math.abs(updOld) <= Math.abs(updNew)) {
        updSurge = Math.abs(updOld);
        if (updOld < 0) updOldSurge = updSurge;
      } else {
        updSurge = Math.abs(updNew);
        if (updNew > 0) updOldSurge = updSurge;
      }
    }
    // Scale and update never run in the same pass, so the larger need wins.
    if (scaleSurge >= updSurge) {
      useSurge = Math.min(MS, scaleSurge);
      useSurgeOld = Math.min(useSurge, scaleOldSurge);
    } else {
      useSurge = Math.min(MS, updSurge);
      useSurgeOld = Math.min(useSurge, updOldSurge);
    }
  }

  let curTotal = input.pods.length;
  let curOld = count[0];
  if (input.excludePreparingDelete) {
    curTotal -= preDel[0] + preDel[1];
    curOld -= preDel[0];
  }
  const expTotal = R + useSurge;
  const expOld = P + useSurgeOld;

  let scaleUpNum = 0;
  let scaleUpNumOldRevision = 0;
  let scaleUpLimit = 0;
  if (expTotal - curTotal > 0) {
    scaleUpNum = expTotal - curTotal;
    scaleUpNumOldRevision = Math.max(expOld - curOld, 0);
    scaleUpLimit = Math.min(scaleUpNum, Math.max(SMU - totalUnavail, 0));
  }
  let scaleDownNum = 0;
  let scaleDownNumOldRevision = 0;
  // Pods already specified for deletion are leaving anyway: they are not part of the surplus.
  if (curTotal - toDel[0] - toDel[1] - expTotal > 0) {
    scaleDownNum = curTotal - toDel[0] - toDel[1] - expTotal;
    scaleDownNumOldRevision = Math.max(curOld - toDel[0] - expOld, 0);
  }
  let deleteReadyLimit = 0;
  if (toDel[0] > 0 || toDel[1] > 0 || scaleDownNum > 0) {
    // Kruise uses len(pods) here (PreparingDelete pods included) even when they are excluded above.
    deleteReadyLimit = Math.max(MU + (input.pods.length - R) - totalUnavail, 0);
  }
  let updateNum = Math.abs(updOld) <= Math.abs(updNew) ? updOld : -updNew;
  // Sustained rule: while one side is short, move every pod of the other side's surplus (see SurgeRule);
  // limitUpdates and deleteReadyLimit still bound what actually happens to maxUnavailable.
  if (sustained && updOld > 0 && updNew < 0) updateNum = updOld;
  else if (sustained && updOld < 0 && updNew > 0) updateNum = -updNew;
  const updateMaxUnavailable = updateNum !== 0 ? MU + input.pods.length - R : 0;

  return {
    scaleUpNum,
    scaleUpNumOldRevision,
    scaleUpLimit,
    scaleDownNum,
    scaleDownNumOldRevision,
    deleteReadyLimit,
    useSurge,
    useSurgeOldRevision: useSurgeOld,
    updateNum: updateNum === 0 ? 0 : updateNum,
    updateMaxUnavailable,
  };
}

export interface ReplicaDiffContext {
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly gates: FeatureGates;
  /** The `--cloneset-scaling-exclude-preparing-delete` command-line flag. */
  readonly excludePreparingDeleteFlag: boolean;
  readonly nowMs: number;
  /** Which `isUpdate` to use (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go): Scale counts PreparingUpdate pods as updated under a gate. */
  readonly flavour: 'scale' | 'update';
  /** undefined → 'kruise'. */
  readonly surgeRule?: SurgeRule;
}

/**
 * docs/features.md#scaling (Kruise pkg/controller/cloneset/sync/cloneset_sync_utils.go) `isUpdate(pod)`: matches the update revision; in the `scale` flavour, a `PreparingUpdate` pod
 * also counts as updated when the PreparingUpdateAsUpdate gate is on.
 */
export function isUpdatedPod(pod: Pod, updateRevision: string, flavour: 'scale' | 'update', gates: FeatureGates): boolean {
  if (flavour === 'scale' && gates.PreparingUpdateAsUpdate && lifecycleStateOf(pod) === 'PreparingUpdate') return true;
  return revisionMatches(pod, updateRevision);
}

/** Builds the diff input for a v1alpha1 CloneSet and its claimed active pods. */
export function replicaDiffInputFor(cloneSet: CloneSet, pods: readonly Pod[], ctx: ReplicaDiffContext): ReplicaDiffInput {
  const spec = cloneSet.spec;
  const us = spec.updateStrategy ?? {};
  const podsToDelete = spec.scaleStrategy?.podsToDelete;
  const minReadySeconds = spec.minReadySeconds ?? 0;
  const scaleMaxUnavailable = spec.scaleStrategy?.maxUnavailable;
  return {
    // The defaulting webhook sets replicas to 1 when omitted (docs/features.md#admission; Kruise apis/apps/defaults/v1alpha1.go).
    replicas: spec.replicas ?? 1,
    ...(us.partition !== undefined ? { partition: us.partition } : {}),
    ...(us.maxSurge !== undefined ? { maxSurge: us.maxSurge } : {}),
    ...(us.maxUnavailable !== undefined ? { maxUnavailable: us.maxUnavailable } : {}),
    ...(scaleMaxUnavailable !== undefined ? { scaleMaxUnavailable } : {}),
    hasRollingUpdate: hasRollingUpdate(cloneSet),
    paused: us.paused === true,
    // The v1alpha1 label reaches us as this field: conversion turns it into excludePreparingDelete (docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1alpha1/cloneset_conversion.go).
    excludePreparingDelete: ctx.excludePreparingDeleteFlag || spec.scaleStrategy?.excludePreparingDelete === true,
    partitionRollbackGate: ctx.gates.CloneSetPartitionRollback,
    currentIsUpdate: ctx.currentRevision === ctx.updateRevision,
    ...(ctx.surgeRule !== undefined ? { surgeRule: ctx.surgeRule } : {}),
    pods: pods.map((pod) => ({
      isUpdate: isUpdatedPod(pod, ctx.updateRevision, ctx.flavour, ctx.gates),
      lifecycleState: lifecycleStateOf(pod),
      available: isPodAvailable(pod, minReadySeconds, ctx.nowMs),
      specifiedDelete: isSpecifiedDelete(pod, podsToDelete),
    })),
  };
}

/**
 * The replica diffs of one pass, each built on first use and then kept: Scale reads the `scale` flavour, Update
 * and the rollout blockers the `update` one, and each build walks every pod. Without the PreparingUpdateAsUpdate
 * gate the two flavours are the same diff ({@link isUpdatedPod}), built once.
 */
export interface PassReplicaDiffs {
  scale(): ReplicaDiff;
  update(): ReplicaDiff;
  /** The `update` diff if this pass has built it (by asking either flavour without the gate), else undefined. */
  built(): ReplicaDiff | undefined;
}

export function passReplicaDiffs(cloneSet: CloneSet, pods: readonly Pod[], ctx: Omit<ReplicaDiffContext, 'flavour'>): PassReplicaDiffs {
  let update: ReplicaDiff | undefined;
  let scale: ReplicaDiff | undefined;
  const updateDiff = (): ReplicaDiff => {
    update ??= computeReplicaDiff(replicaDiffInputFor(cloneSet, pods, { ...ctx, flavour: 'update' }));
    return update;
  };
  return {
    update: updateDiff,
    scale: () => {
      scale ??= ctx.gates.PreparingUpdateAsUpdate ? computeReplicaDiff(replicaDiffInputFor(cloneSet, pods, { ...ctx, flavour: 'scale' })) : updateDiff();
      return scale;
    },
    built: () => update,
  };
}
