// A reconcile pass end to end in memory: the real reconciler, planner, executor, expectations and event handlers,
// over ObjectStores standing in for the informer caches and ports standing in for the API server. The cache lags
// until the test calls `syncCache()` (as a watch would deliver), so a test decides what the next pass sees.
// The fake server makes created pods Running and Ready at once (minReadySeconds 0) — a tiny kubelet.
import { pino } from 'pino';
import type { CloneSet, CloneSetStatus } from '../../api/cloneset.ts';
import { ApiError } from '../../kube/api-error.ts';
import type { ControllerRevision, KubeObject, Node, PersistentVolumeClaim, Pod } from '../../kube/types.ts';
import type { FakeClock } from '../../runtime/clock.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import { indexByNamespace, indexByOwnerUid, ObjectStore, type StoreDelta } from '../../runtime/store.ts';
import type { InformerHandlers } from '../../runtime/informer.ts';
import { podHandlers, revisionHandlers } from '../event-handlers.ts';
import { FEATURE_GATE_DEFAULTS } from '../../api/well-known.ts';
import { sequentialIds } from '../plan/testing/builders.ts';
import type { Ports } from '../ports.ts';
import { reconcileCloneSet } from '../reconciler.ts';
import type { RolloutObserver } from '../rollout-observer.ts';
import { INDEX_NAMESPACE, INDEX_ORPHAN_NAMESPACE, INDEX_OWNER_UID, INDEX_RETAINED_BY, indexByRetainedBy, indexOrphansByNamespace } from '../snapshot.ts';
import { SeenEvents } from './executor-fixture.ts';

const notFound = (what: string): ApiError => new ApiError(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${what} not found` }, 'NotFound');
const conflict = (what: string): ApiError => new ApiError(409, { kind: 'Status', code: 409, reason: 'Conflict', message: `${what}: the object has been modified` }, 'Conflict');
const exists = (what: string): ApiError => new ApiError(409, { kind: 'Status', code: 409, reason: 'AlreadyExists', message: `${what} already exists` }, 'AlreadyExists');

export interface ReconcileHarness {
  /** Every write the API server received, as "<verb> <object>". */
  readonly writes: string[];
  /** One reconcile pass of the CloneSet. */
  reconcile(): Promise<ReconcileResult>;
  /** Delivers the server's state to the caches (and the event handlers), as a relist would. */
  syncCache(): void;
  /** Replaces the CloneSet's spec on the server (a user's edit). */
  editSpec(edit: (cs: CloneSet) => CloneSet): void;
  /** The server's pods, by name. */
  pods(): readonly Pod[];
  /** Replaces every server pod by `edit(pod)` (a kubelet's or a user's writes); an unchanged pod keeps its resourceVersion. */
  editPods(edit: (pod: Pod, index: number) => Pod): void;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
}

export interface ReconcileHarnessOptions {
  /** The rollout observer the controller gives its passes (the blockers are computed only with one). */
  readonly rollouts?: RolloutObserver;
}

export function reconcileHarness(clock: FakeClock, initial: CloneSet, options: ReconcileHarnessOptions = {}): ReconcileHarness {
  const key = `${initial.metadata.namespace ?? ''}/${initial.metadata.name ?? ''}`;
  let rv = 100;
  const nextRv = (): string => String(++rv);
  const server = {
    cloneSet: { ...initial, metadata: { ...initial.metadata, resourceVersion: nextRv() } } as CloneSet,
    pods: new Map<string, Pod>(),
    revisions: new Map<string, ControllerRevision>(),
  };
  const writes: string[] = [];
  const stores = {
    cloneSets: new ObjectStore<CloneSet>({ [INDEX_NAMESPACE]: indexByNamespace }),
    pods: new ObjectStore<Pod>({ [INDEX_OWNER_UID]: indexByOwnerUid }),
    pvcs: new ObjectStore<PersistentVolumeClaim>({ [INDEX_OWNER_UID]: indexByOwnerUid, [INDEX_RETAINED_BY]: indexByRetainedBy }),
    revisions: new ObjectStore<ControllerRevision>({ [INDEX_OWNER_UID]: indexByOwnerUid, [INDEX_ORPHAN_NAMESPACE]: indexOrphansByNamespace }),
    nodes: new ObjectStore<Node>(),
  };
  const scaleExpectations = new ScaleExpectations(clock, 60_000);
  const rvExpectations = new ResourceVersionExpectations(clock, 60_000);
  const enqueue = (): void => undefined;
  const podEvents = podHandlers(enqueue, scaleExpectations, rvExpectations, stores.cloneSets);
  const revisionEvents = revisionHandlers(enqueue, scaleExpectations, rvExpectations);
  const deliver = <T>(deltas: readonly StoreDelta<T>[], h: InformerHandlers<T>): void => {
    for (const d of deltas) {
      if (d.type === 'add') h.onAdd?.(d.obj);
      else if (d.type === 'update') h.onUpdate?.(d.old, d.obj);
      else h.onDelete?.(d.obj, { finalStateUnknown: d.finalStateUnknown });
    }
  };
  const withRv = <T extends KubeObject>(obj: T): T => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: nextRv() } });
  const ports: Ports = {
    pods: {
      createPod: async (_ns, pod) => {
        const name = pod.metadata.name ?? '';
        writes.push(`create pods/${name}`);
        if (server.pods.has(name)) throw exists(name);
        const created: Pod = withRv({
          ...pod,
          metadata: { ...pod.metadata, uid: `uid-${name}`, creationTimestamp: new Date(clock.now()).toISOString() },
          spec: { ...pod.spec, nodeName: 'node-1' },
          status: {
            phase: 'Running',
            conditions: [
              { type: 'Ready', status: 'True', lastTransitionTime: new Date(clock.now()).toISOString() },
              { type: 'InPlaceUpdateReady', status: 'True' },
            ],
          },
        });
        server.pods.set(name, created);
        return created;
      },
      deletePod: async (_ns, name, uid) => {
        writes.push(`delete pods/${name}`);
        const pod = server.pods.get(name);
        if (pod === undefined) throw notFound(name);
        if (pod.metadata.uid !== uid) throw conflict(name);
        server.pods.delete(name);
      },
      getPod: async (_ns, name) => {
        const pod = server.pods.get(name);
        if (pod === undefined) throw notFound(name);
        return pod;
      },
      patchPod: async (_ns, name, patch) => {
        writes.push(`patch pods/${name}`);
        const pod = server.pods.get(name);
        if (pod === undefined) throw notFound(name);
        const patched = withRv(mergeMetadata(pod, patch));
        server.pods.set(name, patched);
        return patched;
      },
      patchPodStatus: async (_ns, name, patch) => {
        writes.push(`patch pods/${name}/status`);
        const pod = server.pods.get(name);
        if (pod === undefined) throw notFound(name);
        const patched = withRv(mergeConditions(mergeMetadata(pod, patch), patch));
        server.pods.set(name, patched);
        return patched;
      },
      patchPodResize: async (_ns, name) => {
        throw notFound(name);
      },
    },
    pvcs: {
      createPvc: async (_ns, pvc) => pvc,
      deletePvc: async () => undefined,
      patchPvc: async (_ns, name) => {
        throw notFound(name);
      },
    },
    revisions: {
      createRevision: async (_ns, name, encoded) => {
        writes.push(`create controllerrevisions/${name}`);
        if (server.revisions.has(name)) throw exists(name);
        const rev = withRv({ ...(JSON.parse(encoded) as ControllerRevision) });
        const stored: ControllerRevision = { ...rev, metadata: { ...rev.metadata, uid: `uid-${name}`, creationTimestamp: new Date(clock.now()).toISOString() } };
        server.revisions.set(name, stored);
        return stored;
      },
      updateRevision: async (_ns, name, encoded) => {
        writes.push(`update controllerrevisions/${name}`);
        const old = server.revisions.get(name);
        const rev = JSON.parse(encoded) as ControllerRevision;
        if (old === undefined) throw notFound(name);
        if (old.metadata.resourceVersion !== rev.metadata.resourceVersion) throw conflict(name);
        const stored = withRv({ ...rev, metadata: { ...old.metadata } });
        server.revisions.set(name, stored);
        return stored;
      },
      getRevision: async (_ns, name) => {
        const rev = server.revisions.get(name);
        if (rev === undefined) throw notFound(name);
        return rev;
      },
      patchRevision: async (_ns, name) => {
        throw notFound(name);
      },
      deleteRevision: async (_ns, name) => {
        writes.push(`delete controllerrevisions/${name}`);
        if (!server.revisions.delete(name)) throw notFound(name);
      },
    },
    cloneSets: {
      updateStatus: async (cs: CloneSet, status: CloneSetStatus) => {
        writes.push(`update clonesets/${cs.metadata.name ?? ''}/status`);
        if (cs.metadata.resourceVersion !== server.cloneSet.metadata.resourceVersion) throw conflict('clonesets');
        server.cloneSet = withRv({ ...server.cloneSet, status });
        return server.cloneSet;
      },
      patchCloneSet: async () => {
        throw notFound('clonesets');
      },
    },
  };
  const recorder = new SeenEvents({ sink: { create: async () => undefined, patch: async () => undefined }, clock, logger: pino({ level: 'silent' }) });
  const syncCache = (): void => {
    stores.cloneSets.replace([server.cloneSet]);
    deliver(stores.revisions.replace([...server.revisions.values()]), revisionEvents);
    deliver(stores.pods.replace([...server.pods.values()]), podEvents);
  };
  syncCache();
  const deps = {
    stores,
    ports,
    scaleExpectations,
    rvExpectations,
    recorder,
    clock,
    config: { gates: FEATURE_GATE_DEFAULTS, excludePreparingDelete: false },
    ids: sequentialIds(),
    logger: pino({ level: 'silent' }),
    ...(options.rollouts !== undefined ? { rollouts: options.rollouts } : {}),
  };
  return {
    writes,
    reconcile: () => reconcileCloneSet(key, deps),
    syncCache,
    editSpec: (edit) => {
      server.cloneSet = withRv(edit(server.cloneSet));
    },
    pods: () => [...server.pods.values()],
    editPods: (edit) => {
      let i = 0;
      for (const [name, pod] of server.pods) {
        const edited = edit(pod, i++);
        if (edited !== pod) server.pods.set(name, withRv(edited));
      }
    },
    scaleExpectations,
    rvExpectations,
  };
}

type Patch = {
  readonly metadata?: { readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly status?: { readonly conditions?: readonly { readonly type: string }[] };
};

/** The labels and annotations of a strategic merge patch, merged (what the executor's pod patches carry). */
function mergeMetadata(pod: Pod, patch: unknown): Pod {
  const p = (Array.isArray(patch) ? {} : patch) as Patch;
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { ...pod.metadata.labels, ...p.metadata?.labels },
      annotations: { ...pod.metadata.annotations, ...p.metadata?.annotations },
    },
  };
}

/** Conditions of a pods/status strategic merge patch, merged by type. */
function mergeConditions(pod: Pod, patch: unknown): Pod {
  const incoming = ((patch as Patch).status?.conditions ?? []) as NonNullable<NonNullable<Pod['status']>['conditions']>;
  const kept = (pod.status?.conditions ?? []).filter((c) => !incoming.some((n) => n.type === c.type));
  return { ...pod, status: { ...pod.status, conditions: [...kept, ...incoming] } };
}
