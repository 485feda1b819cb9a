// What the API server does with the engine's strategic merge patches, for simulations and tests: labels and
// annotations merged key by key (null deletes), containers merged by name, conditions merged by type (null
// fields deleted), `metadata.resourceVersion` treated as a precondition. Pure.
import type { Container, Pod, PodCondition } from '../../../kube/types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function mergeMap(base: Readonly<Record<string, string>> | undefined, patch: unknown): Record<string, string> | undefined {
  if (!isObj(patch)) return base === undefined ? undefined : { ...base };
  const out: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function mergeObject(base: Obj, patch: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isObj(v) && isObj(out[k])) out[k] = mergeObject(out[k], v);
    else out[k] = v;
  }
  return out;
}

/**
 * `metadata.finalizers` (patchStrategy merge, scalars): `null` drops the list, listed values are added,
 * `$deleteFromPrimitiveList/finalizers` removes values, `$setElementOrder/finalizers` orders the result.
 */
function mergeFinalizers(base: readonly string[] | undefined, md: Obj): string[] | null | undefined {
  if (!('finalizers' in md) && !('$deleteFromPrimitiveList/finalizers' in md)) return base === undefined ? undefined : [...base];
  if (md['finalizers'] === null) return null;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const removed = new Set(strings(md['$deleteFromPrimitiveList/finalizers']));
  const out = (base ?? []).filter((f) => !removed.has(f));
  for (const f of strings(md['finalizers'])) if (!out.includes(f)) out.push(f);
  const order = strings(md['$setElementOrder/finalizers']);
  if (order.length > 0) out.sort((a, b) => rank(order, a) - rank(order, b));
  return out;
}

const rank = (order: readonly string[], v: string): number => {
  const i = order.indexOf(v);
  return i < 0 ? order.length : i;
};

export class PatchConflict extends Error {
  override readonly name = 'PatchConflict';
}

/** The patch's metadata, after its `resourceVersion` precondition (if any) was checked against the pod. */
function checkPrecondition(pod: Pod, patch: Readonly<Record<string, unknown>>): Obj {
  const md = isObj(patch['metadata']) ? patch['metadata'] : {};
  const rv = md['resourceVersion'];
  if (typeof rv === 'string' && rv !== '' && rv !== pod.metadata.resourceVersion) {
    throw new PatchConflict(`the object has been modified: ${rv} != ${pod.metadata.resourceVersion ?? ''}`);
  }
  return md;
}

/** Applies a pod (or pods/resize) patch; throws PatchConflict when its resourceVersion precondition fails. */
export function applyPodPatch(pod: Pod, patch: Readonly<Record<string, unknown>>): Pod {
  const md = checkPrecondition(pod, patch);
  const labels = mergeMap(pod.metadata.labels, md['labels']);
  const annotations = mergeMap(pod.metadata.annotations, md['annotations']);
  const spec = isObj(patch['spec']) ? patch['spec'] : {};
  let containers = pod.spec.containers;
  if (Array.isArray(spec['containers'])) {
    containers = containers.map((c) => {
      const p = (spec['containers'] as unknown[]).find((x): x is Obj => isObj(x) && x['name'] === c.name);
      return p === undefined ? c : (mergeObject(c, p) as Container);
    });
  }
  const finalizers = mergeFinalizers(pod.metadata.finalizers, md);
  const { finalizers: _dropped, ...metaRest } = pod.metadata;
  return {
    ...pod,
    metadata: {
      ...metaRest,
      ...(labels !== undefined ? { labels } : {}),
      ...(annotations !== undefined ? { annotations } : {}),
      ...(finalizers !== undefined && finalizers !== null ? { finalizers } : {}),
    },
    spec: { ...pod.spec, containers },
  };
}

/** Applies a pods/status patch (conditions merged by type). */
export function applyPodStatusPatch(pod: Pod, patch: Readonly<Record<string, unknown>>): Pod {
  checkPrecondition(pod, patch);
  const status = isObj(patch['status']) ? patch['status'] : {};
  const patches = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]).filter(isObj) : [];
  const conditions: PodCondition[] = [...(pod.status?.conditions ?? [])];
  for (const p of patches) {
    const i = conditions.findIndex((c) => c.type === p['type']);
    const merged = mergeObject(i >= 0 ? { ...conditions[i] } : {}, p) as unknown as PodCondition;
    if (i >= 0) conditions[i] = merged;
    else conditions.push(merged);
  }
  return { ...pod, status: { ...pod.status, conditions } };
}
