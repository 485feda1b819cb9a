// The narrow write ports of the CloneSet controller, named after what they control. Only the executor talks to
// these (tools/architecture/api-writes.ts checks it), through write-policy.ts; apiPorts implements them on the
// Kubernetes client, tests may record calls instead.
import type { CloneSet, CloneSetStatus } from '../api/cloneset.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../kube/types.ts';
import type { KubeClient, PatchType, WrittenObject } from '../kube/client.ts';
import { CLONESETS_V1BETA1, CONTROLLER_REVISIONS, EVENTS, PODS, PVCS, type ResourceRef } from '../kube/resources.ts';
import type { EventSink } from '../runtime/events.ts';
import type { ImagePullJob } from './inplace/image-pull-job.ts';
import { KIND, STORAGE_API_VERSION } from '../api/cloneset.ts';

export type { PatchType, WrittenObject };

/**
 * The pod writes answer with the pod's metadata only (its resourceVersion is all the executor reads of an answer:
 * the expectation of what the cache must show next), so the API server encodes and we parse about half of each
 * answer (docs/performance.md, "Write answers as metadata").
 */
export interface PodControl {
  createPod(namespace: string, pod: Pod): Promise<WrittenObject>;
  /** Deletes exactly this incarnation: a different pod with the same name is left alone. */
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
  /** A live read (not the cache): only to re-check an in-place update's guard after a 409. */
  getPod(namespace: string, name: string): Promise<Pod>;
  patchPod(namespace: string, name: string, patch: unknown, type: PatchType): Promise<WrittenObject>;
  patchPodStatus(namespace: string, name: string, patch: unknown, type: PatchType): Promise<WrittenObject>;
  /** PATCH pods/<name>/resize (strategic merge): in-place cpu/memory changes on servers ≥ 1.32. */
  patchPodResize(namespace: string, name: string, patch: unknown): Promise<WrittenObject>;
}

export interface PvcControl {
  createPvc(namespace: string, pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** With `uid`, deletes exactly this incarnation (a PVC re-created under the same name is left alone). */
  deletePvc(namespace: string, name: string, uid?: string): Promise<void>;
  patchPvc(namespace: string, name: string, patch: unknown, type: PatchType): Promise<PersistentVolumeClaim>;
}

export interface RevisionControl {
  /** `encoded` is the exact JSON body (see encodeControllerRevision): `data` bytes must not be re-serialised. */
  createRevision(namespace: string, name: string, encoded: string): Promise<ControllerRevision>;
  /** PUT guarded by the revision's resourceVersion (in `encoded`). */
  updateRevision(namespace: string, name: string, encoded: string): Promise<ControllerRevision>;
  getRevision(namespace: string, name: string): Promise<ControllerRevision>;
  patchRevision(namespace: string, name: string, patch: unknown): Promise<ControllerRevision>;
  /** With `uid`, deletes exactly this incarnation. */
  deleteRevision(namespace: string, name: string, uid?: string): Promise<void>;
}

export interface CloneSetWriter {
  /** Replaces the status through the status subresource, guarded by the cached resourceVersion. */
  updateStatus(cloneSet: CloneSet, status: CloneSetStatus): Promise<CloneSet>;
  patchCloneSet(namespace: string, name: string, patch: unknown, type: PatchType): Promise<CloneSet>;
}

export const IMAGE_PULL_JOBS: ResourceRef = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs', namespaced: true };

/** ImagePullJobs of the image pre-download (docs/features.md#image-pre-download). */
export interface ImagePullJobControl {
  createImagePullJob(namespace: string, job: ImagePullJob): Promise<unknown>;
  /** A live list (ImagePullJobs are not cached): only when a rollout ends, once per revision and process. */
  listImagePullJobs(namespace: string): Promise<readonly ImagePullJob[]>;
  deleteImagePullJob(namespace: string, name: string): Promise<void>;
}

export interface Ports {
  readonly pods: PodControl;
  readonly pvcs: PvcControl;
  readonly revisions: RevisionControl;
  readonly cloneSets: CloneSetWriter;
  /** Only when the ImagePullJob kind is served and pre-download is on. */
  readonly imagePullJobs?: ImagePullJobControl | undefined;
}

/**
 * Where the event recorder (runtime/events.ts) writes Events: the one API write that is not the executor's, as
 * Events are observations about a pass (rate-limited and aggregated by the recorder), not part of its plan.
 */
export function apiEventSink(eventsClient: KubeClient): EventSink {
  return {
    create: (namespace, event) => eventsClient.create(EVENTS, namespace, event),
    patch: (namespace, name, patch) => eventsClient.patch(EVENTS, namespace, name, patch, 'merge'),
  };
}

export function apiImagePullJobControl(client: KubeClient): ImagePullJobControl {
  return {
    createImagePullJob: (ns, job) => client.create(IMAGE_PULL_JOBS, ns, job),
    listImagePullJobs: async (ns) => (await client.list<ImagePullJob>(IMAGE_PULL_JOBS, ns)).items,
    deleteImagePullJob: (ns, name) => client.delete(IMAGE_PULL_JOBS, ns, name),
  };
}

export function apiPorts(client: KubeClient): Ports {
  return {
    pods: {
      createPod: (ns, pod) => client.create(PODS, ns, pod, { metadataOnly: true }),
      deletePod: (ns, name, uid) => client.delete(PODS, ns, name, { preconditionUid: uid }),
      getPod: (ns, name) => client.get<Pod>(PODS, ns, name),
      patchPod: (ns, name, patch, type) => client.patch(PODS, ns, name, patch, type, { metadataOnly: true }),
      patchPodStatus: (ns, name, patch, type) => client.patch(PODS, ns, name, patch, type, { subresource: 'status', metadataOnly: true }),
      patchPodResize: (ns, name, patch) => client.patch(PODS, ns, name, patch, 'strategic', { subresource: 'resize', metadataOnly: true }),
    },
    pvcs: {
      createPvc: (ns, pvc) => client.create<PersistentVolumeClaim>(PVCS, ns, pvc),
      deletePvc: (ns, name, uid) => client.delete(PVCS, ns, name, uid !== undefined ? { preconditionUid: uid } : {}),
      patchPvc: (ns, name, patch, type) => client.patch<PersistentVolumeClaim>(PVCS, ns, name, patch, type),
    },
    revisions: {
      createRevision: (ns, _name, encoded) => client.create<ControllerRevision>(CONTROLLER_REVISIONS, ns, { rawJson: encoded }),
      updateRevision: (ns, name, encoded) => client.update<ControllerRevision>(CONTROLLER_REVISIONS, ns, name, { rawJson: encoded }),
      getRevision: (ns, name) => client.get<ControllerRevision>(CONTROLLER_REVISIONS, ns, name),
      patchRevision: (ns, name, patch) => client.patch<ControllerRevision>(CONTROLLER_REVISIONS, ns, name, patch, 'merge'),
      deleteRevision: (ns, name, uid) => client.delete(CONTROLLER_REVISIONS, ns, name, uid !== undefined ? { preconditionUid: uid } : {}),
    },
    cloneSets: {
      // Through the storage version (no conversion). The status subresource keeps everything of the stored object
      // but its status (the API server's status strategy for custom resources), so the body carries no spec: it
      // would be written out, sent and parsed on most passes for nothing. The resourceVersion makes it conditional.
      updateStatus: (cs, status) =>
        client.update<CloneSet>(
          CLONESETS_V1BETA1,
          cs.metadata.namespace,
          cs.metadata.name ?? '',
          {
            apiVersion: STORAGE_API_VERSION,
            kind: KIND,
            metadata: { name: cs.metadata.name, namespace: cs.metadata.namespace, resourceVersion: cs.metadata.resourceVersion },
            status,
          },
          { subresource: 'status' },
        ),
      // Only JSON patches of paths both versions share (spec.scaleStrategy.podsToDelete).
      patchCloneSet: (ns, name, patch, type) => client.patch<CloneSet>(CLONESETS_V1BETA1, ns, name, patch, type),
    },
  };
}
