// syncRevisions: makes sure a ControllerRevision exists for the current template and picks the current and
// update revisions (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go) — the IO half of plan/revisions.ts; and truncateHistory.
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import { errorText, isAlreadyExists } from '../kube/api-error.ts';
import type { ControllerRevision, Pod } from '../kube/types.ts';
import { revisionsToTruncate } from './plan/history.ts';
import type { ResolvedRevisions } from './plan/index.ts';
import {
  chooseRevisions,
  encodeControllerRevision,
  renameForCollision,
  revisionDataBytes,
  templateFromRevision,
} from './plan/revisions.ts';
import type { RevisionTemplate } from './plan/scale.ts';
import type { Ports } from './ports.ts';

/** Hash collisions are astronomically rare; a bound keeps a broken API server from looping us forever. */
const MAX_COLLISION_RETRIES = 100;

export async function syncRevisions(cloneSet: CloneSet, revisions: readonly ControllerRevision[], ports: Ports): Promise<ResolvedRevisions> {
  const ns = cloneSet.metadata.namespace ?? '';
  const choice = chooseRevisions(cloneSet, revisions);
  switch (choice.kind) {
    case 'use':
      return resolved(choice.current, choice.update, choice.collisionCount, revisions);
    case 'bumpExisting': {
      // A rollback to an older template reuses that revision under a new number (no new name).
      const update = await ports.revisions.updateRevision(ns, choice.updated.metadata.name ?? '', encodeControllerRevision(choice.updated));
      const current = choice.current === undefined || choice.current.metadata.name === update.metadata.name ? update : choice.current;
      return resolved(current, update, choice.collisionCount, withRevision(revisions, update));
    }
    case 'create': {
      let candidate = choice.candidate;
      let collisionCount = choice.collisionCount;
      for (let attempt = 0; ; attempt++) {
        const name = candidate.metadata.name ?? '';
        try {
          const update = await ports.revisions.createRevision(ns, name, encodeControllerRevision(candidate));
          return resolved(choice.current ?? update, update, collisionCount, withRevision(revisions, update));
        } catch (e) {
          if (!isAlreadyExists(e) || attempt >= MAX_COLLISION_RETRIES) throw e;
          const existing = await ports.revisions.getRevision(ns, name);
          // Same bytes: our own earlier create (the cache lagged). Different bytes: a hash collision.
          if (revisionDataBytes(existing) === revisionDataBytes(candidate)) {
            return resolved(choice.current ?? existing, existing, collisionCount, withRevision(revisions, existing));
          }
          collisionCount++;
          candidate = renameForCollision(candidate, cloneSet.metadata.name ?? '', collisionCount);
        }
      }
    }
  }
}

function resolved(current: ControllerRevision, update: ControllerRevision, collisionCount: number, history: readonly ControllerRevision[]): ResolvedRevisions {
  return { current: templateOf(current), update: templateOf(update), collisionCount, history };
}

/** The listed revisions with `rev` added or replacing the listed one of the same name. */
function withRevision(revisions: readonly ControllerRevision[], rev: ControllerRevision): ControllerRevision[] {
  return [...revisions.filter((r) => r.metadata.name !== rev.metadata.name), rev];
}

function templateOf(rev: ControllerRevision): RevisionTemplate {
  const template = templateFromRevision(rev);
  const name = rev.metadata.name ?? '';
  if (template === undefined) throw new Error(`ControllerRevision ${name} does not hold a pod template in data.spec.template`);
  return { name, template };
}

/**
 * Deletes the oldest revisions that no pod uses until at most revisionHistoryLimit of them remain. Errors
 * are only logged: history is housekeeping and must never fail a reconcile.
 */
export async function truncateHistory(
  cloneSet: CloneSet,
  revisions: readonly ControllerRevision[],
  pods: readonly Pod[],
  resolvedRevisions: ResolvedRevisions,
  ports: Ports,
  logger: Logger,
): Promise<void> {
  const live = { current: resolvedRevisions.current.name, update: resolvedRevisions.update.name };
  for (const rev of revisionsToTruncate(cloneSet, revisions, pods, live)) {
    try {
      await ports.revisions.deleteRevision(cloneSet.metadata.namespace ?? '', rev.metadata.name ?? '');
    } catch (e) {
      logger.info({ cloneset: cloneSet.metadata.name, revision: rev.metadata.name, err: errorText(e) }, 'revision history truncation stopped');
      return;
    }
  }
}
