// Writes the shortened scaleStrategy.podsToDelete that plan/pods-to-delete.ts decides (docs/features.md#reconcile-pass; Kruise pkg/controller/cloneset/cloneset_controller.go).
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import { errorText } from '../kube/api-error.ts';
import type { Pod } from '../kube/types.ts';
import { truncatedPodsToDelete } from './plan/pods-to-delete.ts';
import type { Ports } from './ports.ts';

export async function truncatePodsToDelete(cloneSet: CloneSet, claimed: readonly Pod[], ports: Ports, logger: Logger): Promise<void> {
  const kept = truncatedPodsToDelete(cloneSet, claimed);
  if (kept === undefined) return;
  const list = cloneSet.spec.scaleStrategy?.podsToDelete ?? [];
  // JSON patch with a test: if the user changed the list meanwhile, the patch fails and nothing is lost.
  const path = '/spec/scaleStrategy/podsToDelete';
  try {
    await ports.cloneSets.patchCloneSet(cloneSet.metadata.namespace ?? '', cloneSet.metadata.name ?? '', [
      { op: 'test', path, value: list },
      { op: 'replace', path, value: kept },
    ], 'json');
  } catch (e) {
    logger.info({ cloneset: cloneSet.metadata.name, err: errorText(e) }, 'podsToDelete truncation deferred');
  }
}
