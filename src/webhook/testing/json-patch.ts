// Applies the JSON patches our mutating webhook answers, as the API server would: tests check that the patch
// turns the request's object into the defaulted one. Test code; the webhook itself only creates patches.
import type { JsonPatchOperation } from '../json-patch.ts';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Applies a patch made of add/replace/remove (the operations createJsonPatch emits) to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root: unknown = structuredClone(doc);
  for (const op of ops) {
    const tokens =
      op.path === ''
        ? []
        : op.path
            .slice(1)
            .split('/')
            .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = tokens.pop();
    if (last === undefined) {
      if (op.op === 'remove') throw new Error('cannot remove the document root');
      root = structuredClone(op.value);
      continue;
    }
    let parent: unknown = root;
    for (const t of tokens) {
      parent = Array.isArray(parent) ? parent[Number(t)] : isObject(parent) && Object.hasOwn(parent, t) ? parent[t] : undefined;
      if (parent === undefined) throw new Error(`path ${op.path} does not exist`);
    }
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last);
      if (op.op === 'remove') parent.splice(i, 1);
      else if (op.op === 'add') parent.splice(i, 0, structuredClone(op.value));
      else parent[i] = structuredClone(op.value);
    } else if (isObject(parent)) {
      if (op.op === 'remove') delete parent[last];
      else Object.defineProperty(parent, last, { value: structuredClone(op.value), enumerable: true, writable: true, configurable: true });
    } else {
      throw new Error(`path ${op.path} does not exist`);
    }
  }
  return root;
}
