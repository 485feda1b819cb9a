// The start-up discovery of what the API server offers the in-place engine (the ImagePullJob kind, the
// pods/resize subresource). The image pre-download itself is planned in plan/pass.ts and written by the executor
// (execute-cloneset.ts).
import type { Logger } from 'pino';
import { errorText, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { IMAGE_PULL_JOB_API_VERSION } from './inplace/predownload.ts';

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
  const parts = gitVersion
    .replace(/^v/, '')
    .split('.', 3)
    .map((p) => /^\d*/.exec(p)?.[0] ?? '');
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
