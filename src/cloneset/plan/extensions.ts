// Our opt-in extensions (docs/features.md#beyond-kruise) added to a pass's plan: each feature decides in its own
// module; without their annotations each returns nothing and the plan is exactly Kruise's.
// Their writes come after the pass's scale or update writes: a replacement pod is never held back by them.
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import type { PersistentVolumeClaim, Pod, StorageClass } from '../../kube/types.ts';
import { minDelay, type ExtensionAction, type PlanAction, type PlannedEvent } from './actions.ts';
import { planInactivePodCleanup } from './inactive-pods.ts';
import { planProgressDeadlineAction } from './progress-deadline-action.ts';
import { planPvcResize } from './pvc-resize.ts';
import { planPvcRetention } from './pvc-retention.ts';
import type { ResolvedRevisions } from './resolved-revisions.ts';

export interface ExtensionsPlan {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  /** Conditions the status must carry (set by type, as the Progressing condition is). */
  readonly conditions: readonly CloneSetCondition[];
  readonly requeueAfterMs?: number;
  readonly explain: readonly string[];
}

/** What the extensions read of a pass's snapshot (plan/index.ts Snapshot). */
export interface ExtensionsInput {
  readonly cloneSet: CloneSet;
  /** Every pod with the CloneSet's UID in an owner reference, active or not. */
  readonly pods: readonly Pod[];
  /** Owned PVCs without a deletionTimestamp. */
  readonly pvcs: readonly PersistentVolumeClaim[];
  /** This CloneSet's retained PVCs (pvc-retention.ts retainedPvcsOf). */
  readonly retainedPvcs?: readonly PersistentVolumeClaim[];
  /** StorageClasses by name (pvc-resize.ts reads allowVolumeExpansion). */
  readonly storageClasses?: ReadonlyMap<string, StorageClass>;
  readonly nowMs: number;
}

export function planExtensions(s: ExtensionsInput, revisions: ResolvedRevisions, claimed: readonly Pod[]): ExtensionsPlan {
  const inactive = planInactivePodCleanup(s.cloneSet, s.pods, claimed);
  const deadline = planProgressDeadlineAction(s.cloneSet, revisions, s.nowMs);
  const retention = planPvcRetention(s.cloneSet, s.pods, s.pvcs, s.retainedPvcs ?? []);
  const resize = planPvcResize(s.cloneSet, [...s.pvcs, ...(s.retainedPvcs ?? [])], s.storageClasses ?? new Map<string, StorageClass>(), s.nowMs);
  const conditions = [deadline.condition, resize.condition].filter((c): c is CloneSetCondition => c !== undefined);
  const requeueAfterMs = minDelay(resize.requeueAfterMs);
  return {
    actions: [...deadline.actions, ...retention.actions, ...resize.actions, ...inactive.actions],
    events: [...deadline.events, ...resize.events],
    conditions,
    explain: [...deadline.explain, ...retention.explain, ...resize.explain, ...inactive.explain],
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

const EXTENSION_KINDS: ReadonlySet<PlanAction['kind']> = new Set<ExtensionAction['kind']>([
  'DeleteInactivePod',
  'PatchCloneSetForProgressDeadline',
  'ReleasePvc',
  'AdoptPvc',
  'ResizePvc',
  'AnnotateRevision',
]);

export function isExtensionAction(a: PlanAction): a is ExtensionAction {
  return EXTENSION_KINDS.has(a.kind);
}

/** One extension write in words (kubectl cloneset plan, the simulator's step tables). */
export function describeExtensionAction(a: ExtensionAction): string {
  switch (a.kind) {
    case 'DeleteInactivePod':
      return `delete ${a.phase} pod ${a.pod.name}: over cloneset-controller.io/inactive-pods-limit=${a.limit}${a.replacement !== undefined ? `, replaced by ${a.replacement}` : ''}`;
    case 'PatchCloneSetForProgressDeadline':
      return `${a.decision === 'rollback' ? 'roll back' : 'pause'} (cloneset-controller.io/progress-deadline-action): ${a.message}`;
    case 'ReleasePvc':
      return `release PVC ${a.pvc.name} (${a.why}): no CloneSet owner reference, label cloneset-controller.io/retained-by=${a.cloneSetName}`;
    case 'AdoptPvc':
      return `re-adopt retained PVC ${a.pvc.name}: its instance id has a pod again`;
    case 'ResizePvc':
      return `grow PVC ${a.pvc.name} in place: storage ${a.from} → ${a.to} (cloneset-controller.io/pvc-resize-policy=InPlace)`;
    case 'AnnotateRevision':
      return `annotate revision ${a.revision}: ${Object.entries(a.annotations)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`;
  }
}
