// RFC 6902 JSON Patch between two JSON documents: what a mutating webhook answers (`patchType: JSONPatch`).
// Objects are diffed key by key; arrays of equal length element by element, otherwise replaced whole (a correct
// patch, only longer than a minimal one). Pure.

import { jsonEqual } from '../api/json-equal.ts';

export type JsonPatchOperation = { op: 'add'; path: string; value: unknown } | { op: 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function createJsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diff(from, to, '', ops);
  return ops;
}

function diff(from: unknown, to: unknown, path: string, ops: JsonPatchOperation[]): void {
  if (jsonEqual(from, to)) return;
  if (isObject(from) && isObject(to)) {
    // own keys only: a key such as "toString" must not find Object.prototype's
    const has = (o: Record<string, unknown>, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined;
    for (const key of Object.keys(from)) {
      if (has(from, key) && !has(to, key)) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
    for (const key of Object.keys(to)) {
      const p = `${path}/${escapePointerToken(key)}`;
      if (!has(to, key)) continue;
      if (!has(from, key)) ops.push({ op: 'add', path: p, value: to[key] });
      else diff(from[key], to[key], p, ops);
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length) {
    to.forEach((v, i) => {
      diff(from[i], v, `${path}/${i}`, ops);
    });
    return;
  }
  ops.push({ op: 'replace', path, value: to });
}
