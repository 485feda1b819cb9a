// The three patch formats the controller sends, as the API server applies them: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902, with `test`) and strategic merge patch (lists merged by their Kubernetes merge keys).
// Only what core objects need: the merge keys below, `$patch: delete` in lists and `$retainKeys` ignored.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export class PatchError extends Error {
  /** 422 for a failed `test` or a bad path, as the API server answers. */
  readonly code: number;
  constructor(message: string, code = 422) {
    super(message);
    this.code = code;
  }
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// The patch functions never change their inputs; results may share unchanged parts with them (the API server
// never changes a stored object in place).

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

/** The merge key of a list, by its field name (the core/v1 types the controller patches). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  conditions: 'type',
  readinessGates: 'conditionType',
  ownerReferences: 'uid',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  volumeMounts: 'mountPath',
  ports: 'containerPort',
};

/** Lists merged as sets of scalars. */
const SET_LISTS: ReadonlySet<string> = new Set(['finalizers']);

export function strategicMergePatch(target: Json, patch: Json, field = ''): Json {
  if (Array.isArray(patch)) return strategicList(Array.isArray(target) ? target : [], patch, field);
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) delete out[k];
    else out[k] = strategicMergePatch(out[k] ?? null, v, k);
  }
  return out;
}

function strategicList(target: readonly Json[], patch: readonly Json[], field: string): Json[] {
  if (SET_LISTS.has(field)) {
    const out = [...target];
    for (const v of patch) if (!out.includes(v)) out.push(v);
    return out;
  }
  const key = MERGE_KEYS[field];
  if (key === undefined) return [...patch];
  const out: Json[] = [...target];
  for (const item of patch) {
    if (!isObject(item)) continue;
    const id = item[key];
    const at = out.findIndex((t) => isObject(t) && t[key] === id);
    if (item['$patch'] === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = strategicMergePatch(out[at] ?? null, item);
    else out.push(strategicMergePatch(null, item));
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`bad JSON pointer ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(doc: Json, parts: readonly string[], path: string): { parent: Json[] | JsonObject; last: string } {
  let cur: Json = doc;
  for (const p of parts.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(cur) ? cur[Number(p)] : isObject(cur) ? cur[p] : undefined;
    if (next === undefined) throw new PatchError(`path ${path} does not exist`);
    cur = next;
  }
  const last = parts[parts.length - 1];
  if (last === undefined || !(Array.isArray(cur) || isObject(cur))) throw new PatchError(`path ${path} does not exist`);
  return { parent: cur, last };
}

export function jsonPatch(doc: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw new PatchError('a JSON patch is a list of operations', 400);
  const out = JSON.parse(JSON.stringify(doc)) as Json;
  for (const op of ops) {
    if (!isObject(op) || typeof op['op'] !== 'string' || typeof op['path'] !== 'string') throw new PatchError('malformed JSON patch operation', 400);
    const path = op['path'];
    const parts = pointer(path);
    const { parent, last } = parentOf(out, parts, path);
    const value = op['value'] ?? null;
    switch (op['op']) {
      case 'test': {
        const cur = Array.isArray(parent) ? parent[Number(last)] : parent[last];
        if (JSON.stringify(cur) !== JSON.stringify(value)) throw new PatchError(`testing value ${path} failed`);
        break;
      }
      case 'add':
        if (Array.isArray(parent)) {
          if (last === '-') parent.push(value);
          else parent.splice(Number(last), 0, value);
        } else parent[last] = value;
        break;
      case 'replace':
        if (Array.isArray(parent)) {
          if (parent[Number(last)] === undefined) throw new PatchError(`path ${path} does not exist`);
          parent[Number(last)] = value;
        } else {
          if (!(last in parent)) throw new PatchError(`path ${path} does not exist`);
          parent[last] = value;
        }
        break;
      case 'remove':
        if (Array.isArray(parent)) {
          if (parent[Number(last)] === undefined) throw new PatchError(`path ${path} does not exist`);
          parent.splice(Number(last), 1);
        } else {
          if (!(last in parent)) throw new PatchError(`path ${path} does not exist`);
          delete parent[last];
        }
        break;
      default:
        throw new PatchError(`unsupported JSON patch op ${op['op']}`, 400);
    }
  }
  return out;
}
