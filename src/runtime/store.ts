// The informer cache: objects keyed "namespace/name" (or "name"), deep-frozen and without managedFields,
// with indexers. Mutations return the deltas that handlers should see; the store never calls out itself.

import type { KubeObject } from '../kube/types.ts';

/** Read side of a cache, as the reconcilers see it. */
export interface Store<T> {
  get(key: string): T | undefined;
  list(): readonly T[];
  /** Objects whose indexer `index` returned `value`. Throws for an index that was not registered. */
  byIndex(index: string, value: string): readonly T[];
}

export type IndexFunc<T> = (obj: T) => readonly string[];
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

export type StoreDelta<T> =
  | { readonly type: 'add'; readonly obj: T }
  | { readonly type: 'update'; readonly old: T; readonly obj: T }
  /** `finalStateUnknown`: the object vanished between two lists; `obj` is the last state we saw (a tombstone). */
  | { readonly type: 'delete'; readonly obj: T; readonly finalStateUnknown: boolean };

/** Common indexers: by namespace, and by the UIDs of the owners (ownerReferences). */
export const indexByNamespace: IndexFunc<KubeObject> = (obj) => [obj.metadata?.namespace ?? ''];
export const indexByOwnerUid: IndexFunc<KubeObject> = (obj) => (obj.metadata?.ownerReferences ?? []).map((o) => o.uid);

/** "namespace/name" for namespaced objects, "name" for cluster-scoped ones (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (name === undefined || name === '') throw new Error('object without metadata.name cannot be stored');
  const ns = obj.metadata?.namespace;
  return ns === undefined || ns === '' ? name : `${ns}/${name}`;
}

/**
 * Orders two resourceVersions. ASSUMPTION: the API server (etcd3 storage) issues resourceVersions as
 * increasing decimal integers. Kubernetes documents RVs as opaque strings, so this is the one place that
 * relies on that; Kruise and client-go's watch cache make the same assumption. Returns a negative number when
 * `a` is older, positive when newer, 0 when equal, and `undefined` when either is not an integer (no order
 * known: callers then treat the versions as different and the newer arrival as authoritative).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === b) return 0;
  if (a === undefined || b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  // Without leading zeros the longer number is the larger, and equal lengths compare as strings: no BigInt for
  // every event of every watch.
  if (a[0] !== '0' && b[0] !== '0') return a.length !== b.length ? (a.length < b.length ? -1 : 1) : a < b ? -1 : 1;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Prepares an object for the cache: drops metadata.managedFields (memory) and deep-freezes the rest. */
export function ingest<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta !== undefined && 'managedFields' in meta) {
    const { managedFields: _dropped, ...rest } = meta;
    return deepFreeze({ ...obj, metadata: rest });
  }
  return deepFreeze(obj);
}

const rvOf = (obj: KubeObject): string | undefined => obj.metadata?.resourceVersion;
const uidOf = (obj: KubeObject): string | undefined => obj.metadata?.uid;

export class ObjectStore<T extends KubeObject> implements Store<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers: Indexers<T>;
  /** index name → indexed value → keys */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  #listCache: readonly T[] | undefined;

  constructor(indexers: Indexers<T> = {}) {
    this.#indexers = indexers;
    for (const name of Object.keys(indexers)) this.#indexes.set(name, new Map());
  }

  get size(): number {
    return this.#items.size;
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): readonly T[] {
    this.#listCache ??= Object.freeze([...this.#items.values()]);
    return this.#listCache;
  }

  byIndex(index: string, value: string): readonly T[] {
    const idx = this.#indexes.get(index);
    if (idx === undefined) throw new Error(`no index named "${index}" (registered: ${[...this.#indexes.keys()].join(', ')})`);
    const out: T[] = [];
    for (const key of idx.get(value) ?? []) {
      const obj = this.#items.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /**
   * ADDED/MODIFIED: stores `obj` unless the stored version is newer; an unchanged resourceVersion is no
   * change. A different UID under the same key is a deletion of the old object and an addition of the new.
   */
  apply(incoming: T): StoreDelta<T>[] {
    const obj = ingest(incoming);
    const key = objectKey(obj);
    const old = this.#items.get(key);
    if (old === undefined) {
      this.#set(key, undefined, obj);
      return [{ type: 'add', obj }];
    }
    const order = compareResourceVersions(rvOf(obj), rvOf(old));
    if (order === 0 || (order !== undefined && order < 0)) return []; // unchanged, or stale
    this.#set(key, old, obj);
    if (uidOf(old) !== uidOf(obj))
      return [
        { type: 'delete', obj: old, finalStateUnknown: false },
        { type: 'add', obj },
      ];
    return [{ type: 'update', old, obj }];
  }

  /** DELETED: removes the stored object unless it is a newer version or another incarnation (UID). */
  remove(incoming: T): StoreDelta<T>[] {
    const obj = ingest(incoming);
    const key = objectKey(obj);
    const old = this.#items.get(key);
    if (old === undefined) return [];
    if (uidOf(obj) !== undefined && uidOf(old) !== undefined && uidOf(obj) !== uidOf(old)) return [];
    const order = compareResourceVersions(rvOf(obj), rvOf(old));
    if (order !== undefined && order < 0) return [];
    this.#set(key, old, undefined);
    return [{ type: 'delete', obj, finalStateUnknown: false }];
  }

  /**
   * Relist: makes the contents exactly `objects` in one step (no handler can observe a half-replaced store:
   * deltas are returned for delivery afterwards). Vanished objects yield tombstone deletes; changed ones
   * (old, new) updates; unchanged resourceVersions nothing. Unconditional, like client-go's Replace: a list is
   * the server's state, so an object listed with an OLDER resourceVersion than the cached one (the API server
   * restored from an etcd backup) replaces it too — otherwise the cache would stay ahead of the server for good.
   */
  replace(objects: readonly T[]): StoreDelta<T>[] {
    const deltas: StoreDelta<T>[] = [];
    const seen = new Set<string>();
    for (const incoming of objects) {
      const obj = ingest(incoming);
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#items.get(key);
      if (old === undefined) {
        this.#set(key, undefined, obj);
        deltas.push({ type: 'add', obj });
        continue;
      }
      if (uidOf(old) === uidOf(obj) && rvOf(old) === rvOf(obj)) continue;
      this.#set(key, old, obj);
      if (uidOf(old) !== uidOf(obj)) deltas.push({ type: 'delete', obj: old, finalStateUnknown: false }, { type: 'add', obj });
      else deltas.push({ type: 'update', old, obj });
    }
    for (const [key, old] of [...this.#items]) {
      if (seen.has(key)) continue;
      this.#set(key, old, undefined);
      deltas.push({ type: 'delete', obj: old, finalStateUnknown: true });
    }
    return deltas;
  }

  #set(key: string, old: T | undefined, obj: T | undefined): void {
    this.#listCache = undefined;
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const idx = this.#indexes.get(name);
      if (idx === undefined) continue;
      if (old !== undefined) {
        for (const v of fn(old)) {
          const keys = idx.get(v);
          keys?.delete(key);
          if (keys?.size === 0) idx.delete(v);
        }
      }
      if (obj !== undefined) {
        for (const v of fn(obj)) {
          let keys = idx.get(v);
          if (keys === undefined) {
            keys = new Set();
            idx.set(v, keys);
          }
          keys.add(key);
        }
      }
    }
    if (obj === undefined) this.#items.delete(key);
    else this.#items.set(key, obj);
  }
}
