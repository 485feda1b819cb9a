// `set image NAME container=image ...`, pure: the merge patch of the template's containers (and init containers).
// A merge patch replaces lists whole, so the full lists are sent, guarded by the CloneSet's resourceVersion.
// `*=image` sets every container, as in kubectl.
import type { CloneSet } from '../api/cloneset.ts';
import type { Container } from '../kube/types.ts';

export type SetImagePlan = { readonly ok: true; readonly patch: Record<string, unknown>; readonly changed: boolean } | { readonly ok: false; readonly message: string };

export function parseImageArgs(args: readonly string[]): Map<string, string> | string {
  const out = new Map<string, string>();
  if (args.length === 0) return 'at least one container=image pair is required';
  for (const a of args) {
    const i = a.indexOf('=');
    if (i <= 0 || i === a.length - 1) return `invalid argument "${a}": expected container=image (or *=image)`;
    out.set(a.slice(0, i), a.slice(i + 1));
  }
  return out;
}

export function planSetImage(cs: CloneSet, images: ReadonlyMap<string, string>): SetImagePlan {
  const spec = cs.spec.template.spec;
  const all = images.get('*');
  const known = new Set([...spec.containers, ...(spec.initContainers ?? [])].map((c) => c.name));
  for (const name of images.keys()) {
    if (name !== '*' && !known.has(name)) {
      return { ok: false, message: `unable to find container named "${name}" in cloneset "${cs.metadata.name ?? ''}" (containers: ${[...known].join(', ')})` };
    }
  }
  let changed = false;
  const apply = (c: Container): Container => {
    const image = images.get(c.name) ?? all;
    if (image === undefined || image === c.image) return c;
    changed = true;
    return { ...c, image };
  };
  const containers = spec.containers.map(apply);
  const initContainers = spec.initContainers?.map(apply);
  return {
    ok: true,
    changed,
    patch: {
      metadata: { resourceVersion: cs.metadata.resourceVersion },
      spec: { template: { spec: { containers, ...(initContainers !== undefined ? { initContainers } : {}) } } },
    },
  };
}
