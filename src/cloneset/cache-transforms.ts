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
 * Identical parts of many pods (the containers of a revision, the owner reference, the readiness gates, the
 * conditions and container statuses that carry nothing of their pod) stored once: a cache of frozen values by
 * their JSON. Cleared when full — sharing is only a saving, never a meaning.
 *
 * Values equal across a few objects for a while only (a pod condition stamped with the second it changed: the
 * pods that turned Ready in that second) go to a small pool of their own, `shareMoment`, that forgets its oldest
 * value when full: in the main pool they would fill it with one entry per second and clear the long-lived values
 * (every pod arriving after a clear keeps its own copy of its revision's containers until the next one shares it).
 */
export class Interner {
  readonly #values = new Map<string, unknown>();
  readonly #max: number;
  readonly #moments = new Map<string, unknown>();
  readonly #maxMoments: number;

  constructor(max = 4096, maxMoments = 256) {
    this.#max = max;
    this.#maxMoments = maxMoments;
  }

  /**
   * `value`, or the equal value stored before. A value new to the pool is stored as `withSharedParts` makes it
   * (the same JSON, its parts shared in turn): the parts of a value already known are never looked up.
   */
  share<V>(value: V, withSharedParts?: (value: V) => V): V {
    const key = JSON.stringify(value);
    const known = this.#values.get(key);
    if (known !== undefined) return known as V;
    const stored = withSharedParts === undefined ? value : withSharedParts(value);
    if (this.#values.size >= this.#max) this.#values.clear();
    this.#values.set(key, deepFreezeValue(stored));
    return stored;
  }

  /** `share` among the values of the moment. */
  shareMoment<V>(value: V, withSharedParts?: (value: V) => V): V {
    const key = JSON.stringify(value);
    const known = this.#moments.get(key);
    if (known !== undefined) return known as V;
    const stored = withSharedParts === undefined ? value : withSharedParts(value);
    if (this.#moments.size >= this.#maxMoments) {
      // Maps iterate in insertion order: the first key is the oldest moment, the least likely to recur.
      for (const oldest of this.#moments.keys()) {
        this.#moments.delete(oldest);
        break;
      }
    }
    this.#moments.set(key, deepFreezeValue(stored));
    return stored;
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
 * gates) and the status it reads (phase, conditions, container statuses, the resize status: see reducedStatus).
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
    ...(pod.status !== undefined ? { status: reducedStatus(pod.status, interner) } : {}),
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

/**
 * How widely a part of a pod's status can be shared: by every pod showing the same (a pending pod's
 * conditions: types, statuses, reasons), by the pods stamped in the same second (a Ready condition), or by no
 * other pod (a running container's containerID). A whole is shared no wider than its least shared part.
 */
type Reach = 'pods' | 'moment' | 'own';

const REACH_RANK: Readonly<Record<Reach, number>> = { pods: 0, moment: 1, own: 2 };

function narrowest<V>(items: readonly V[], reachOf: (item: V) => Reach): Reach {
  let reach: Reach = 'pods';
  for (const item of items) {
    const r = reachOf(item);
    if (REACH_RANK[r] > REACH_RANK[reach]) reach = r;
  }
  return reach;
}

/** `value` stored once among the values of its reach; an own value is kept, with its parts shared. */
function shareAt<V>(interner: Interner, reach: Reach, value: V, withSharedParts?: (value: V) => V): V {
  if (reach === 'own') return withSharedParts === undefined ? value : withSharedParts(value);
  return reach === 'pods' ? interner.share(value, withSharedParts) : interner.shareMoment(value, withSharedParts);
}

/**
 * The status the controller reads: phase, conditions, container statuses, the resize status — pod IPs, host IPs,
 * start time, QoS class, init container statuses and observedGeneration are never read. A Ready pod's status
 * cost ~1 KiB more than a pending pod's (bench/cached-pod-heap.ts), most of it condition timestamps the
 * controller does not read and copies of strings equal in every pod (image, imageID); each part is now kept as
 * far as it is read and stored once where pods agree, down to the whole status (a pending pod's).
 */
function reducedStatus(st: PodStatus, interner: Interner | undefined): PodStatus {
  const status: PodStatus = {
    ...(st.phase !== undefined ? { phase: st.phase } : {}),
    ...(st.conditions !== undefined ? { conditions: st.conditions.map(reducedCondition) } : {}),
    ...(st.containerStatuses !== undefined ? { containerStatuses: st.containerStatuses.map(reducedContainerStatus) } : {}),
    ...(st['resize'] !== undefined ? { resize: st['resize'] } : {}),
  };
  return interner === undefined ? status : sharedStatus(status, interner);
}

/**
 * The status stored once at its reach, looked up from the whole down: most statuses (and condition lists) are
 * known already, and a known one's parts need no lookup (each is a JSON.stringify on every pod event).
 */
function sharedStatus(status: PodStatus, interner: Interner): PodStatus {
  const conditions = status.conditions ?? [];
  const statuses = status.containerStatuses ?? [];
  const conditionsReach = narrowest(conditions, conditionReach);
  const statusesReach = narrowest(statuses, containerStatusReach);
  const reach = REACH_RANK[conditionsReach] > REACH_RANK[statusesReach] ? conditionsReach : statusesReach;
  return shareAt(interner, reach, status, (s) => ({
    ...s,
    ...(s.conditions !== undefined ? { conditions: shareAt(interner, conditionsReach, s.conditions, (list) => list.map((c) => shareAt(interner, conditionReach(c), c))) } : {}),
    ...(s.containerStatuses !== undefined
      ? {
          containerStatuses: shareAt(interner, statusesReach, s.containerStatuses, (list) =>
            list.map((c) => shareAt(interner, containerStatusReach(c), c, (cs) => containerStatusParts(cs, interner))),
          ),
        }
      : {}),
  }));
}

/**
 * The one condition time the controller reads: `Ready`'s, when it is True (how long the pod has been Ready:
 * minReadySeconds and availability, the deletion ranking, the rollout observer's time to Ready; every reader
 * looks at the time only once the status is True). Every other condition keeps type, status, reason and message
 * (InPlaceUpdateReady's reason and KruisePodReady's message are read) and, without its time, is equal in many
 * pods. lastProbeTime and observedGeneration are never read.
 */
function timeIsRead(c: PodCondition): boolean {
  return c.type === 'Ready' && c.status === 'True';
}

function reducedCondition(c: PodCondition): PodCondition {
  return {
    type: c.type,
    status: c.status,
    ...(timeIsRead(c) && c.lastTransitionTime !== undefined ? { lastTransitionTime: c.lastTransitionTime } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.message !== undefined ? { message: c.message } : {}),
  };
}

/** A time makes a condition a moment's; a null one (the engine's own not-ready Ready) does not. */
function conditionReach(c: PodCondition): Reach {
  return typeof c.lastTransitionTime === 'string' ? 'moment' : 'pods';
}

/**
 * What the controller reads of a container status: name, image, imageID (in-place update completion),
 * containerID (the runtime-containers-meta hashes), ready, restartCount (the deletion ranking) and resources (an
 * in-place resize's completion). state/lastState, started, volumeMounts, user, allocatedResources… are never read.
 */
function reducedContainerStatus(c: ContainerStatus): ContainerStatus {
  const resources = c['resources'];
  return {
    name: c.name,
    ...(c.image !== undefined ? { image: c.image } : {}),
    ...(c.imageID !== undefined ? { imageID: c.imageID } : {}),
    ...(c.containerID !== undefined ? { containerID: c.containerID } : {}),
    ...(c.ready !== undefined ? { ready: c.ready } : {}),
    ...(c.restartCount !== undefined ? { restartCount: c.restartCount } : {}),
    ...(resources !== undefined ? { resources } : {}),
  };
}

/** A running container's containerID is its own: its status is too. */
function containerStatusReach(c: ContainerStatus): Reach {
  return c.containerID !== undefined && c.containerID !== '' ? 'own' : 'pods';
}

/**
 * A container status with its parts equal in other pods shared: the strings the API server's JSON gives every
 * pod a copy of (V8 interns only the shortest) and the resources.
 */
function containerStatusParts(c: ContainerStatus, interner: Interner): ContainerStatus {
  const resources = c['resources'];
  return {
    ...c,
    name: interner.share(c.name),
    ...(c.image !== undefined ? { image: interner.share(c.image) } : {}),
    ...(c.imageID !== undefined ? { imageID: interner.share(c.imageID) } : {}),
    ...(resources !== undefined ? { resources: interner.share(resources) } : {}),
  };
}
