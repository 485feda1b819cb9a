// What the informer caches keep of each object: only the fields the controller reads (controller-runtime's
// `cache.Options.DefaultTransform` / client-go's `SetTransform`). Every pod and node of the cluster is cached —
// most of them belong to nobody we care about — so the cache, not the controller's own state, dominates memory
// (docs/performance.md). The transforms run on each object as it arrives, before the store freezes it; an object
// that changes so that it matters (a pod that gets a CloneSet owner reference) arrives again, whole, and is
// reduced by the rule that then applies.
import { GROUP, KIND, type CloneSet } from '../api/cloneset.ts';
import type { Container, ContainerStatus, Node, ObjectMeta, Pod, PodCondition, PodSpec, PodStatus } from '../kube/types.ts';

/** The metadata every cached object keeps: identity, labels, ownership, deletion (never managedFields). */
function coreMeta(m: ObjectMeta): ObjectMeta {
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.labels !== undefined ? { labels: m.labels } : {}),
    ...(m.ownerReferences !== undefined ? { ownerReferences: m.ownerReferences } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
  };
}

/** Nodes: the deletion ranking reads their labels (topology keys) and nothing else. */
export function transformNode(node: Node): Node {
  return { metadata: coreMeta(node.metadata) };
}

/** Does any owner reference (controller or not) name a CloneSet? Such pods are ours, or may be adopted (docs/features.md#ownership-and-adoption). */
function refersToCloneSet(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.kind === KIND && r.apiVersion.split('/')[0] === GROUP);
}

/**
 * Identical parts of many pods (the containers of a revision, the owner reference, the readiness gates) stored
 * once: a cache of frozen values by their JSON. Cleared when full — sharing is only a saving, never a meaning.
 */
export class Interner {
  readonly #values = new Map<string, unknown>();
  readonly #max: number;

  constructor(max = 4096) {
    this.#max = max;
  }

  share<V>(value: V): V {
    const key = JSON.stringify(value);
    const known = this.#values.get(key);
    if (known !== undefined) return known as V;
    if (this.#values.size >= this.#max) this.#values.clear();
    this.#values.set(key, deepFreezeValue(value));
    return value;
  }
}

function deepFreezeValue<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreezeValue(v);
  }
  return value;
}

/**
 * CloneSets: a template (or volume claim templates) equal to the one of an earlier version of a CloneSet is
 * replaced by that version's frozen object. Most versions of a CloneSet are status writes that leave the
 * template alone, and what is derived from a template is remembered per template object (revision-memo.ts):
 * shared, it is derived once per template instead of once per status write.
 */
export function shareTemplates(cloneSet: CloneSet, interner: Interner): CloneSet {
  const { template, volumeClaimTemplates } = cloneSet.spec;
  return {
    ...cloneSet,
    spec: {
      ...cloneSet.spec,
      template: interner.share(template),
      ...(volumeClaimTemplates !== undefined ? { volumeClaimTemplates: interner.share(volumeClaimTemplates) } : {}),
    },
  };
}

/** The pod transform of the controller's pod informer (one Interner per informer). */
export function podTransform(interner: Interner = new Interner()): (pod: Pod) => Pod {
  return (pod) => transformPod(pod, interner);
}

/**
 * Pods. A pod that names no CloneSet is only ever looked at by the event handlers (is it an orphan whose labels
 * match a selector? is it being deleted?), so it keeps its core metadata and an empty spec. A CloneSet's pod
 * keeps all of its metadata, the spec fields the planner and the in-place engine read (containers — the in-place
 * engine compares and patches them — less their per-pod volume mounts, init containers, node name, readiness
 * gates) and the status it reads (phase, conditions, container statuses without state/lastState, the resize status).
 * With an Interner, parts equal across pods are stored once.
 */
export function transformPod(pod: Pod, interner?: Interner): Pod {
  const share = <V>(v: V): V => (interner === undefined ? v : interner.share(v));
  if (!refersToCloneSet(pod)) return { metadata: coreMeta(pod.metadata), spec: { containers: [] } };
  const { managedFields: _managed, ownerReferences, ...metadata } = pod.metadata;
  const s = pod.spec;
  const spec: PodSpec = {
    containers: share(s.containers.map(reducedContainer)),
    ...(s.initContainers !== undefined ? { initContainers: share(s.initContainers.map(reducedContainer)) } : {}),
    ...(s.nodeName !== undefined ? { nodeName: s.nodeName } : {}),
    ...(s.readinessGates !== undefined ? { readinessGates: share(s.readinessGates) } : {}),
  };
  return {
    metadata: { ...metadata, ...(ownerReferences !== undefined ? { ownerReferences: share(ownerReferences) } : {}) },
    spec,
    ...(pod.status !== undefined ? { status: reducedStatus(pod.status) } : {}),
  };
}

/**
 * A container without what differs from pod to pod and is never read (the service account token's volume
 * mount, injected per pod) or never read at all (termination message settings), so that the containers of one
 * revision are equal and stored once. Image, env, resources, resize policy, probes… stay.
 */
function reducedContainer(c: Container): Container {
  const { volumeMounts: _mounts, terminationMessagePath: _path, terminationMessagePolicy: _policy, ...rest } = c;
  return rest;
}

function reducedStatus(st: PodStatus): PodStatus {
  return {
    ...(st.phase !== undefined ? { phase: st.phase } : {}),
    ...(st.conditions !== undefined ? { conditions: st.conditions.map(reducedCondition) } : {}),
    ...(st.containerStatuses !== undefined ? { containerStatuses: st.containerStatuses.map(reducedContainerStatus) } : {}),
    ...(st['resize'] !== undefined ? { resize: st['resize'] } : {}),
  };
}

/** lastProbeTime is never read (and always null on conditions the kubelet did not probe). */
function reducedCondition(c: PodCondition): PodCondition {
  const { lastProbeTime: _probe, ...rest } = c;
  return rest;
}

/** state/lastState (the running/terminated details), volumeMounts and user are never read. */
function reducedContainerStatus(c: ContainerStatus): ContainerStatus {
  const { state: _state, lastState: _last, volumeMounts: _mounts, user: _user, ...rest } = c;
  return rest;
}
