// Which apps.kruise.io version the plugin reads and writes: the one the API server prefers (discovery's
// preferredVersion, as kubectl picks it). Our CRD and Kruise's prefer v1beta1, the storage version, where
// `type: OnDelete` is valid; through v1alpha1 Kruise's admission (and ours) refuses any write to such a CloneSet.
// The plugin's logic works on the controller's internal model (v1alpha1-shaped, `cloneSetFromV1beta1`), so a
// read is mapped into it and a write, a merge patch of that model, is re-expressed for the served version: the
// rollout fields move under `updateStrategy.rollingUpdate`, the rest (replicas, template, metadata) has the same
// path in both. Not through the conversion webhook's mapping: it drops every rollingUpdate field of an OnDelete
// CloneSet, which v1beta1 keeps. Pure but for `discoverCloneSetApi`.
import type { CloneSet } from '../api/cloneset.ts';
import type { CloneSetV1beta1 } from '../api/cloneset-v1beta1.ts';
import { cloneSetFromV1beta1 } from '../api/conversion.ts';
import { ApiError } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { CLONESETS, CLONESETS_V1BETA1, type ResourceRef } from '../kube/resources.ts';
import { hasRollingUpdate } from '../api/conversion.ts';

export interface CloneSetApi {
  /** The served version the plugin talks to. */
  readonly resource: ResourceRef;
  /** An object of that version, as the controller's internal model. */
  readonly toInternal: (obj: CloneSet) => CloneSet;
  /** A merge patch of the internal model of `current`, as a merge patch of the served version. */
  readonly patchFor: (current: CloneSet, patch: unknown) => unknown;
}

const V1ALPHA1_API: CloneSetApi = { resource: CLONESETS, toInternal: (o) => o, patchFor: (_c, p) => p };

/** The internal updateStrategy fields that v1beta1 keeps under `rollingUpdate`. */
const ROLLING_UPDATE_FIELDS = new Set(['partition', 'maxUnavailable', 'maxSurge', 'paused']);

type PatchObject = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is PatchObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An internal-model merge patch as a v1beta1 merge patch (see the file comment). */
export function v1beta1Patch(current: CloneSet, patch: unknown): unknown {
  if (!isObject(patch) || !isObject(patch['spec']) || !isObject(patch['spec']['updateStrategy'])) return patch;
  const { updateStrategy, ...spec } = patch['spec'];
  const rolling: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(updateStrategy)) {
    if (!ROLLING_UPDATE_FIELDS.has(k)) throw new Error(`kubectl-cloneset cannot write spec.updateStrategy.${k} through apps.kruise.io/v1beta1`);
    rolling[k] = v;
  }
  // A new rollingUpdate block on an OnDelete CloneSet gets what admission requires of one (a partition, and a
  // maxUnavailable of at least one pod), with the values Kruise defaults for RollingUpdate: partition 0 expects
  // every pod on the update revision as before (docs/features.md#status-counters), and OnDelete updates no pod
  // by itself, so neither changes what happens.
  if (!hasRollingUpdate(current)) {
    if (!('partition' in rolling)) rolling['partition'] = 0;
    if (!('maxUnavailable' in rolling)) rolling['maxUnavailable'] = '20%';
  }
  return { ...patch, spec: { ...spec, updateStrategy: { rollingUpdate: rolling } } };
}

const V1BETA1_API: CloneSetApi = {
  resource: CLONESETS_V1BETA1,
  toInternal: (o) => cloneSetFromV1beta1(o as unknown as CloneSetV1beta1),
  patchFor: v1beta1Patch,
};

/** The API for a preferred version name ("v1beta1", "v1alpha1"); undefined for a version this plugin does not know. */
export function cloneSetApiFor(version: string): CloneSetApi | undefined {
  if (version === 'v1beta1') return V1BETA1_API;
  if (version === 'v1alpha1') return V1ALPHA1_API;
  return undefined;
}

interface ApiGroup {
  readonly preferredVersion?: { readonly version?: string };
  readonly versions?: readonly { readonly version?: string }[];
}

/**
 * Asks discovery (GET /apis/apps.kruise.io) for the preferred version. A server without the group answers 404:
 * then the CRD is missing, which `getCloneSet` reports with what to do; v1alpha1 is used until then.
 */
export async function discoverCloneSetApi(client: KubeClient): Promise<CloneSetApi> {
  let group: ApiGroup;
  try {
    group = await client.getPath<ApiGroup>('/apis/apps.kruise.io');
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return V1ALPHA1_API;
    throw e;
  }
  const preferred = cloneSetApiFor(group.preferredVersion?.version ?? '');
  if (preferred !== undefined) return preferred;
  // A newer preferred version this plugin does not know: the newest one it does.
  const served = new Set((group.versions ?? []).map((v) => v.version));
  return served.has('v1beta1') ? V1BETA1_API : V1ALPHA1_API;
}
