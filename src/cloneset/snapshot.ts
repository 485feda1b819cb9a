// loadSnapshot: everything one reconcile decides on, read from the informer caches only (never the API).
import type { CloneSet } from '../api/cloneset.ts';
import { LABEL_RETAINED_BY, pvcResizePolicyOf } from '../api/extensions.ts';
import type { ControllerRevision, KubeObject, Node, PersistentVolumeClaim, Pod, StorageClass } from '../kube/types.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { labelSelectorMatcher } from '../kube/selectors.ts';
import type { Store } from '../runtime/store.ts';
import type { Snapshot } from './plan/index.ts';

/** Index names registered on the informers (cloneset/manager.ts). */
export const INDEX_OWNER_UID = 'ownerUid';
export const INDEX_NAMESPACE = 'namespace';
/** Revisions without a controller reference, by namespace: the ones any CloneSet there may adopt. */
export const INDEX_ORPHAN_NAMESPACE = 'orphanNamespace';
/** PVCs by `<namespace>/<cloneset-controller.io/retained-by>`: the retained PVCs of a CloneSet (docs/features.md#pvc-retention-policy). */
export const INDEX_RETAINED_BY = 'retainedBy';

export function indexOrphansByNamespace(obj: KubeObject): string[] {
  return controllerRefOf(obj) === undefined ? [obj.metadata?.namespace ?? ''] : [];
}

export function indexByRetainedBy(pvc: PersistentVolumeClaim): string[] {
  const name = pvc.metadata.labels?.[LABEL_RETAINED_BY];
  return name === undefined ? [] : [`${pvc.metadata.namespace ?? ''}/${name}`];
}

export interface CloneSetStores {
  readonly cloneSets: Store<CloneSet>;
  readonly pods: Store<Pod>;
  readonly pvcs: Store<PersistentVolumeClaim>;
  readonly revisions: Store<ControllerRevision>;
  readonly nodes: Store<Node>;
  /** Only read for CloneSets with cloneset-controller.io/pvc-resize-policy (docs/features.md#pvc-resize-in-place). */
  readonly storageClasses?: Store<StorageClass>;
}

export function loadSnapshot(stores: CloneSetStores, cloneSet: CloneSet, nowMs: number): Snapshot {
  const uid = cloneSet.metadata.uid ?? '';
  const pods = stores.pods.byIndex(INDEX_OWNER_UID, uid);
  const pvcs = stores.pvcs.byIndex(INDEX_OWNER_UID, uid).filter((c) => c.metadata.deletionTimestamp === undefined);
  // Only the nodes of our pods: the deletion ranking reads them instead of calling the API mid-sort.
  const nodes = new Map<string, Node>();
  for (const pod of pods) {
    const nodeName = pod.spec.nodeName;
    if (nodeName === undefined || nodeName === '' || nodes.has(nodeName)) continue;
    const node = stores.nodes.get(nodeName);
    if (node !== undefined) nodes.set(nodeName, node);
  }
  const retainedPvcs = stores.pvcs.byIndex(INDEX_RETAINED_BY, `${cloneSet.metadata.namespace ?? ''}/${cloneSet.metadata.name ?? ''}`);
  const storageClasses = pvcResizePolicyOf(cloneSet) === undefined ? undefined : classesOf(stores, [...pvcs, ...retainedPvcs]);
  return { cloneSet, pods, pvcs, nodes, nowMs, ...(retainedPvcs.length > 0 ? { retainedPvcs } : {}), ...(storageClasses !== undefined ? { storageClasses } : {}) };
}

/** The StorageClasses the claims name. */
function classesOf(stores: CloneSetStores, pvcs: readonly PersistentVolumeClaim[]): ReadonlyMap<string, StorageClass> {
  const out = new Map<string, StorageClass>();
  for (const pvc of pvcs) {
    const name = pvc.spec?.['storageClassName'];
    if (typeof name !== 'string' || out.has(name)) continue;
    const sc = stores.storageClasses?.get(name);
    if (sc !== undefined) out.set(name, sc);
  }
  return out;
}

/**
 * Revisions in the CloneSet's namespace that match its selector and are not controlled by someone else: the ones
 * it controls and the orphans. Read from two indexes rather than the whole namespace, so that a reconcile costs
 * the CloneSet's own revisions and not every CloneSet's (a resync of N CloneSets in one namespace was O(N²)).
 * Callers never rely on the order: every reader sorts (sortRevisions) or looks a revision up by name.
 */
export function revisionsOf(stores: CloneSetStores, cloneSet: CloneSet): readonly ControllerRevision[] {
  const uid = cloneSet.metadata.uid ?? '';
  const ns = cloneSet.metadata.namespace ?? '';
  const selects = labelSelectorMatcher(cloneSet.spec.selector);
  // The owner index lists every owner reference, not only the controller's: a revision that merely names us
  // among its owners is someone else's (or an orphan, which the orphan index brings). The namespace check keeps
  // a (malformed) cross-namespace owner reference out, as the namespace index did.
  const controlled = stores.revisions
    .byIndex(INDEX_OWNER_UID, uid)
    .filter((r) => controllerRefOf(r)?.uid === uid && (r.metadata.namespace ?? '') === ns && selects(r.metadata.labels));
  const orphans = stores.revisions.byIndex(INDEX_ORPHAN_NAMESPACE, ns).filter((r) => selects(r.metadata.labels));
  return orphans.length === 0 ? controlled : [...controlled, ...orphans];
}
