// Informer: the watcher feeds the store, and the store's deltas feed the handlers (add, update(old, new),
// delete). The store is updated before handlers run, so a handler always reads a cache at least as new.

import type { Logger } from 'pino';
import type { KubeClient, WatchEvent } from '../kube/client.ts';
import { apiVersionOf, type ResourceRef } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { sleep, type Clock } from './clock.ts';
import { ObjectStore, objectKey, type Indexers, type Store, type StoreDelta } from './store.ts';
import { runWatcher, type ListWatch, type WatcherEvent } from './watcher.ts';

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** `finalStateUnknown`: the deletion was inferred from a relist and `obj` is the last state seen. */
  onDelete?(obj: T, info: { finalStateUnknown: boolean }): void;
}

export interface InformerOptions<T> {
  client: KubeClient;
  resource: ResourceRef;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Indexers<T>;
  clock: Clock;
  logger: Logger;
  /**
   * What the cache keeps of each object (client-go's SetTransform), or a stored-version object mapped to the internal
   * model: applied to every listed and watched object before it is stored and handed to the handlers. Must be pure
   * and keep name, namespace, uid and resourceVersion.
   */
  transform?: (obj: T) => T;
  /** Testing/recovery: skip the first list and watch from this resourceVersion (a 410 then relists). */
  resumeFrom?: string;
  random?: () => number;
}

export interface InformerStats {
  /** Lists started. */
  lists: number;
  /** Lists whose last page arrived: a relist is over when this catches up with `lists`. */
  listsDone: number;
  watches: number;
  events: number;
  /** Objects the transform threw on: logged with their key and cached untransformed. */
  transformErrors: number;
}

export class Informer<T extends KubeObject> {
  readonly #store: ObjectStore<T>;
  readonly #opts: InformerOptions<T>;
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #log: Logger;
  readonly #stats: InformerStats = { lists: 0, listsDone: 0, watches: 0, events: 0, transformErrors: 0 };
  #synced = false;
  #started = false;
  readonly #syncWaiters = new Set<() => void>();

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
    this.#store = new ObjectStore<T>(opts.indexers ?? {});
    const what = apiVersionOf(opts.resource) + '/' + opts.resource.plural;
    this.#log = opts.logger.child({ informer: what, ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }) });
  }

  get store(): Store<T> {
    return this.#store;
  }

  /** Counters of the underlying list/watch calls (tests, benchmarks). */
  get stats(): Readonly<InformerStats> {
    return { ...this.#stats };
  }

  addHandlers(h: InformerHandlers<T>): void {
    this.#handlers.push(h);
    // Like client-go: a handler added late first sees the current contents as adds.
    if (this.#synced) for (const obj of this.#store.list()) this.#call(() => h.onAdd?.(obj));
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves after the first list has been stored and delivered; rejects if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#syncWaiters.delete(done);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('waitForSync aborted'));
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted === true) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.add(done);
    });
  }

  /** Lists (paginated) then watches until `signal` aborts; bookmarks, relist on 410, backoff 800 ms → 30 s. */
  start(signal: AbortSignal): void {
    if (this.#started) throw new Error('informer already started');
    this.#started = true;
    const { clock } = this.#opts;
    runWatcher<T>(
      {
        source: this.#listWatch(),
        sink: (events) => this.#ingest(events),
        log: ({ level, msg, err }) => this.#log[level](err === undefined ? {} : { err }, msg),
        now: () => clock.monotonicNow(),
        sleep: (ms, s) => sleep(clock, ms, s),
        random: this.#opts.random ?? Math.random,
        ...(this.#opts.resumeFrom === undefined ? {} : { resumeFrom: this.#opts.resumeFrom }),
      },
      signal,
    ).catch((err: unknown) => this.#log.error({ err }, 'informer stopped unexpectedly'));
  }

  /**
   * The transform, made total: an object it throws on is counted, logged with its key, and kept untransformed.
   * A throwing transform must never fail the list or the watch — the watcher would retry the same list or the
   * same resourceVersion for ever (and before the first sync, the workers would never start).
   */
  #safeTransform(): ((obj: T) => T) | undefined {
    const transform = this.#opts.transform;
    if (transform === undefined) return undefined;
    return (obj) => {
      try {
        return transform(obj);
      } catch (err) {
        this.#stats.transformErrors++;
        const meta = obj.metadata;
        const key = `${meta?.namespace ?? ''}${meta?.namespace === undefined ? '' : '/'}${meta?.name ?? ''}`;
        this.#log.error({ err, key }, 'cache transform failed; caching the object untransformed');
        return obj;
      }
    };
  }

  #listWatch(): ListWatch<T> {
    const { client, resource, namespace, labelSelector, fieldSelector } = this.#opts;
    const transform = this.#safeTransform();
    const selectors = {
      ...(labelSelector === undefined ? {} : { labelSelector }),
      ...(fieldSelector === undefined ? {} : { fieldSelector }),
    };
    // A relist (after a 410) of an object the cache already holds at the same resourceVersion takes the cached
    // object instead of a new copy, page by page: the list then holds references, not a second cache. A list of
    // new copies would hold the store and every newly listed (and transformed) pod at once until `replace` dropped
    // one of them — twice the cache's memory for the length of a 100 000-pod list. It also saves the transform.
    const cachedOrNew = (obj: T): T => {
      const meta = obj.metadata;
      const cached = meta?.name === undefined || meta.name === '' ? undefined : this.#store.get(objectKey(obj));
      if (cached !== undefined && cached.metadata?.uid === meta?.uid && cached.metadata?.resourceVersion === meta?.resourceVersion) return cached;
      return transform === undefined ? obj : transform(obj);
    };
    return {
      // The transform runs as objects arrive: list pages one by one, watch events one by one.
      list: () => {
        this.#stats.lists++;
        return client.listAll<T>(resource, namespace, { ...selectors, map: cachedOrNew }).then((listed) => {
          this.#stats.listsDone++;
          return listed;
        });
      },
      watch: (resourceVersion, timeoutSeconds, onEvent, signal) => {
        this.#stats.watches++;
        const transformed =
          transform === undefined
            ? onEvent
            : (e: WatchEvent): void => {
                onEvent(e.type === 'ERROR' || e.type === 'BOOKMARK' ? e : { type: e.type, object: transform(e.object as T) });
              };
        return client.watch(resource, namespace, { resourceVersion, timeoutSeconds, allowWatchBookmarks: true, ...selectors }, transformed, signal);
      },
    };
  }

  #ingest(events: readonly WatcherEvent<T>[]): void {
    for (const ev of events) {
      let deltas: StoreDelta<T>[];
      try {
        deltas = ev.type === 'replace' ? this.#store.replace(ev.items) : ev.type === 'apply' ? this.#store.apply(ev.object) : this.#store.remove(ev.object);
      } catch (err) {
        this.#log.error({ err }, 'dropped an object the cache cannot hold');
        continue;
      }
      this.#stats.events += ev.type === 'replace' ? ev.items.length : 1;
      for (const d of deltas) this.#deliver(d);
      if (ev.type === 'replace' && !this.#synced) {
        this.#synced = true;
        this.#log.debug({ objects: this.#store.size }, 'synced');
        for (const w of [...this.#syncWaiters]) w();
        this.#syncWaiters.clear();
      }
    }
  }

  #deliver(d: StoreDelta<T>): void {
    for (const h of this.#handlers) {
      this.#call(() => {
        switch (d.type) {
          case 'add':
            return h.onAdd?.(d.obj);
          case 'update':
            return h.onUpdate?.(d.old, d.obj);
          case 'delete':
            return h.onDelete?.(d.obj, { finalStateUnknown: d.finalStateUnknown });
        }
      });
    }
  }

  #call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err }, 'informer event handler threw');
    }
  }
}
