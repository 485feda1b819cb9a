// An RFC 6902 diff of two decoded JSON documents, enough to reproduce the accept/reject outcome of Kruise's
// `jsonpatch.CreatePatch` (appscode/jsonpatch v1.0.1) over two revisions' data (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go). Pure.
//
// Rules: both null → nothing; old null/absent and new non-null → add; different JSON types → replace (also when
// the new value is null); objects → per key add / recurse / remove; differing scalars → replace; arrays → the
// common prefix is compared index by index, surplus old indices are removed (highest first), surplus new ones
// added. appscode uses a Levenshtein script for arrays of scalars instead of the index walk; for the in-place
// decision the difference never matters (any operation inside such an array under /spec is rejected and any
// operation under /metadata is accepted), see cloneset/inplace/update-spec.ts; admission's InPlaceOnly rule uses it too.

export type JsonPatchOp = { readonly op: 'add' | 'replace'; readonly path: string; readonly value: unknown } | { readonly op: 'remove'; readonly path: string };

type JsonKind = 'null' | 'object' | 'array' | 'string' | 'number' | 'boolean';

function kindOf(v: unknown): JsonKind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'object':
      return 'object';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'null';
  }
}

/** RFC 6901 escaping of one reference token. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** RFC 6901 unescaping of one reference token. */
export function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

export function createJsonPatch(oldDoc: unknown, newDoc: unknown): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  diffValue(oldDoc, newDoc, '', ops);
  return ops;
}

function diffValue(a: unknown, b: unknown, path: string, ops: JsonPatchOp[]): void {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === 'null' && kb === 'null') return;
  if (ka === 'null') {
    ops.push({ op: 'add', path, value: b });
    return;
  }
  if (ka !== kb) {
    ops.push({ op: 'replace', path, value: b ?? null });
    return;
  }
  if (ka === 'object') {
    diffObject(a as Readonly<Record<string, unknown>>, b as Readonly<Record<string, unknown>>, path, ops);
    return;
  }
  if (ka === 'array') {
    diffArray(a as readonly unknown[], b as readonly unknown[], path, ops);
    return;
  }
  if (a !== b) ops.push({ op: 'replace', path, value: b });
}

function diffObject(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>, path: string, ops: JsonPatchOp[]): void {
  for (const key of Object.keys(b)) {
    const p = `${path}/${escapePointerToken(key)}`;
    if (!(key in a) || a[key] === undefined) {
      if (b[key] !== undefined && b[key] !== null) ops.push({ op: 'add', path: p, value: b[key] });
      continue;
    }
    diffValue(a[key], b[key], p, ops);
  }
  for (const key of Object.keys(a)) {
    if (a[key] === undefined) continue;
    if (!(key in b) || b[key] === undefined) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
  }
}

function diffArray(a: readonly unknown[], b: readonly unknown[], path: string, ops: JsonPatchOp[]): void {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) diffValue(a[i], b[i], `${path}/${i}`, ops);
  for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
  for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: `${path}/${i}`, value: b[i] });
}
