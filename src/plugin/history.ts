// `rollout history` and `rollout undo`, pure: the CloneSet's ControllerRevisions as numbered rows, and the merge
// patch that restores the pod template stored in one of them (docs/features.md#revisions; Kruise pkg/controller/cloneset/core/cloneset_core.go: a rollback is nothing but the old
// template written back; the controller then reuses the old revision under a new number, no new name).
import type { CloneSet } from '../api/cloneset.ts';
import { revisionData, revisionDataBytes, sortRevisions, templateFromRevision } from '../cloneset/plan/revisions.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import type { ControllerRevision, PodTemplateSpec } from '../kube/types.ts';
import { createMergePatch } from './merge-patch.ts';

export const ANNOTATION_CHANGE_CAUSE = 'kubernetes.io/change-cause';

export interface HistoryRow {
  readonly revision: number;
  readonly name: string;
  readonly changeCause: string;
  /** "current", "update", "current,update" or "". */
  readonly role: string;
  readonly images: string;
}

/** The revisions the CloneSet controls, oldest first. */
export function ownedRevisions(cs: CloneSet, revisions: readonly ControllerRevision[]): ControllerRevision[] {
  const uid = cs.metadata.uid ?? '';
  return sortRevisions(revisions.filter((r) => controllerRefOf(r)?.uid === uid));
}

export function imagesOf(t: PodTemplateSpec | undefined): string {
  if (t === undefined) return '';
  return t.spec.containers.map((c) => `${c.name}=${c.image ?? ''}`).join(',');
}

export function historyRows(cs: CloneSet, revisions: readonly ControllerRevision[]): HistoryRow[] {
  return ownedRevisions(cs, revisions).map((r) => {
    const name = r.metadata.name ?? '';
    const role = [name === cs.status?.currentRevision ? 'current' : '', name === cs.status?.updateRevision ? 'update' : ''].filter((x) => x !== '').join(',');
    return {
      revision: r.revision,
      name,
      changeCause: r.metadata.annotations?.[ANNOTATION_CHANGE_CAUSE] ?? '<none>',
      role,
      images: imagesOf(templateFromRevision(r)),
    };
  });
}

export function formatHistory(name: string, rows: readonly HistoryRow[]): string {
  const table = [['REVISION', 'NAME', 'ROLE', 'IMAGES', 'CHANGE-CAUSE'], ...rows.map((r) => [String(r.revision), r.name, r.role, r.images, r.changeCause])];
  return `cloneset.apps.kruise.io/${name}\n${formatTable(table)}`;
}

export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 2)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

export type UndoTarget = { readonly ok: true; readonly revision: ControllerRevision; readonly template: PodTemplateSpec } | { readonly ok: false; readonly message: string };

/**
 * The revision to roll back to: `toRevision` when given (0 = the previous one), else the newest revision older
 * than the update revision — kubectl's "previous revision".
 */
export function undoTarget(cs: CloneSet, revisions: readonly ControllerRevision[], toRevision: number | undefined): UndoTarget {
  const owned = ownedRevisions(cs, revisions);
  const name = cs.metadata.name ?? '';
  let chosen: ControllerRevision | undefined;
  if (toRevision !== undefined && toRevision > 0) {
    chosen = owned.find((r) => r.revision === toRevision);
    if (chosen === undefined) {
      const known = owned.map((r) => r.revision).join(', ');
      return {
        ok: false,
        message: `unable to find the specified revision ${toRevision} of cloneset "${name}" (revisions: ${known || 'none'}); see kubectl cloneset rollout history ${name}`,
      };
    }
  } else {
    const updateName = cs.status?.updateRevision;
    const update = owned.find((r) => r.metadata.name === updateName) ?? owned.at(-1);
    chosen = owned.filter((r) => update === undefined || r.revision < update.revision).at(-1);
    if (chosen === undefined) return { ok: false, message: `no rollout history found for cloneset "${name}": there is no previous revision to roll back to` };
  }
  const template = templateFromRevision(chosen);
  if (template === undefined) return { ok: false, message: `ControllerRevision ${chosen.metadata.name ?? ''} holds no pod template in data.spec.template` };
  return { ok: true, revision: chosen, template };
}

/**
 * The merge patch writing the revision's template back, guarded by the CloneSet's resourceVersion (a concurrent
 * change makes it fail with a conflict rather than mixing two templates). Undefined when the CloneSet already
 * has that template — decided as the controller decides it: the revision data bytes are equal (docs/features.md#revisions; Kruise pkg/util/history/controller_history.go).
 */
export function undoPatch(cs: CloneSet, revision: ControllerRevision, template: PodTemplateSpec): Record<string, unknown> | undefined {
  if (revisionData(cs) === revisionDataBytes(revision)) return undefined;
  const patch = createMergePatch(plainTemplate(cs.spec.template), plainTemplate(template));
  if (patch === undefined) return undefined;
  return { metadata: { resourceVersion: cs.metadata.resourceVersion }, spec: { template: patch } };
}

/** A JSON copy without Go's `creationTimestamp: null` (the typed round-trip of a stored revision adds it). */
function plainTemplate(t: PodTemplateSpec): unknown {
  const copy = JSON.parse(JSON.stringify(t)) as Record<string, unknown>;
  const md = copy['metadata'];
  if (typeof md === 'object' && md !== null && 'creationTimestamp' in md && md.creationTimestamp === null) {
    const { creationTimestamp: _drop, ...rest } = md;
    copy['metadata'] = rest;
  }
  return copy;
}
