// RFC 7386 JSON merge patches computed from two documents (what `kubectl apply` calls CreateMergePatch): keys
// that changed carry their new value, removed keys carry null, arrays and scalars are replaced whole. Pure.

type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };
type JsonObject = { readonly [k: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/** The merge patch turning `from` into `to`; undefined when they are equal. */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return sameJson(from, to) ? undefined : to;
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (!(k in from)) {
      patch[k] = v;
      continue;
    }
    const sub = createMergePatch(from[k], v);
    if (sub !== undefined) patch[k] = sub;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
