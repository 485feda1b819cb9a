// Our opt-in extensions beyond Kruise (docs/features.md#beyond-kruise): each is a CloneSet annotation under
// `cloneset-controller.io/`, never a CRD field, so the object stays valid for Kruise's CRD and can go back to
// Kruise unchanged. A CloneSet without these annotations behaves exactly as under Kruise. Admission
// (admission/extensions.ts) rejects bad values with the annotation's path; the planner reads them through the
// parsers below, which treat a value admission would refuse as "not set" (objects stored before the webhook).
import type { CloneSet } from './cloneset.ts';

export const EXTENSION_PREFIX = 'cloneset-controller.io/';

/** Inactive (Failed/Succeeded) pods kept per CloneSet; the oldest beyond it are deleted once replaced. */
export const ANNOTATION_INACTIVE_PODS_LIMIT = 'cloneset-controller.io/inactive-pods-limit';
/** What to do when a rollout exceeds spec.progressDeadlineSeconds: `pause` or `rollback`. */
export const ANNOTATION_PROGRESS_DEADLINE_ACTION = 'cloneset-controller.io/progress-deadline-action';
/** Written by the controller with the action it took (JSON: ProgressDeadlineRecord); read back to never loop. */
export const ANNOTATION_PROGRESS_DEADLINE_RECORD = 'cloneset-controller.io/progress-deadline-last-action';
/** PVC retention on scale-in: `Retain` or `Delete` (Kruise's behaviour). */
export const ANNOTATION_PVC_RETENTION_WHEN_SCALED = 'cloneset-controller.io/pvc-retention-when-scaled';
/** PVC retention when the CloneSet is deleted: `Retain` or `Delete` (Kruise's behaviour). */
export const ANNOTATION_PVC_RETENTION_WHEN_DELETED = 'cloneset-controller.io/pvc-retention-when-deleted';
/** `InPlace`: a grown volumeClaimTemplates storage request grows the existing PVCs instead of new pods. */
export const ANNOTATION_PVC_RESIZE_POLICY = 'cloneset-controller.io/pvc-resize-policy';

/** On a released (retained) PVC: the name of the CloneSet it was retained from. */
export const LABEL_RETAINED_BY = 'cloneset-controller.io/retained-by';

export type ProgressDeadlineAction = 'pause' | 'rollback';
export type PvcRetention = 'Retain' | 'Delete';
export type PvcResizePolicy = 'InPlace';

export const PROGRESS_DEADLINE_ACTIONS: readonly ProgressDeadlineAction[] = ['pause', 'rollback'];
export const PVC_RETENTIONS: readonly PvcRetention[] = ['Retain', 'Delete'];
export const PVC_RESIZE_POLICIES: readonly PvcResizePolicy[] = ['InPlace'];

/** The largest limit accepted (int32, as a Kubernetes count field). */
const MAX_LIMIT = 2147483647;

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

export function parseInactivePodsLimit(raw: string): Parsed<number> {
  if (!/^(0|[1-9][0-9]*)$/.test(raw)) return { ok: false, message: 'must be a non-negative integer in a string, e.g. "5" (the number of Failed/Succeeded pods to keep)' };
  const n = Number(raw);
  if (n > MAX_LIMIT) return { ok: false, message: `must be at most ${MAX_LIMIT}` };
  return { ok: true, value: n };
}

function oneOf<T extends string>(raw: string, allowed: readonly T[]): Parsed<T> {
  const hit = allowed.find((a) => a === raw);
  return hit !== undefined ? { ok: true, value: hit } : { ok: false, message: `supported values: ${allowed.map((a) => `"${a}"`).join(', ')}` };
}

export const parseProgressDeadlineAction = (raw: string): Parsed<ProgressDeadlineAction> => oneOf(raw, PROGRESS_DEADLINE_ACTIONS);
export const parsePvcRetention = (raw: string): Parsed<PvcRetention> => oneOf(raw, PVC_RETENTIONS);
export const parsePvcResizePolicy = (raw: string): Parsed<PvcResizePolicy> => oneOf(raw, PVC_RESIZE_POLICIES);

function annotation(cs: CloneSet, key: string): string | undefined {
  return cs.metadata.annotations?.[key];
}

function read<T>(cs: CloneSet, key: string, parse: (raw: string) => Parsed<T>): T | undefined {
  const raw = annotation(cs, key);
  if (raw === undefined) return undefined;
  const p = parse(raw);
  return p.ok ? p.value : undefined;
}

/** undefined: no clean-up (Kruise keeps every inactive pod). */
export const inactivePodsLimitOf = (cs: CloneSet): number | undefined => read(cs, ANNOTATION_INACTIVE_PODS_LIMIT, parseInactivePodsLimit);
/** undefined: only the Progressing condition (Kruise). */
export const progressDeadlineActionOf = (cs: CloneSet): ProgressDeadlineAction | undefined => read(cs, ANNOTATION_PROGRESS_DEADLINE_ACTION, parseProgressDeadlineAction);
export const pvcRetentionWhenScaledOf = (cs: CloneSet): PvcRetention => read(cs, ANNOTATION_PVC_RETENTION_WHEN_SCALED, parsePvcRetention) ?? 'Delete';
export const pvcRetentionWhenDeletedOf = (cs: CloneSet): PvcRetention => read(cs, ANNOTATION_PVC_RETENTION_WHEN_DELETED, parsePvcRetention) ?? 'Delete';
export const pvcResizePolicyOf = (cs: CloneSet): PvcResizePolicy | undefined => read(cs, ANNOTATION_PVC_RESIZE_POLICY, parsePvcResizePolicy);

/** What the controller did when a rollout missed its deadline, kept on the CloneSet (see ANNOTATION_PROGRESS_DEADLINE_RECORD). */
export interface ProgressDeadlineRecord {
  readonly action: ProgressDeadlineAction;
  /** The update revision that missed the deadline. */
  readonly from: string;
  /** rollback: the revision whose template was put back. */
  readonly to?: string;
  /** RFC 3339: when the action was taken (a rollback's own deadline runs from here). */
  readonly at: string;
}

export function progressDeadlineRecordOf(cs: CloneSet): ProgressDeadlineRecord | undefined {
  const raw = annotation(cs, ANNOTATION_PROGRESS_DEADLINE_RECORD);
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null) return undefined;
    const r = v as Record<string, unknown>;
    const action = typeof r['action'] === 'string' ? parseProgressDeadlineAction(r['action']) : undefined;
    if (action === undefined || !action.ok || typeof r['from'] !== 'string' || typeof r['at'] !== 'string') return undefined;
    return { action: action.value, from: r['from'], at: r['at'], ...(typeof r['to'] === 'string' ? { to: r['to'] } : {}) };
  } catch {
    return undefined;
  }
}
