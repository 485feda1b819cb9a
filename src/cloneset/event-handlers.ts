// Maps informer events to CloneSet keys and observes scale expectations (docs/features.md#reconcile-pass, #expectations; Kruise pkg/controller/cloneset/cloneset_event_handler.go).
// Pods and PVCs go to the CloneSet named by their controller reference; orphans to every CloneSet whose
// selector matches (they are never adopted, but a label change may concern the CloneSet).
import type { CloneSet } from '../api/cloneset.ts';
import { GROUP, KIND } from '../api/cloneset.ts';
import { jsonEqual } from '../api/json-equal.ts';
import { LABEL_RETAINED_BY } from '../api/extensions.ts';
import type { ControllerRevision, KubeObject, OwnerReference, PersistentVolumeClaim, Pod } from '../kube/types.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { matchesLabelSelector } from '../kube/selectors.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import type { InformerHandlers } from '../runtime/informer.ts';
import type { Store } from '../runtime/store.ts';

export type Enqueue = (key: string) => void;

function cloneSetOwnerOf(obj: KubeObject): OwnerReference | undefined {
  const ref = controllerRefOf(obj);
  if (ref === undefined) return undefined;
  // Match on group and kind, never on version: v1alpha1 and v1beta1 owners are the same CloneSet.
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
  return group === GROUP && ref.kind === KIND ? ref : undefined;
}

function ownerKey(obj: KubeObject, ref: OwnerReference): string {
  return `${obj.metadata?.namespace ?? ''}/${ref.name}`;
}

/**
 * A CloneSet update that changes its status and nothing else (the resourceVersion aside): the echo of a pass's own
 * status write, nearly always. The status is what a pass derives from the pods; the next pass decides nothing new
 * from it that the pod events would not bring too.
 */
export function changesOnlyStatus(old: CloneSet, cs: CloneSet): boolean {
  if (old === cs) return true;
  const { resourceVersion: _a, ...oldMeta } = old.metadata;
  const { resourceVersion: _b, ...newMeta } = cs.metadata;
  // The spec's template is shared between versions (cache-transforms.ts shareTemplates): compared at once.
  return jsonEqual(oldMeta, newMeta) && jsonEqual(old.spec, cs.spec);
}

/**
 * `enqueueStatusChange`, when given, wakes the CloneSet on a change of its status only (changesOnlyStatus); every
 * other event wakes it with `enqueue`. The controller passes the pod events' batched wake-up (pod-event-batch.ts):
 * without it each pass of a large CloneSet that writes its status woke the next one at once, so while its pods
 * turned Ready the passes ran back to back whatever the batch period of the pod events.
 */
export function cloneSetHandlers(enqueue: Enqueue, rv?: ResourceVersionExpectations, enqueueStatusChange?: Enqueue): InformerHandlers<CloneSet> {
  const keyOf = (cs: CloneSet): string => `${cs.metadata.namespace ?? ''}/${cs.metadata.name ?? ''}`;
  return {
    onAdd: (cs) => enqueue(keyOf(cs)),
    onUpdate: (old, cs) => (enqueueStatusChange !== undefined && changesOnlyStatus(old, cs) ? enqueueStatusChange : enqueue)(keyOf(cs)),
    onDelete: (cs) => {
      rv?.forget(cs.metadata.uid ?? '');
      enqueue(keyOf(cs));
    },
  };
}

/**
 * A pod update that changes nothing the controller reads: the two versions are equal but for their
 * resourceVersion. The cache keeps only what the controller reads (cache-transforms.ts), so a kubelet status
 * update that only moves, say, the pod IP or a container's `state` compares equal here and wakes no CloneSet.
 * Unlike Kruise's CloneSetEventHandlerOptimization (a list of fields that matter, which missed a preNormal
 * finalizer removal, kruise#2057, and Running → Failed, kruise#2473), every kept field counts: labels,
 * annotations, finalizers, owner references, deletion, spec, phase, conditions, container statuses, resize.
 */
export function changesNothingRead(old: Pod, pod: Pod): boolean {
  if (old === pod) return true;
  const { resourceVersion: _a, ...oldMeta } = old.metadata;
  const { resourceVersion: _b, ...newMeta } = pod.metadata;
  // jsonEqual, not util.isDeepStrictEqual: the parts the cache transform interns are shared between the two
  // versions and compare equal at once.
  return jsonEqual({ ...old, metadata: oldMeta }, { ...pod, metadata: newMeta });
}

/** A pod informer event, as cloneset_pod_events_total labels it. */
export type PodEvent = 'add' | 'update' | 'delete';
/** enqueued: the event woke at least one CloneSet; ignored: none (nothing it reads changed, or no CloneSet concerned). */
export type PodEventResult = 'enqueued' | 'ignored';
export type PodEventCounts = Record<PodEvent, Record<PodEventResult, number>>;

export function newPodEventCounts(): PodEventCounts {
  return { add: { enqueued: 0, ignored: 0 }, update: { enqueued: 0, ignored: 0 }, delete: { enqueued: 0, ignored: 0 } };
}

/**
 * `counts`, when given, counts every pod event by what it did (the metric cloneset_pod_events_total): how many
 * kubelet status updates the filter above drops, and how many wake a CloneSet.
 */
export function podHandlers(
  enqueue: Enqueue,
  scale: ScaleExpectations,
  rv: ResourceVersionExpectations,
  cloneSets: Store<CloneSet>,
  counts?: PodEventCounts,
): InformerHandlers<Pod> {
  let woke = false;
  const wake: Enqueue = (key) => {
    woke = true;
    enqueue(key);
  };
  const handlers = podEventHandlers(wake, scale, rv, cloneSets);
  const count = (event: PodEvent, handle: () => void): void => {
    woke = false;
    handle();
    if (counts !== undefined) counts[event][woke ? 'enqueued' : 'ignored']++;
  };
  return {
    onAdd: (pod) => count('add', () => handlers.onAdd(pod)),
    onUpdate: (old, pod) => count('update', () => handlers.onUpdate(old, pod)),
    onDelete: (pod, info) => count('delete', () => handlers.onDelete(pod, info)),
  };
}

function podEventHandlers(
  enqueue: Enqueue,
  scale: ScaleExpectations,
  rv: ResourceVersionExpectations,
  cloneSets: Store<CloneSet>,
): Required<Pick<InformerHandlers<Pod>, 'onAdd' | 'onUpdate' | 'onDelete'>> {
  const enqueueOrphan = (pod: Pod): void => {
    for (const cs of cloneSets.byIndex('namespace', pod.metadata.namespace ?? '')) {
      if (matchesLabelSelector(cs.spec.selector, pod.metadata.labels ?? {})) {
        enqueue(`${cs.metadata.namespace ?? ''}/${cs.metadata.name ?? ''}`);
      }
    }
  };
  const deleted = (pod: Pod): void => {
    rv.forget(pod.metadata.uid ?? '');
    const ref = cloneSetOwnerOf(pod);
    if (ref === undefined) return;
    const key = ownerKey(pod, ref);
    scale.observe(key, 'delete', pod.metadata.name ?? '', 'pod');
    enqueue(key);
  };
  return {
    onAdd: (pod) => {
      if (pod.metadata.deletionTimestamp !== undefined) return deleted(pod);
      const ref = cloneSetOwnerOf(pod);
      if (ref === undefined) {
        if ((pod.metadata.ownerReferences ?? []).every((r) => r.controller !== true)) enqueueOrphan(pod);
        return;
      }
      const key = ownerKey(pod, ref);
      scale.observe(key, 'create', pod.metadata.name ?? '', 'pod');
      enqueue(key);
    },
    onUpdate: (old, pod) => {
      if (changesNothingRead(old, pod)) return;
      if (pod.metadata.deletionTimestamp !== undefined) {
        deleted(pod);
        return;
      }
      const oldRef = cloneSetOwnerOf(old);
      const ref = cloneSetOwnerOf(pod);
      if (oldRef !== undefined && oldRef.uid !== ref?.uid) enqueue(ownerKey(old, oldRef));
      if (ref !== undefined) enqueue(ownerKey(pod, ref));
      else if ((pod.metadata.ownerReferences ?? []).every((r) => r.controller !== true)) enqueueOrphan(pod);
    },
    onDelete: deleted,
  };
}

/**
 * The CloneSet a PVC belongs to: its controller, or for a retained PVC (no owner reference,
 * docs/features.md#pvc-retention-policy) the CloneSet named by its cloneset-controller.io/retained-by label.
 */
function pvcCloneSetKey(pvc: PersistentVolumeClaim): string | undefined {
  const ref = cloneSetOwnerOf(pvc);
  if (ref !== undefined) return ownerKey(pvc, ref);
  const retainedBy = pvc.metadata.labels?.[LABEL_RETAINED_BY];
  return retainedBy === undefined ? undefined : `${pvc.metadata.namespace ?? ''}/${retainedBy}`;
}

export function pvcHandlers(enqueue: Enqueue, scale: ScaleExpectations): InformerHandlers<PersistentVolumeClaim> {
  const deleted = (pvc: PersistentVolumeClaim): void => {
    const key = pvcCloneSetKey(pvc);
    if (key === undefined) return;
    scale.observe(key, 'delete', pvc.metadata.name ?? '', 'pvc');
    enqueue(key);
  };
  return {
    onAdd: (pvc) => {
      if (pvc.metadata.deletionTimestamp !== undefined) return deleted(pvc);
      const key = pvcCloneSetKey(pvc);
      if (key === undefined) return;
      scale.observe(key, 'create', pvc.metadata.name ?? '', 'pvc');
      enqueue(key);
    },
    onUpdate: (old, pvc) => {
      if (pvc.metadata.deletionTimestamp !== undefined) return deleted(pvc);
      // A volume plugin's progress on a resize (capacity, Resizing/FileSystemResizePending): docs/features.md#pvc-resize-in-place.
      if (jsonEqual(old.status, pvc.status)) return;
      const key = pvcCloneSetKey(pvc);
      if (key !== undefined) enqueue(key);
    },
    onDelete: deleted,
  };
}

/**
 * ControllerRevisions: observe the executor's name expectations of revision creates and deletes, and wake the
 * owning CloneSet on every change (a renumbered or labelled revision satisfies its resourceVersion expectation).
 */
export function revisionHandlers(enqueue: Enqueue, scale: ScaleExpectations, rv?: ResourceVersionExpectations): InformerHandlers<ControllerRevision> {
  const owner = (rev: ControllerRevision): string | undefined => {
    const ref = cloneSetOwnerOf(rev);
    return ref === undefined ? undefined : ownerKey(rev, ref);
  };
  const deleted = (rev: ControllerRevision): void => {
    rv?.forget(rev.metadata.uid ?? '');
    const key = owner(rev);
    if (key === undefined) return;
    scale.observe(key, 'delete', rev.metadata.name ?? '', 'revision');
    enqueue(key);
  };
  return {
    onAdd: (rev) => {
      if (rev.metadata.deletionTimestamp !== undefined) return deleted(rev);
      const key = owner(rev);
      if (key === undefined) return;
      scale.observe(key, 'create', rev.metadata.name ?? '', 'revision');
      enqueue(key);
    },
    onUpdate: (_old, rev) => {
      if (rev.metadata.deletionTimestamp !== undefined) return deleted(rev);
      const key = owner(rev);
      if (key !== undefined) enqueue(key);
    },
    onDelete: deleted,
  };
}
