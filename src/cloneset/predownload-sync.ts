// The IO half of image pre-download (docs/features.md#image-pre-download; Kruise pkg/controller/cloneset/cloneset_predownload_image.go) and the start-up discovery of what the API server offers the
// in-place engine (the ImagePullJob kind, the pods/resize subresource). Errors of the pre-download are only
// logged: it is an optimisation and never fails a reconcile.
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import type { FeatureGates } from '../api/well-known.ts';
import { errorText, isAlreadyExists, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import type { ResourceRef } from '../kube/resources.ts';
import type { ControllerRevision } from '../kube/types.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResolvedRevisions } from './plan/resolved-revisions.ts';
import type { RevisionControl } from './ports.ts';
import { IMAGE_PULL_JOB_API_VERSION, LABEL_PREDOWNLOAD_CREATED, LABEL_PREDOWNLOAD_IGNORED, planImagePreDownload, type ImagePullJob } from './inplace/predownload.ts';

export const IMAGE_PULL_JOBS: ResourceRef = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs', namespaced: true };

export interface ImagePullJobPort {
  create(namespace: string, job: ImagePullJob): Promise<unknown>;
  list(namespace: string): Promise<readonly ImagePullJob[]>;
  delete(namespace: string, name: string): Promise<void>;
}

export function apiImagePullJobPort(client: KubeClient): ImagePullJobPort {
  return {
    create: (ns, job) => client.create(IMAGE_PULL_JOBS, ns, job),
    list: async (ns) => (await client.list<ImagePullJob>(IMAGE_PULL_JOBS, ns)).items,
    delete: (ns, name) => client.delete(IMAGE_PULL_JOBS, ns, name),
  };
}

export interface PreDownloaderOptions {
  readonly jobs: ImagePullJobPort;
  readonly revisions: RevisionControl;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly gates: FeatureGates;
}

export class ImagePreDownloader {
  readonly #o: PreDownloaderOptions;
  /** Update revisions whose jobs this process already cleaned up (a restart cleans once more, harmlessly). */
  readonly #cleaned = new Set<string>();

  constructor(o: PreDownloaderOptions) {
    this.#o = o;
  }

  /** docs/features.md#image-pre-download (Kruise pkg/controller/cloneset/cloneset_predownload_image.go) for one reconcile (after the expectation checks, before scale/update). Never throws. */
  async sync(cs: CloneSet, revisions: ResolvedRevisions): Promise<void> {
    const find = (name: string): ControllerRevision | undefined => revisions.history?.find((r) => r.metadata.name === name);
    const current = find(revisions.current.name);
    const update = find(revisions.update.name);
    if (current === undefined || update === undefined) return;
    const ns = cs.metadata.namespace ?? '';
    const log = this.#o.logger.child({ cloneset: `${ns}/${cs.metadata.name ?? ''}`, revision: update.metadata.name });
    try {
      const plan = planImagePreDownload(cs, current, update, this.#o.gates);
      switch (plan.kind) {
        case 'none':
          return;
        case 'cleanup':
          await this.#cleanup(cs, update);
          return;
        case 'ignore':
          log.debug({ reason: plan.reason }, 'image pre-download does not apply');
          await this.#o.revisions.patchRevision(ns, update.metadata.name ?? '', { metadata: { labels: { [LABEL_PREDOWNLOAD_IGNORED]: 'true' } } });
          return;
        case 'create':
          for (const job of plan.jobs) {
            const name = job.metadata.name ?? '';
            try {
              await this.#o.jobs.create(ns, job);
              this.#o.recorder.event(cs, 'Normal', 'CreatedImagePullJob', `created ImagePullJob ${name} for image: ${job.spec.image}`);
            } catch (e) {
              if (isAlreadyExists(e)) continue;
              this.#o.recorder.event(cs, 'Normal', 'FailedCreateImagePullJob', `failed to create ImagePullJob ${name}: ${errorText(e)}`);
            }
          }
          await this.#o.revisions.patchRevision(ns, update.metadata.name ?? '', { metadata: { labels: { [LABEL_PREDOWNLOAD_CREATED]: 'true' } } });
          return;
      }
    } catch (e) {
      log.info({ err: errorText(e) }, 'image pre-download failed; carrying on');
    }
  }

  /** Revisions equal: delete the CloneSet's ImagePullJobs, once per pre-downloaded revision and process. */
  async #cleanup(cs: CloneSet, rev: ControllerRevision): Promise<void> {
    const key = `${cs.metadata.uid ?? ''}/${rev.metadata.name ?? ''}`;
    if (rev.metadata.labels?.[LABEL_PREDOWNLOAD_CREATED] === undefined || this.#cleaned.has(key)) return;
    const ns = cs.metadata.namespace ?? '';
    for (const job of await this.#o.jobs.list(ns)) {
      const owner = controllerRefOf(job);
      if (owner?.uid !== cs.metadata.uid) continue;
      try {
        await this.#o.jobs.delete(ns, job.metadata.name ?? '');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    this.#cleaned.add(key);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Discovery (once, at start-up)

export interface InPlaceCapabilities {
  /** `pods/<name>/resize` exists (Kubernetes ≥ 1.32, decided from the server's gitVersion like Kruise). */
  readonly resizeSubresource: boolean;
  /** The ImagePullJob kind of apps.kruise.io/v1alpha1 is served. */
  readonly imagePullJob: boolean;
}

/**
 * Kruise's version rule (docs/features.md#in-place-resources; Kruise pkg/util/inplaceupdate/inplace_update_vertical.go): leading `v` dropped, at most 3 dot-separated parts, each cut to its leading
 * digits, compared with 1.32.0; anything that does not then read as X.Y.Z counts as older.
 */
export function isAtLeast132(gitVersion: string): boolean {
  const parts = gitVersion.replace(/^v/, '').split('.', 3).map((p) => /^\d*/.exec(p)?.[0] ?? '');
  if (parts.length !== 3 || parts.some((p) => p === '')) return false;
  const [major, minor] = parts.map(Number);
  if (major === undefined || minor === undefined) return false;
  return major > 1 || (major === 1 && minor >= 32);
}

export async function discoverInPlaceCapabilities(client: KubeClient, logger: Logger): Promise<InPlaceCapabilities> {
  let resizeSubresource = false;
  try {
    const version = await client.getPath<{ gitVersion?: string }>('/version');
    resizeSubresource = isAtLeast132(version.gitVersion ?? '');
    logger.info({ gitVersion: version.gitVersion, resizeSubresource }, 'API server version');
  } catch (e) {
    logger.warn({ err: errorText(e) }, 'could not read the API server version; in-place resource changes go into the pod spec');
  }
  let imagePullJob = false;
  try {
    const list = await client.getPath<{ resources?: readonly { name?: string; kind?: string }[] }>(`/apis/${IMAGE_PULL_JOB_API_VERSION}`);
    imagePullJob = (list.resources ?? []).some((r) => r.kind === 'ImagePullJob' && r.name === 'imagepulljobs');
  } catch (e) {
    if (!isNotFound(e)) logger.warn({ err: errorText(e) }, 'could not discover ImagePullJob');
  }
  return { resizeSubresource, imagePullJob };
}
