// Image pre-download for in-place updates (docs/features.md#image-pre-download; Kruise pkg/controller/cloneset/cloneset_predownload_image.go, gate PreDownloadImageForInPlaceUpdate): which ImagePullJobs
// to create for a new update revision, or why none. Pure; the IO lives in ../predownload-sync.ts.
//
// Choice: the jobs are `apps.kruise.io/v1alpha1` ImagePullJobs (Kruise ≥ 1.8 writes v1beta1): v1alpha1 is the
// ImagePullJob version every Kruise release serves, and the job's shape is the same in both versions. Their owner
// reference points to the CloneSet as apps.kruise.io/v1beta1, as Kruise HEAD writes it. The tuning comes from
// `inPlaceUpdateStrategy.imagePreDownload*` (v1beta1); the v1alpha1 annotations
// `apps.kruise.io/image-predownload-{parallelism,timeout-seconds,min-updated-ready-pods}` become those fields
// when written through v1alpha1 (conversion, docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1alpha1/cloneset_conversion.go), and the controller never reads the annotations itself.
import type { CloneSet, InPlaceUpdateStrategy } from '../../api/cloneset.ts';
import { DEFAULT_MAX_UNAVAILABLE, LABEL_CONTROLLER_REVISION_HASH, LABEL_REVISION_HASH, type FeatureGates } from '../../api/well-known.ts';
import type { ControllerRevision, LabelSelector, PodTemplateSpec } from '../../kube/types.ts';
import { partitionAbs, partitionParses, scaledValue } from '../plan/int-or-percent.ts';
import { controllerRefTo } from '../plan/pod-template.ts';
import { templateFromRevision } from '../plan/revisions.ts';
import type { ImagePullJob } from './image-pull-job.ts';
import { updatePolicyOf } from './plan.ts';
import { calculateUpdateSpec } from './update-spec.ts';

export const IMAGE_PULL_JOB_API_VERSION = 'apps.kruise.io/v1alpha1';
export const LABEL_PREDOWNLOAD_CREATED = 'apps.kruise.io/pre-predownload-created';
export const LABEL_PREDOWNLOAD_IGNORED = 'apps.kruise.io/image-predownload-ignored';
export const ANNOTATION_PREDOWNLOAD_PARALLELISM = 'apps.kruise.io/image-predownload-parallelism';
export const ANNOTATION_PREDOWNLOAD_TIMEOUT = 'apps.kruise.io/image-predownload-timeout-seconds';
export const ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY = 'apps.kruise.io/image-predownload-min-updated-ready-pods';

/** Pre-download is skipped for CloneSets with this many replicas or fewer. */
export const PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE = 3;

export type { ImagePullJob } from './image-pull-job.ts';

export type PreDownloadPlan =
  /** Nothing to do now. */
  | { readonly kind: 'none'; readonly reason: string }
  /** The rollout is over: the CloneSet's ImagePullJobs are deleted. */
  | { readonly kind: 'cleanup' }
  /** Label the update revision `image-predownload-ignored: "true"`: pre-download does not apply to it. */
  | { readonly kind: 'ignore'; readonly reason: string }
  /** Create these jobs, then label the update revision `pre-predownload-created: "true"`. */
  | { readonly kind: 'create'; readonly jobs: readonly ImagePullJob[] };

/** The pre-download tuning: v1beta1 fields (v1alpha1 users' annotations arrive here through conversion, docs/features.md#v1beta1-and-conversion; Kruise apis/apps/v1alpha1/cloneset_conversion.go). */
function tuning(cs: CloneSet): InPlaceUpdateStrategy {
  return cs.spec.updateStrategy?.inPlaceUpdateStrategy ?? {};
}

export function planImagePreDownload(cs: CloneSet, current: ControllerRevision, update: ControllerRevision, gates: FeatureGates): PreDownloadPlan {
  const currentName = current.metadata.name ?? '';
  const updateName = update.metadata.name ?? '';
  if (currentName === updateName) return { kind: 'cleanup' };
  const minReady = tuning(cs).imagePreDownloadMinUpdatedReadyPods ?? 0;
  const updatedReady = cs.status?.updateRevision === updateName ? cs.status.updatedReadyReplicas : 0;
  if (minReady > updatedReady) return { kind: 'none', reason: `waiting for ${minReady} updated ready pods (have ${updatedReady})` };
  const labels = update.metadata.labels ?? {};
  if (labels[LABEL_PREDOWNLOAD_CREATED] !== undefined || labels[LABEL_PREDOWNLOAD_IGNORED] !== undefined) {
    return { kind: 'none', reason: 'revision already handled' };
  }
  const replicas = cs.spec.replicas ?? 1;
  const us = cs.spec.updateStrategy ?? {};
  if (updatePolicyOf(cs) === 'ReCreate') return { kind: 'ignore', reason: 'ReCreate updates pull on the new pods' };
  if (replicas <= PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE) return { kind: 'ignore', reason: `replicas ${replicas} <= ${PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE}` };
  if (!partitionParses(us.partition)) return { kind: 'none', reason: `invalid partition ${String(us.partition)}` };
  const partition = partitionAbs(us.partition, replicas);
  if (partition === 0 && scaledValue(us.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, false) >= replicas) {
    return { kind: 'ignore', reason: 'every pod is updated at once' };
  }
  const oldTemplate = templateFromRevision(current);
  const newTemplate = templateFromRevision(update);
  if (oldTemplate === undefined || newTemplate === undefined) return { kind: 'ignore', reason: 'revision without a pod template' };
  const decision = calculateUpdateSpec(
    { name: currentName, template: oldTemplate },
    { name: updateName, template: newTemplate },
    {
      gates,
      gracePeriodSeconds: us.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0,
      ignoreVolumeClaimTemplatesHashDiff: updatePolicyOf(cs) === 'InPlaceOnly',
    },
  );
  if (!decision.inPlace) return { kind: 'ignore', reason: decision.reason };
  return { kind: 'create', jobs: imagePullJobs(cs, update, oldTemplate, newTemplate) };
}

/** One job per container whose image is new or changed (docs/features.md#image-pre-download; Kruise pkg/controller/cloneset/cloneset_predownload_image.go). */
export function imagePullJobs(cs: CloneSet, update: ControllerRevision, oldTemplate: PodTemplateSpec, newTemplate: PodTemplateSpec): ImagePullJob[] {
  const updateName = update.metadata.name ?? '';
  const hashLabel = update.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';
  const labels = { ...newTemplate.metadata?.labels, [LABEL_CONTROLLER_REVISION_HASH]: hashLabel };
  const secrets = newTemplate.spec['imagePullSecrets'];
  const pullSecrets = Array.isArray(secrets)
    ? secrets.map((s: unknown) => (typeof s === 'object' && s !== null && 'name' in s && typeof s.name === 'string' ? s.name : '')).filter((n) => n !== '')
    : [];
  const selector = cs.spec.selector;
  const podSelector: LabelSelector = {
    ...(selector.matchLabels !== undefined ? { matchLabels: { ...selector.matchLabels } } : {}),
    matchExpressions: [...(selector.matchExpressions ?? []), { key: LABEL_REVISION_HASH, operator: 'NotIn', values: [updateName, hashLabel] }],
  };
  const parallelism = tuning(cs).imagePreDownloadParallelism ?? 1;
  const timeoutSeconds = tuning(cs).imagePreDownloadTimeoutSeconds ?? 300;
  const annotations = newTemplate.metadata?.annotations;
  const jobs: ImagePullJob[] = [];
  for (const c of newTemplate.spec.containers) {
    const before = oldTemplate.spec.containers.find((o) => o.name === c.name);
    if (c.image === undefined || c.image === '' || before?.image === c.image) continue;
    jobs.push({
      apiVersion: IMAGE_PULL_JOB_API_VERSION,
      kind: 'ImagePullJob',
      metadata: {
        name: `${updateName}-${c.name}`,
        ...(cs.metadata.namespace !== undefined ? { namespace: cs.metadata.namespace } : {}),
        labels,
        ownerReferences: [controllerRefTo(cs)],
      },
      spec: {
        image: c.image,
        ...(pullSecrets.length > 0 ? { pullSecrets } : {}),
        podSelector,
        parallelism,
        pullPolicy: { backoffLimit: 1, timeoutSeconds },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { ...(annotations !== undefined ? { annotations: { ...annotations } } : {}), labels },
      },
    });
  }
  return jobs;
}
