// Growing PVCs in place when a volume claim template grows (docs/features.md#pvc-resize-in-place; kruise#1670
// closed wontfix, kruise#905, kruise#1087; the StatefulSet KEP is unmerged). Opt-in with
// `cloneset-controller.io/pvc-resize-policy: InPlace`. For each PVC made from a template (`<template>-<cloneset>-<id>`):
// - the template asks for more storage than the claim and its StorageClass has `allowVolumeExpansion: true` →
//   the claim's request is patched (the volume plugin then grows the volume; no pod is recreated);
// - the class does not allow expansion, or the template asks for *less* (a PVC cannot shrink) → refused: the
//   PVCResize condition and a Warning event say why; nothing is deleted or recreated;
// - the request is met but `status.capacity` is not there yet → in progress, with the claim's `Resizing` /
//   `FileSystemResizePending` conditions in the PVCResize condition's message.
// New pods get claims of the new size anyway (their PVCs are made from the template).
import type { CloneSet, CloneSetCondition } from '../../api/cloneset.ts';
import { pvcResizePolicyOf } from '../../api/extensions.ts';
import { parseQuantity, type Quantity } from '../../api/go-quantity.ts';
import type { PersistentVolumeClaim, StorageClass } from '../../kube/types.ts';
import { pvcRefOf, type PlanAction, type PlannedEvent } from './actions.ts';
import { instanceIdOf } from './instance-ids.ts';
import { pvcName, rfc3339 } from './pod-template.ts';

export interface PvcResizeResult {
  readonly actions: readonly PlanAction[];
  readonly events: readonly PlannedEvent[];
  readonly condition?: CloneSetCondition;
  /** While a resize is in progress: look again (the volume plugin's status writes also bring us back). */
  readonly requeueAfterMs?: number;
  readonly explain: readonly string[];
}

const NONE: PvcResizeResult = { actions: [], events: [], explain: [] };
const RESIZE_POLL_MS = 5000;

function quantity(v: unknown): Quantity | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

/** Exact comparison of two quantities (unscaled × 10^scale). */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const s = Math.min(a.scale, b.scale);
  const x = a.unscaled * 10n ** BigInt(a.scale - s);
  const y = b.unscaled * 10n ** BigInt(b.scale - s);
  return x === y ? 0 : x < y ? -1 : 1;
}

const obj = (v: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Readonly<Record<string, unknown>>) : undefined;

function requestedStorage(spec: Readonly<Record<string, unknown>> | undefined): unknown {
  return obj(obj(obj(spec)?.['resources'])?.['requests'])?.['storage'];
}

function capacityOf(pvc: PersistentVolumeClaim): unknown {
  return obj(obj(pvc.status)?.['capacity'])?.['storage'];
}

/** The claim's own resize conditions that are True (Resizing, FileSystemResizePending…). */
function resizeConditions(pvc: PersistentVolumeClaim): string[] {
  const list = obj(pvc.status)?.['conditions'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((c) => {
    const o = obj(c);
    return o !== undefined && o['status'] === 'True' && typeof o['type'] === 'string' ? [o['type']] : [];
  });
}

/**
 * `pvcs`: the CloneSet's PVCs (owned and retained); `classes`: StorageClasses by name; `nowMs` stamps the
 * condition. Events are planned only when the condition changes, so a refusal is told once, not every pass.
 */
export function planPvcResize(cloneSet: CloneSet, pvcs: readonly PersistentVolumeClaim[], classes: ReadonlyMap<string, StorageClass>, nowMs: number): PvcResizeResult {
  if (pvcResizePolicyOf(cloneSet) !== 'InPlace' || cloneSet.metadata.deletionTimestamp !== undefined) return NONE;
  const csName = cloneSet.metadata.name ?? '';
  const actions: PlanAction[] = [];
  const refused: string[] = [];
  const pending: string[] = [];
  let total = 0;
  let done = 0;
  for (const t of cloneSet.spec.volumeClaimTemplates ?? []) {
    const template = t.metadata.name ?? '';
    const wantText = requestedStorage(t.spec);
    const want = quantity(wantText);
    if (want === undefined || typeof wantText !== 'string') continue;
    for (const pvc of pvcs) {
      const id = instanceIdOf(pvc);
      const name = pvc.metadata.name ?? '';
      if (id === '' || name !== pvcName(template, csName, id) || pvc.metadata.deletionTimestamp !== undefined) continue;
      total++;
      const haveText = requestedStorage(pvc.spec);
      const have = quantity(haveText);
      if (have === undefined || typeof haveText !== 'string') continue;
      const cmp = compareQuantities(want, have);
      if (cmp < 0) {
        refused.push(`${name}: the template asks for ${wantText}, less than its ${haveText} (a PVC cannot shrink; nothing is deleted)`);
        continue;
      }
      if (cmp > 0) {
        const className = typeof pvc.spec?.['storageClassName'] === 'string' ? pvc.spec['storageClassName'] : '';
        const sc = classes.get(className);
        if (sc?.allowVolumeExpansion !== true) {
          refused.push(
            `${name}: StorageClass ${className === '' ? '(none)' : `"${className}"`} ${sc === undefined ? 'is not known' : 'does not allow volume expansion (allowVolumeExpansion)'}`,
          );
          continue;
        }
        actions.push({ kind: 'ResizePvc', pvc: pvcRefOf(pvc), from: haveText, to: wantText });
        pending.push(`${name}: ${haveText} → ${wantText} requested`);
        continue;
      }
      const capText = capacityOf(pvc);
      const cap = quantity(capText);
      if (cap !== undefined && compareQuantities(cap, want) >= 0) {
        done++;
        continue;
      }
      const conditions = resizeConditions(pvc);
      pending.push(`${name}: capacity ${typeof capText === 'string' ? capText : 'unknown'} of ${wantText}${conditions.length > 0 ? ` (${conditions.join(', ')})` : ''}`);
    }
  }
  if (total === 0) return NONE;
  const stamp = rfc3339(nowMs);
  const make = (status: 'True' | 'False', reason: string, message: string): CloneSetCondition => ({
    type: 'PVCResize',
    status,
    reason,
    message,
    lastTransitionTime: stamp,
    lastUpdateTime: stamp,
  });
  const condition =
    refused.length > 0
      ? make('False', 'ResizeRefused', `${refused.join('; ')}${pending.length > 0 ? `; resizing: ${pending.join('; ')}` : ''}`)
      : pending.length > 0
        ? make('False', 'Resizing', `${done} of ${total} PVCs have the requested size; ${pending.join('; ')}`)
        : make('True', 'Resized', `all ${total} PVCs have the size their template asks for`);
  const previous = cloneSet.status?.conditions?.find((c) => c.type === 'PVCResize');
  const events: PlannedEvent[] = [];
  if (previous?.reason !== condition.reason || (condition.reason === 'ResizeRefused' && previous?.message !== condition.message)) {
    if (condition.reason === 'ResizeRefused') events.push({ type: 'Warning', reason: 'PVCResizeRefused', message: refused.join('; ') });
    if (condition.reason === 'Resized' && previous !== undefined) events.push({ type: 'Normal', reason: 'PVCResized', message: condition.message ?? '' });
  }
  const explain = actions.length > 0 || pending.length > 0 || refused.length > 0 ? [`PVC resize: ${condition.message ?? ''}`] : [];
  return { actions, events, condition, explain, ...(pending.length > 0 ? { requeueAfterMs: RESIZE_POLL_MS } : {}) };
}
