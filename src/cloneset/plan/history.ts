// Which ControllerRevisions history truncation deletes (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go), decided purely; plan/pass.ts makes it a TruncateHistory action, execute-cloneset.ts deletes them.
import type { CloneSet } from '../../api/cloneset.ts';
import { DEFAULT_REVISION_HISTORY_LIMIT } from '../../api/well-known.ts';
import type { ControllerRevision, Pod } from '../../kube/types.ts';
import { revisionMatches } from './pod-predicates.ts';
import { sortRevisions } from './revisions.ts';

/**
 * The oldest revisions that are neither current, update, nor used by a claimed pod, beyond revisionHistoryLimit
 * of them, oldest first.
 */
export function revisionsToTruncate(
  cloneSet: CloneSet,
  revisions: readonly ControllerRevision[],
  pods: readonly Pod[],
  live: { readonly current: string; readonly update: string },
): ControllerRevision[] {
  const limit = cloneSet.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
  const isLive = (rev: ControllerRevision): boolean => {
    const name = rev.metadata.name ?? '';
    return name === live.current || name === live.update || pods.some((p) => revisionMatches(p, name));
  };
  const nonLive = sortRevisions(revisions).filter((r) => !isLive(r));
  return nonLive.slice(0, Math.max(0, nonLive.length - limit));
}
