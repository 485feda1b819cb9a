// What the informer caches keep of each object: only the fields the controller reads (controller-runtime's
// `cache.Options.DefaultTransform` / client-go's `SetTransform`). Every pod and node of the cluster is cached —
// most of them belong to nobody we care about — so the cache, not the controller's own state, dominates memory
// (docs/performance.md). The transforms run on each object as it arrives, before the store freezes it; an object
// that changes so that it matters (a pod that gets a CloneSet owner reference) arrives again, whole, and is
// reduced by the rule that then applies.
import { GROUP, KIND } from '../api/cloneset.ts';
import type { ContainerStatus, Node, ObjectMeta, Pod, PodCondition, PodSpec, PodStatus } from '../kube/types.ts';

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

/** Does any owner reference (controller or not) name a CloneSet? Such pods are ours, or may be adopted (spec §8.6). */
function refersToCloneSet(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.kind === KIND && r.apiVersion.split('/')[0] === GROUP);
}

/**
 * Pods. A pod that names no CloneSet is only ever looked at by the event handlers (is it an orphan whose labels
 * match a selector? is it being deleted?), so it keeps its core metadata and an empty spec. A CloneSet's pod
 * keeps all of its metadata, the spec fields the planner and the in-place engine read (containers whole — the
 * in-place engine compares and patches them —, init containers, node name, readiness gates) and the status it
 * reads (phase, conditions, container statuses without state/lastState, the resize status).
 */
export function transformPod(pod: Pod): Pod {
  if (!refersToCloneSet(pod)) return { metadata: coreMeta(pod.metadata), spec: { containers: [] } };
  const { managedFields: _managed, ...metadata } = pod.metadata;
  const s = pod.spec;
  const spec: PodSpec = {
    containers: s.containers,
    ...(s.initContainers !== undefined ? { initContainers: s.initContainers } : {}),
    ...(s.nodeName !== undefined ? { nodeName: s.nodeName } : {}),
    ...(s.readinessGates !== undefined ? { readinessGates: s.readinessGates } : {}),
  };
  return { metadata, spec, ...(pod.status !== undefined ? { status: reducedStatus(pod.status) } : {}) };
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
