// Keeps scaleStrategy.podsToDelete to names of pods that still exist (spec §6 step 16).
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import { errorText } from '../kube/api-error.ts';
import type { Pod } from '../kube/types.ts';
import type { Ports } from './ports.ts';

export async function truncatePodsToDelete(cloneSet: CloneSet, claimed: readonly Pod[], ports: Ports, logger: Logger): Promise<void> {
  const list = cloneSet.spec.scaleStrategy?.podsToDelete;
  if (list === undefined || list.length === 0) return;
  const live = new Set(claimed.map((p) => p.metadata.name));
  const kept = list.filter((name) => live.has(name));
  if (kept.length === list.length) return;
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
