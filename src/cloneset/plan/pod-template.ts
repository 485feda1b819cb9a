// Builds the Pod and PVC objects the controller creates for one instance id (docs/features.md#scaling, #pvcs; Kruise pkg/controller/cloneset/core/cloneset_core.go).
import { KIND, OWNER_API_VERSION, type CloneSet } from '../../api/cloneset.ts';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_REVISION_HASH,
} from '../../api/well-known.ts';
import type { OwnerReference, PersistentVolumeClaim, Pod, PodTemplateSpec, Volume } from '../../kube/types.ts';
import { shortHash } from './pod-predicates.ts';
import { usesMarkPodNotReady } from './pod-readiness.ts';
import { rfc3339 } from '../../kube/time.ts';

export interface NewPodOptions {
  /** Feature gate CloneSetShortHash: the revision label holds the bare hash. */
  readonly shortHashLabel: boolean;
  readonly nowMs: number;
}

// Go's time.Format(RFC3339) in UTC: second precision, `Z` suffix (the lifecycle timestamp, Kruise pkg/util/lifecycle/lifecycle_utils.go); re-exported for the planner's users.
export { rfc3339 };

export function controllerRefTo(cloneSet: CloneSet): OwnerReference {
  return {
    apiVersion: OWNER_API_VERSION,
    kind: KIND,
    name: cloneSet.metadata.name ?? '',
    uid: cloneSet.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function pvcName(templateName: string, cloneSetName: string, instanceId: string): string {
  return `${templateName}-${cloneSetName}-${instanceId}`;
}

/**
 * The pod for `instanceId` at `revisionName`, whose template is the one stored in that revision.
 * Every pod gets the InPlaceUpdateReady readiness gate, whatever the update policy (docs/features.md#scaling; Kruise pkg/controller/cloneset/core/cloneset_core.go), and the
 * KruisePodReady gate when a lifecycle hook uses markPodNotReady (docs/features.md#markpodnotready; Kruise pkg/util/podreadiness/pod_readiness.go).
 */
export function newPod(cloneSet: CloneSet, template: PodTemplateSpec, revisionName: string, instanceId: string, opts: NewPodOptions): Pod {
  const name = cloneSet.metadata.name ?? '';
  const meta = template.metadata ?? {};
  const hash = shortHash(revisionName);
  const labels: Record<string, string> = {
    ...(meta.labels ?? {}),
    [LABEL_REVISION_HASH]: opts.shortHashLabel ? hash : revisionName,
    [LABEL_POD_TEMPLATE_HASH]: hash,
    [LABEL_INSTANCE_ID]: instanceId,
    [LABEL_LIFECYCLE_STATE]: 'PreparingNormal',
  };
  const annotations: Record<string, string> = {
    ...(meta.annotations ?? {}),
    [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339(opts.nowMs),
  };
  const readinessGates = [...(template.spec.readinessGates ?? [])];
  const addGate = (conditionType: string): void => {
    if (!readinessGates.some((g) => g.conditionType === conditionType)) readinessGates.push({ conditionType });
  };
  addGate(CONDITION_INPLACE_UPDATE_READY);
  // Kruise's pod webhook injects KruisePodReady; without a webhook we add it ourselves, only for CloneSets whose
  // hooks use markPodNotReady (the only writer of the condition besides its initialisation, pod-readiness.ts).
  if (usesMarkPodNotReady(cloneSet)) addGate(CONDITION_KRUISE_POD_READY);
  const volumes = volumesFor(cloneSet, template, instanceId);
  const spec = { ...template.spec, readinessGates, ...(volumes.length > 0 ? { volumes } : {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${instanceId}`,
      generateName: `${name}-`,
      namespace: cloneSet.metadata.namespace ?? '',
      labels,
      annotations,
      ...(meta.finalizers !== undefined ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [controllerRefTo(cloneSet)],
    },
    spec,
  };
}

/** Claim-template volumes first, then the template's own volumes that do not collide by name. */
function volumesFor(cloneSet: CloneSet, template: PodTemplateSpec, instanceId: string): Volume[] {
  const claims = cloneSet.spec.volumeClaimTemplates ?? [];
  const claimNames = new Set(claims.map((c) => c.metadata.name ?? ''));
  const name = cloneSet.metadata.name ?? '';
  return [
    ...claims.map((c) => ({
      name: c.metadata.name ?? '',
      persistentVolumeClaim: { claimName: pvcName(c.metadata.name ?? '', name, instanceId), readOnly: false },
    })),
    ...(template.spec.volumes ?? []).filter((v) => !claimNames.has(v.name)),
  ];
}

/** One PVC per volume claim template, labelled with the selector's matchLabels and the instance id. */
export function pvcsFor(cloneSet: CloneSet, instanceId: string): PersistentVolumeClaim[] {
  const name = cloneSet.metadata.name ?? '';
  return (cloneSet.spec.volumeClaimTemplates ?? []).map((t) => ({
    ...t,
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      ...t.metadata,
      name: pvcName(t.metadata.name ?? '', name, instanceId),
      namespace: cloneSet.metadata.namespace ?? '',
      labels: {
        ...(t.metadata.labels ?? {}),
        ...(cloneSet.spec.selector.matchLabels ?? {}),
        [LABEL_INSTANCE_ID]: instanceId,
      },
      ownerReferences: [...(t.metadata.ownerReferences ?? []), controllerRefTo(cloneSet)],
    },
  }));
}
