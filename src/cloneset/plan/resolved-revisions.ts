// ResolvedRevisions: the current and update revision of a CloneSet, as the planner (plan/index.ts) and the
// in-place engine (inplace/plan.ts) both read them. Its own module so that neither imports the other for it.
import type { ControllerRevision } from '../../kube/types.ts';
import type { RevisionTemplate } from './scale.ts';

export interface ResolvedRevisions {
  readonly current: RevisionTemplate;
  readonly update: RevisionTemplate;
  readonly collisionCount: number;
  /** Every revision of the CloneSet (the in-place engine finds each pod's own revision there, docs/features.md#update-types; Kruise pkg/controller/cloneset/sync/cloneset_update.go). */
  readonly history?: readonly ControllerRevision[];
}
