// startCloneSetManager: the informers, work queue and workers of the CloneSet controller, wired together.
import { cloneSetFromV1beta1 } from '../api/conversion.ts';
import type { CloneSetV1beta1 } from '../api/cloneset-v1beta1.ts';
import type { Logger } from 'pino';
import { randomInt } from 'node:crypto';
import type { CloneSet } from '../api/cloneset.ts';
import type { FeatureGates } from '../api/well-known.ts';
import type { KubeClient } from '../kube/client.ts';
import { CLONESETS_V1BETA1, CONTROLLER_REVISIONS, NODES, PODS, PVCS, STORAGE_CLASSES } from '../kube/resources.ts';
import type { ControllerRevision, Node, PersistentVolumeClaim, Pod, StorageClass } from '../kube/types.ts';
import type { Clock } from '../runtime/clock.ts';
import { Controller, type ControllerMetrics } from '../runtime/controller.ts';
import type { Priority } from '../runtime/workqueue.ts';
import { EventRecorder } from '../runtime/events.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import { Informer, type InformerStats } from '../runtime/informer.ts';
import { startResync } from '../runtime/resync.ts';
import { indexByNamespace, indexByOwnerUid } from '../runtime/store.ts';
import { defaultControllerRateLimiter, type RateLimiterOptions } from '../runtime/rate-limiter.ts';
import { Interner, podTransform, shareTemplates, transformNode } from './cache-transforms.ts';
import { podEventBatchMs, type PodEventBatch } from './pod-event-batch.ts';
import { cloneSetHandlers, newPodEventCounts, podHandlers, pvcHandlers, revisionHandlers, type PodEventCounts } from './event-handlers.ts';
import { randomInstanceIdSource, type InstanceIdSource } from './plan/instance-ids.ts';
import type { SurgeRule } from './plan/replica-diff.ts';
import { apiEventSink, apiImagePullJobControl, apiPorts, type Ports } from './ports.ts';
import { discoverInPlaceCapabilities } from './predownload-sync.ts';
import { reconcileCloneSet } from './reconciler.ts';
import { RevisionMemo } from './revision-memo.ts';
import type { RolloutObserver } from './rollout-observer.ts';
import { type CloneSetStores, INDEX_NAMESPACE, INDEX_ORPHAN_NAMESPACE, INDEX_OWNER_UID, INDEX_RETAINED_BY, indexByRetainedBy, indexOrphansByNamespace } from './snapshot.ts';

interface Runnable {
  start(signal: AbortSignal): void;
  waitForSync(signal?: AbortSignal): Promise<void>;
  hasSynced(): boolean;
  /** Lists started and done: the simulation (sim/scale.ts) tells from them when a relist is over. */
  readonly stats: Readonly<InformerStats>;
}

/** The flags the manager reads: config.ts's ControllerConfig has them (declared here so cloneset/ never imports the CLI). */
export interface CloneSetManagerConfig {
  readonly namespace?: string | undefined;
  readonly workers: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDelete: boolean;
  readonly surgeRule: SurgeRule;
  readonly expectationTimeoutMs: number;
  /** --sync-period: every CloneSet is reconciled at least this often; 0 or absent = never. */
  readonly syncPeriodMs?: number;
  readonly rateLimiter: Partial<RateLimiterOptions>;
  /** The batch period's rule (pod-event-batch.ts); absent: DEFAULT_POD_EVENT_BATCH. No flag sets it: the simulation does. */
  readonly podEventBatch?: PodEventBatch | undefined;
}

/** What the metrics endpoint gives the manager to report to (main.ts; absent in tests that do not look). */
export interface ManagerObservability {
  readonly controllerMetrics?: ControllerMetrics;
  readonly rollouts?: RolloutObserver;
}

export interface CloneSetManager {
  readonly controller: Controller;
  /** The caches (the per-CloneSet metrics read them when scraped). */
  readonly stores: CloneSetStores;
  readonly informers: readonly Runnable[];
  /** Pod informer events by what they did (cloneset_pod_events_total), a copy. */
  podEvents(): PodEventCounts;
  /** Resolves when every cache has synced. */
  readonly synced: Promise<void>;
  /** Resolves after the workers drained and the watches stopped. */
  readonly done: Promise<void>;
}

/**
 * `eventsClient` has its own rate limiter (as controller-runtime's event broadcaster does), so recording
 * 1 000 SuccessfulCreate events never slows the 1 000 pod creations down.
 * `signal` stops the manager: the queue takes no more keys, reconciles and the executor start no more writes
 * (slow-start batches included), the watches end. With leader election the clients are fenced views
 * (`KubeClient.fenced`) that also cut in-flight requests when the lease is lost (leadership.ts).
 */
export function startCloneSetManager(
  client: KubeClient,
  eventsClient: KubeClient,
  config: CloneSetManagerConfig,
  clock: Clock,
  logger: Logger,
  signal: AbortSignal,
  observability: ManagerObservability = {},
  /** The source of new instance ids (the simulation seeds it; crypto-random otherwise). */
  ids: InstanceIdSource = randomInstanceIdSource((n) => randomInt(n)),
): CloneSetManager {
  const ns = config.namespace;
  const common = { client, clock, logger, ...(ns !== undefined ? { namespace: ns } : {}) };
  // One internal model: the storage version is watched (the API server converts nothing) and each object is
  // mapped to the internal shape once, when it enters the cache (api/conversion.ts). An unchanged template
  // stays the same object from version to version, so its revision hash is computed once (revision-memo.ts).
  const templates = new Interner(1024);
  const cloneSets = new Informer<CloneSet>({
    ...common,
    resource: CLONESETS_V1BETA1,
    indexers: { [INDEX_NAMESPACE]: indexByNamespace },
    transform: (stored) => shareTemplates(cloneSetFromV1beta1(stored as unknown as CloneSetV1beta1), templates),
  });
  // Only what the controller reads is cached (cache-transforms.ts): most pods and every node are not ours.
  const pods = new Informer<Pod>({ ...common, resource: PODS, indexers: { [INDEX_OWNER_UID]: indexByOwnerUid }, transform: podTransform() });
  const pvcs = new Informer<PersistentVolumeClaim>({ ...common, resource: PVCS, indexers: { [INDEX_OWNER_UID]: indexByOwnerUid, [INDEX_RETAINED_BY]: indexByRetainedBy } });
  // A CloneSet reads its own revisions and its namespace's orphans (snapshot.ts revisionsOf), never the namespace's.
  const revisions = new Informer<ControllerRevision>({
    ...common,
    resource: CONTROLLER_REVISIONS,
    indexers: { [INDEX_OWNER_UID]: indexByOwnerUid, [INDEX_ORPHAN_NAMESPACE]: indexOrphansByNamespace },
  });
  const nodes = new Informer<Node>({ client, clock, logger, resource: NODES, transform: transformNode });
  // Cluster-scoped, a handful of objects: whether a class allows volume expansion (docs/features.md#pvc-resize-in-place).
  const storageClasses = new Informer<StorageClass>({ client, clock, logger, resource: STORAGE_CLASSES });

  const scaleExpectations = new ScaleExpectations(clock, config.expectationTimeoutMs);
  const rvExpectations = new ResourceVersionExpectations(clock, config.expectationTimeoutMs);
  const recorder = new EventRecorder({
    sink: apiEventSink(eventsClient),
    clock,
    logger,
  });
  const stores = { cloneSets: cloneSets.store, pods: pods.store, pvcs: pvcs.store, revisions: revisions.store, nodes: nodes.store, storageClasses: storageClasses.store };
  // Decided once at start-up (before the workers start): the pods/resize subresource and the ImagePullJob kind.
  const discovery = discoverInPlaceCapabilities(client, logger);
  const reconcileConfig = {
    gates: config.gates,
    excludePreparingDelete: config.excludePreparingDelete,
    surgeRule: config.surgeRule,
    resizeSubresource: false,
  };
  let preDownload = false;
  const basePorts = apiPorts(client);
  let ports: Ports = basePorts;
  const deps = {
    get preDownload(): boolean {
      return preDownload;
    },
    get ports(): Ports {
      return ports;
    },
    cleanedPreDownloads: new Set<string>(),
    revisionDerivations: new RevisionMemo(),
    stores,
    scaleExpectations,
    rvExpectations,
    recorder,
    clock,
    config: reconcileConfig,
    ids,
    logger,
    signal,
    rollouts: observability.rollouts,
  };
  // A new term recomputes every CloneSet's rollout state: nothing from an earlier term (or a deleted CloneSet) stays.
  observability.rollouts?.reset();
  const controller = new Controller({
    name: 'cloneset-controller',
    workers: config.workers,
    reconcile: (key) => reconcileCloneSet(key, deps),
    clock,
    logger,
    rateLimiter: defaultControllerRateLimiter(clock, config.rateLimiter),
    ...(observability.controllerMetrics !== undefined ? { metrics: observability.controllerMetrics } : {}),
  });
  const enqueue = (key: string): void => controller.enqueue(key);
  // A pod event, or a change of a CloneSet's status only, wakes the CloneSet after the batch period of its size
  // (pod-event-batch.ts): a burst of pod events for a large CloneSet, and the echoes of its own status writes, cost
  // a bounded number of passes, each of which reads all its pods.
  const batched =
    (priority: Priority) =>
    (key: string): void => {
      const ms = podEventBatchMs(cloneSets.store.get(key), config.podEventBatch);
      if (ms > 0) controller.enqueueAfter(key, ms, priority);
      else controller.enqueue(key, priority);
    };
  cloneSets.addHandlers(cloneSetHandlers(enqueue, rvExpectations, batched('normal')));
  const podEvents = newPodEventCounts();
  // A pod event reports progress of work under way (created, scheduled, Running, Ready, gone): its pass goes in the
  // work queue's progress lane, before the first passes of CloneSets still waiting to start (runtime/workqueue.ts).
  pods.addHandlers(podHandlers(batched('progress'), scaleExpectations, rvExpectations, cloneSets.store, podEvents));
  pvcs.addHandlers(pvcHandlers(enqueue, scaleExpectations));
  revisions.addHandlers(revisionHandlers(enqueue, scaleExpectations, rvExpectations));

  const informers: readonly Runnable[] = [cloneSets, pods, pvcs, revisions, nodes, storageClasses];
  for (const inf of informers) inf.start(signal);
  const synced = Promise.all(informers.map((inf) => inf.waitForSync(signal))).then(() => undefined);
  // Workers start only after every cache has synced: a half-filled cache would look like missing pods.
  const done = synced.then(async () => {
    const caps = await discovery;
    reconcileConfig.resizeSubresource = caps.resizeSubresource;
    if (config.gates.PreDownloadImageForInPlaceUpdate && config.gates.KruiseDaemon) {
      if (caps.imagePullJob) {
        ports = { ...basePorts, imagePullJobs: apiImagePullJobControl(client) };
        preDownload = true;
      } else {
        logger.info('PreDownloadImageForInPlaceUpdate: the ImagePullJob kind (apps.kruise.io/v1alpha1) is not served; image pre-download is off');
      }
    }
    logger.info({ namespace: ns ?? '(all)', workers: config.workers }, 'caches synced; starting workers');
    startResync(clock, config.syncPeriodMs ?? 0, () => cloneSets.store.list().map((cs) => `${cs.metadata.namespace ?? ''}/${cs.metadata.name ?? ''}`), enqueue, signal);
    return controller.run(signal);
  });
  return { controller, stores, informers, synced, done, podEvents: () => structuredClone(podEvents) };
}
