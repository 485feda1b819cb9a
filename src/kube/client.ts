// The REST client: typed verbs over raw JSON (no model serialization, so unknown fields survive), Status-aware
// errors, a client-side QPS/burst limit and request counters.

import type { KubeConfig } from '@kubernetes/client-node';
import pkg from '../../package.json' with { type: 'json' };
import { ApiError, apiErrorFromResponse, isGone } from './api-error.ts';
import { resourcePath, type ResourceRef } from './resources.ts';
import { TokenBucket } from './token-bucket.ts';
import { Transport, type Query } from './transport.ts';
import type { KubeList, KubeObject } from './types.ts';

export { loadKubeConfig, KubeConfigError } from './kubeconfig.ts';
export * from './resources.ts';

/** Kruise runs with --rest-config-qps 30 --rest-config-burst 50 (client-go's default is 5/10). */
export const DEFAULT_QPS = 30;
export const DEFAULT_BURST = 50;
export const USER_AGENT = `cloneset-controller/${pkg.version}`;
export const LIST_PAGE_SIZE = 500;

export interface ClientOptions {
  qps: number;
  burst: number;
  userAgent?: string;
}

export type PatchType = 'merge' | 'strategic' | 'json';
const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json', // core types only: CRDs answer 415
  json: 'application/json-patch+json',
};

export type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'watch';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  resourceVersion: string;
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface DeleteOptions {
  /** Delete only if the object still has this UID (it was not deleted and recreated meanwhile). */
  preconditionUid?: string;
  preconditionResourceVersion?: string;
  /** 'Foreground' | 'Background' | 'Orphan' */
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

export type WatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: unknown };

const WATCH_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** A watch stream that stays silent this long past its own timeoutSeconds is presumed dead. */
const WATCH_DEADLINE_SLACK_MS = 30_000;

export function parseWatchLine(line: string): WatchEvent {
  const raw: unknown = JSON.parse(line);
  if (typeof raw !== 'object' || raw === null || !('type' in raw) || !('object' in raw)) {
    throw new Error(`malformed watch event: ${line.slice(0, 200)}`);
  }
  const { type, object } = raw;
  if (typeof type !== 'string' || !WATCH_TYPES.has(type)) throw new Error(`unknown watch event type ${String(type)}`);
  if (type === 'ERROR') return { type, object };
  if (typeof object !== 'object' || object === null) throw new Error(`watch ${type} event without an object`);
  return { type: type as 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', object: object as KubeObject };
}

export class KubeClient {
  readonly #transport: Transport;
  readonly #bucket: TokenBucket;
  readonly #counts = new Map<Verb, number>();
  #total = 0;

  constructor(transport: Transport, bucket: TokenBucket) {
    this.#transport = transport;
    this.#bucket = bucket;
  }

  static async fromKubeConfig(kc: KubeConfig, opts: ClientOptions): Promise<KubeClient> {
    const transport = await Transport.create(kc, opts.userAgent ?? USER_AGENT);
    return new KubeClient(transport, new TokenBucket(opts.qps, opts.burst));
  }

  /** Total API requests issued (including watches and list pages). */
  get requestCount(): number {
    return this.#total;
  }

  requestCounts(): Readonly<Partial<Record<Verb, number>>> {
    return Object.fromEntries(this.#counts);
  }

  /** The API server's base URL (for log lines). */
  get server(): string {
    return this.#transport.server.origin;
  }

  close(): void {
    this.#transport.close();
  }

  async #call(verb: Verb, method: string, path: string, query: Query, body?: { contentType: string; value: unknown }): Promise<unknown> {
    await this.#bucket.take();
    this.#count(verb);
    const payload = body === undefined ? undefined : { contentType: body.contentType, data: isRawJson(body.value) ? body.value.rawJson : JSON.stringify(body.value) };
    const res = await this.#transport.request(method, path, query, payload);
    if (res.status < 200 || res.status > 299) {
      throw apiErrorFromResponse(res.status, res.body, { request: `${method} ${path}` });
    }
    return res.body === '' ? undefined : (JSON.parse(res.body) as unknown);
  }

  #count(verb: Verb): void {
    this.#total++;
    this.#counts.set(verb, (this.#counts.get(verb) ?? 0) + 1);
  }

  /** GET of a path outside the resource tree: `/version`, discovery documents such as `/apis/<group>/<version>`. */
  async getPath<T>(path: string): Promise<T> {
    return (await this.#call('get', 'GET', path, {})) as T;
  }

  async get<T>(r: ResourceRef, ns: string | undefined, name: string): Promise<T> {
    return (await this.#call('get', 'GET', resourcePath(r, ns, name), {})) as T;
  }

  async list<T>(r: ResourceRef, ns: string | undefined, opts: ListOptions = {}): Promise<KubeList<T>> {
    const query: Query = { ...opts };
    return (await this.#call('list', 'GET', resourcePath(r, ns), query)) as KubeList<T>;
  }

  /**
   * Lists every page (`limit` 500 + `continue`). If the continue token expires mid-way (410), falls back to
   * one unpaginated list, as client-go's pager does. Returns the items and the list's resourceVersion.
   */
  async listAll<T>(r: ResourceRef, ns: string | undefined, opts: { labelSelector?: string; fieldSelector?: string; pageSize?: number } = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const { pageSize = LIST_PAGE_SIZE, ...selectors } = opts;
    const items: T[] = [];
    let token: string | undefined;
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await this.list<T>(r, ns, { ...selectors, limit: pageSize, ...(token === undefined ? {} : { continue: token }) });
      } catch (e) {
        if (token === undefined || !isGone(e)) throw e;
        const full = await this.list<T>(r, ns, selectors);
        return { items: [...full.items], resourceVersion: full.metadata.resourceVersion ?? '' };
      }
      items.push(...page.items);
      token = page.metadata.continue;
      if (token === undefined || token === '') return { items, resourceVersion: page.metadata.resourceVersion ?? '' };
    }
  }

  async create<T>(r: ResourceRef, ns: string | undefined, body: unknown, opts: { subresource?: string; name?: string; dryRun?: boolean } = {}): Promise<T> {
    // A create on a subresource (pods/binding, …) is addressed to the parent object.
    const name = opts.subresource === undefined ? undefined : (opts.name ?? nameOfBody(body));
    const path = name === undefined ? resourcePath(r, ns) : resourcePath(r, ns, name, opts.subresource);
    // dryRun=All: admission (webhooks included) and validation run, nothing is stored
    const query = opts.dryRun === true ? { dryRun: 'All' } : {};
    return (await this.#call('create', 'POST', path, query, { contentType: 'application/json', value: body })) as T;
  }

  async patch<T>(r: ResourceRef, ns: string | undefined, name: string, patch: unknown, type: PatchType, opts: { subresource?: string } = {}): Promise<T> {
    const path = resourcePath(r, ns, name, opts.subresource);
    return (await this.#call('patch', 'PATCH', path, {}, { contentType: PATCH_CONTENT_TYPE[type], value: patch })) as T;
  }

  /** PUT of the whole object (optimistic concurrency on metadata.resourceVersion). */
  async update<T>(r: ResourceRef, ns: string | undefined, name: string, body: unknown, opts: { subresource?: string } = {}): Promise<T> {
    const path = resourcePath(r, ns, name, opts.subresource);
    return (await this.#call('update', 'PUT', path, {}, { contentType: 'application/json', value: body })) as T;
  }

  async delete(r: ResourceRef, ns: string | undefined, name: string, opts: DeleteOptions = {}): Promise<void> {
    const preconditions = {
      ...(opts.preconditionUid === undefined ? {} : { uid: opts.preconditionUid }),
      ...(opts.preconditionResourceVersion === undefined ? {} : { resourceVersion: opts.preconditionResourceVersion }),
    };
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      ...(Object.keys(preconditions).length === 0 ? {} : { preconditions }),
      ...(opts.propagationPolicy === undefined ? {} : { propagationPolicy: opts.propagationPolicy }),
      ...(opts.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: opts.gracePeriodSeconds }),
    };
    await this.#call('delete', 'DELETE', resourcePath(r, ns, name), {}, { contentType: 'application/json', value: body });
  }

  /**
   * Streams watch events to `onEvent` until the server ends the stream (timeoutSeconds), `signal` aborts, or
   * the stream is silent past its deadline; all three resolve. Rejects with ApiError (e.g. 410 Gone for a
   * too-old resourceVersion), ConnectionError, or what `onEvent` threw. ERROR events are passed to onEvent.
   */
  async watch(r: ResourceRef, ns: string | undefined, opts: WatchOptions, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    try {
      await this.#bucket.take(signal);
    } catch (e) {
      if (signal.aborted) return; // aborted while waiting for a token
      throw e;
    }
    if (signal.aborted) return;
    this.#count('watch');
    const query: Query = {
      watch: 'true',
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: opts.timeoutSeconds,
      allowWatchBookmarks: opts.allowWatchBookmarks,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    const deadline = opts.timeoutSeconds * 1000 + WATCH_DEADLINE_SLACK_MS;
    await this.#transport.stream(resourcePath(r, ns), query, (line) => onEvent(parseWatchLine(line)), signal, deadline);
  }
}

/**
 * A request body sent byte for byte, for objects whose exact serialisation matters (a ControllerRevision's
 * `data` is stored verbatim and compared as bytes, spec §7.1).
 */
export interface RawJson {
  readonly rawJson: string;
}

function isRawJson(v: unknown): v is RawJson {
  return typeof v === 'object' && v !== null && 'rawJson' in v && typeof v.rawJson === 'string';
}

function nameOfBody(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'metadata' in body) {
    const meta = body.metadata;
    if (typeof meta === 'object' && meta !== null && 'name' in meta && typeof meta.name === 'string') return meta.name;
  }
  throw new Error('create on a subresource needs opts.name or body.metadata.name');
}

export { ApiError };
