// The REST client: typed verbs over raw JSON (no model serialization, so unknown fields survive), Status-aware
// errors, client-side QPS/burst limits per resource kind (rate-limits.ts), the request policy of request-policy.ts (retries, Retry-After, retry
// budget, per-attempt deadline), cancellation by signal (`fenced`) and client-go's `rest_client_*` metrics.

import type { KubeConfig } from '@kubernetes/client-node';
import pkg from '../../package.json' with { type: 'json' };
import { ApiError, ConnectionError, FenceDeadlineError, RequestAbortedError, apiErrorFromResponse, isGone } from './api-error.ts';
import { DEFAULT_REQUEST_POLICY, RetryBudget, retryDecision, type AttemptFailure, type RequestPolicy } from './request-policy.ts';
import { resourcePath, type ResourceRef } from './resources.ts';
import { NON_RESOURCE_KEY, RateLimits, limiterKey } from './rate-limits.ts';
import { ListDecoder, type BodyDecoder } from './list-decoder.ts';
import { Transport, type HttpTransport, type Query } from './transport.ts';
import { realBucketTime, type BucketTime } from './token-bucket.ts';
import type { KubeList, KubeObject, ObjectMeta } from './types.ts';

export { loadKubeConfig, KubeConfigError } from './kubeconfig.ts';
export * from './resources.ts';

/** Kruise runs with --rest-config-qps 30 --rest-config-burst 50 (client-go's default is 5/10). */
export const DEFAULT_QPS = 30;
export const DEFAULT_BURST = 50;
export const USER_AGENT = `cloneset-controller/${pkg.version}`;
export const LIST_PAGE_SIZE = 500;

export interface ClientOptions {
  /** Per resource kind, as controller-runtime's client (rate-limits.ts); <= 0 = unlimited. */
  qps: number;
  burst: number;
  /** `cloneset-controller/<identity>` in the controller, so the audit log tells which replica wrote. */
  userAgent?: string;
  /** Overrides of DEFAULT_REQUEST_POLICY (retries, backoff, deadline, budget). */
  policy?: Partial<RequestPolicy>;
  /** A watch silent (no event, no bookmark) this long is reconnected from its last resourceVersion; 0 = off. */
  watchIdleTimeoutMs?: number;
  metrics?: RequestMetrics;
  /** Jitter source in [0, 1) (tests inject a fixed one). */
  random?: () => number;
  /** Where retry backoffs wait (tests and the simulation inject a virtual clock). */
  time?: BucketTime;
}

/** Where the client reports each attempt and retry (server.ts backs it with client-go's `rest_client_*` metrics). */
export interface RequestMetrics {
  /** `code` is the HTTP status, or `<error>` when there was no answer (client-go's label value). */
  request(r: { readonly method: string; readonly host: string; readonly code: string; readonly seconds: number; readonly stream?: boolean }): void;
  retry(r: { readonly method: string; readonly host: string; readonly code: string }): void;
}

const NO_METRICS: RequestMetrics = { request: () => undefined, retry: () => undefined };

/** Default of --watch-idle-timeout: longer than the API server's bookmark interval (1 min). */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 90_000;

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

export interface WriteOptions {
  subresource?: string;
}

export interface CreateOptions extends WriteOptions {
  /** The parent object's name, for a create on a subresource (default: the body's metadata.name). */
  name?: string;
  dryRun?: boolean;
}

/** A write's answer with `metadataOnly`: the object's metadata (a meta.k8s.io/v1 PartialObjectMetadata), no spec or status. */
export interface WrittenObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
}

/**
 * The Accept header of a write whose caller reads only the answer's metadata (the executor: the resourceVersion
 * it expects next in the cache). The API server then encodes and sends the metadata alone, and we parse it alone:
 * without its spec and status a pod's answer is about half as long, 2.7 of 5.2 KB (docs/performance.md, "Write
 * answers as metadata"). `application/json` after it: a server that cannot transform the answer sends the whole
 * object, whose metadata is the same.
 */
export const METADATA_ONLY_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';

/** Drops an answer's text as it arrives: for answers nobody reads. */
const DISCARD: BodyDecoder = { write: () => undefined, end: () => undefined };
const DISCARDED_ANSWER = { decode: () => DISCARD, accept: METADATA_ONLY_ACCEPT } as const;
const METADATA_ANSWER = { accept: METADATA_ONLY_ACCEPT } as const;

function answerOf(opts: { readonly metadataOnly?: boolean }): { readonly accept?: string } {
  return opts.metadataOnly === true ? METADATA_ANSWER : {};
}

export interface DeleteOptions {
  /** Delete only if the object still has this UID (it was not deleted and recreated meanwhile). */
  preconditionUid?: string;
  preconditionResourceVersion?: string;
  /** 'Foreground' | 'Background' | 'Orphan' */
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: KubeObject } | { type: 'ERROR'; object: unknown };

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

/** What every view of one client shares: one connection pool, the rate limiters, one retry budget, counters. */
interface Shared {
  readonly transport: HttpTransport;
  readonly limits: RateLimits;
  readonly policy: RequestPolicy;
  readonly budget: RetryBudget;
  readonly metrics: RequestMetrics;
  readonly random: () => number;
  readonly time: BucketTime;
  readonly watchIdleTimeoutMs: number;
  readonly counts: Map<Verb, number>;
  total: number;
}

export class KubeClient {
  #s: Shared;
  readonly #signal: AbortSignal | undefined;
  /** Aborts requests not yet sent (see fenced); includes #signal. */
  #unsent: AbortSignal | undefined;
  /** The fence: ms left before a request must have been answered (see fenced). */
  #fence: (() => number) | undefined;

  constructor(transport: HttpTransport, limits: RateLimits, opts: Omit<ClientOptions, 'qps' | 'burst' | 'userAgent'> = {}, signal?: AbortSignal) {
    const policy = { ...DEFAULT_REQUEST_POLICY, ...opts.policy };
    this.#s = {
      transport,
      limits,
      policy,
      budget: new RetryBudget(policy.budgetCapacity, policy.budgetRatio),
      metrics: opts.metrics ?? NO_METRICS,
      random: opts.random ?? Math.random,
      time: opts.time ?? realBucketTime,
      watchIdleTimeoutMs: opts.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS,
      counts: new Map(),
      total: 0,
    };
    this.#signal = signal;
    this.#unsent = signal;
  }

  static async fromKubeConfig(kc: KubeConfig, opts: ClientOptions): Promise<KubeClient> {
    const transport = await Transport.create(kc, opts.userAgent ?? USER_AGENT);
    return new KubeClient(transport, new RateLimits(opts.qps, opts.burst), opts);
  }

  /**
   * A view of this client (same connections, limiter, budget and counters) whose every request is bound to
   * `signal`: once it aborts, requests waiting for a token or a retry give up, in-flight ones have their socket
   * destroyed, and new ones fail at once with RequestAbortedError. The controller's writes go through such a
   * view bound to its leadership, so a replica that lost its lease cannot write any more (fencing).
   * `unsent` aborts only what has not been sent yet (waiting for a token or a retry): a replica that is shutting
   * down lets the requests already on the wire finish but sends no new ones.
   * `fence` gives, when asked, how many ms a request may still take (leadership: the leader lease's fence
   * deadline, leader-election.ts `fenceRemainingMs`). Asked once the request has its token: ≤ 0 refuses it;
   * otherwise the request carries that deadline, counted from before the auth hook and the wait for a socket,
   * and is never sent (or has its socket destroyed) once it passes — after a long pause (GC, SIGSTOP, a frozen VM)
   * or behind a socket queue full of slow requests, a write cannot reach the server after the lease expired.
   */
  fenced(signal: AbortSignal, opts: { unsent?: AbortSignal; fence?: () => number } = {}): KubeClient {
    const view = new KubeClient(this.#s.transport, this.#s.limits, {}, any(this.#signal, signal));
    view.#s = this.#s;
    view.#unsent = any(any(view.#signal, this.#unsent), opts.unsent);
    const outer = this.#fence;
    const inner = opts.fence;
    view.#fence = outer === undefined ? inner : inner === undefined ? outer : () => Math.min(outer(), inner());
    return view;
  }

  /** Total API requests issued (including watches, list pages and retries). */
  get requestCount(): number {
    return this.#s.total;
  }

  requestCounts(): Readonly<Partial<Record<Verb, number>>> {
    return Object.fromEntries(this.#s.counts);
  }

  /** The API server's base URL (for log lines). */
  get server(): string {
    return this.#s.transport.server.origin;
  }

  /** The limiter keys used so far (one token bucket each). */
  limiterKeys(): readonly string[] {
    return this.#s.limits.keys();
  }

  close(): void {
    this.#s.transport.close();
  }

  async #take(what: string, limiter: string): Promise<void> {
    const signal = this.#unsent;
    if (aborted(signal)) throw new RequestAbortedError(what);
    try {
      await this.#s.limits.for(limiter).take(signal);
    } catch (e) {
      if (aborted(signal)) throw new RequestAbortedError(what);
      throw e;
    }
  }

  async #call(
    verb: Verb,
    limiter: string,
    method: string,
    path: string,
    query: Query,
    body?: { contentType: string; value: unknown },
    answer: { readonly decode?: () => BodyDecoder; readonly accept?: string } = {},
  ): Promise<unknown> {
    const { decode, accept } = answer;
    const s = this.#s;
    const what = `${method} ${path}`;
    const host = s.transport.server.host;
    const payload = body === undefined ? undefined : { contentType: body.contentType, data: isRawJson(body.value) ? body.value.rawJson : JSON.stringify(body.value) };
    s.budget.deposit();
    for (let retry = 0; ; retry++) {
      await this.#take(what, limiter);
      if (aborted(this.#unsent)) throw new RequestAbortedError(what);
      const fenceMs = this.#fence?.();
      if (fenceMs !== undefined && fenceMs <= 0) throw new FenceDeadlineError(what, false);
      this.#count(verb);
      const started = performance.now();
      let failure: AttemptFailure;
      let error: Error;
      try {
        const res = await s.transport.request(method, path, query, payload, { signal: this.#signal, timeoutMs: s.policy.requestTimeoutMs, fenceMs, decode, accept });
        s.metrics.request({ method, host, code: String(res.status), seconds: (performance.now() - started) / 1000 });
        if (res.status >= 200 && res.status <= 299) {
          if (res.decoded !== undefined) return res.decoded.value;
          if (decode !== undefined) {
            // A transport that returned the text whole (the simulation's): the same decoder, on all of it at once.
            const decoder = decode();
            decoder.write(res.body);
            return decoder.end();
          }
          return res.body === '' ? undefined : (JSON.parse(res.body) as unknown);
        }
        const apiError = withRetryAfter(apiErrorFromResponse(res.status, res.body, { request: what }), res.retryAfter);
        failure = { kind: 'status', status: res.status, retryAfter: res.retryAfter, retryAfterSeconds: apiError.retryAfterSeconds };
        error = apiError;
      } catch (e) {
        s.metrics.request({ method, host, code: '<error>', seconds: (performance.now() - started) / 1000 });
        if (!(e instanceof ConnectionError)) throw e;
        failure = { kind: 'connection', notReceived: e.notReceived };
        error = e;
      }
      const decision = retryDecision(s.policy, method, failure, retry, s.random());
      if (!decision.retry || !s.budget.withdraw()) throw error;
      s.metrics.retry({ method, host, code: failure.kind === 'status' ? String(failure.status) : '<error>' });
      await this.#sleep(decision.delayMs, what);
    }
  }

  async #sleep(ms: number, what: string): Promise<void> {
    const signal = this.#unsent;
    try {
      await this.#s.time.sleep(ms, signal);
    } catch (e) {
      if (aborted(signal)) throw new RequestAbortedError(what);
      throw e;
    }
  }

  #count(verb: Verb): void {
    this.#s.total++;
    this.#s.counts.set(verb, (this.#s.counts.get(verb) ?? 0) + 1);
  }

  /** GET of a path outside the resource tree: `/version`, discovery documents such as `/apis/<group>/<version>`. */
  async getPath<T>(path: string): Promise<T> {
    return (await this.#call('get', NON_RESOURCE_KEY, 'GET', path, {})) as T;
  }

  async get<T>(r: ResourceRef, ns: string | undefined, name: string): Promise<T> {
    return (await this.#call('get', limiterKey(r, 'client'), 'GET', resourcePath(r, ns, name), {})) as T;
  }

  /** Lists draw from the kind's cache limiter: in controller-runtime, lists and watches are the informers'. */
  async list<T>(r: ResourceRef, ns: string | undefined, opts: ListOptions = {}): Promise<KubeList<T>> {
    return this.#list(r, ns, opts, undefined);
  }

  /** One list answer, decoded item by item as it arrives, `map` applied to each (src/kube/list-decoder.ts says why). */
  async #list<T>(r: ResourceRef, ns: string | undefined, opts: ListOptions, map: ((item: T) => T) | undefined): Promise<KubeList<T>> {
    const query: Query = { ...opts };
    return (await this.#call('list', limiterKey(r, 'cache'), 'GET', resourcePath(r, ns), query, undefined, { decode: () => new ListDecoder<T>(map) })) as KubeList<T>;
  }

  /**
   * Lists every page (`limit` 500 + `continue`). If the continue token expires mid-way (410), falls back to
   * one unpaginated list, as client-go's pager does. Returns the items and the list's resourceVersion.
   *
   * `map` (an informer's transform) runs on each item as soon as it is parsed, while the rest of its page is still
   * arriving (src/kube/list-decoder.ts): a page of whole objects is never held, one item at a time is. Whole pages
   * of 500 pods cost a 100 000-pod first list most of its CPU in full collections (docs/performance.md, "List
   * pages decoded item by item"); 10 000 pods listed whole at once, ~100 MiB more peak memory than page by page.
   */
  async listAll<T>(
    r: ResourceRef,
    ns: string | undefined,
    opts: { labelSelector?: string; fieldSelector?: string; pageSize?: number; map?: (item: T) => T } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const { pageSize = LIST_PAGE_SIZE, map, ...selectors } = opts;
    const items: T[] = [];
    let token: string | undefined;
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await this.#list<T>(r, ns, { ...selectors, limit: pageSize, ...(token === undefined ? {} : { continue: token }) }, map);
      } catch (e) {
        if (token === undefined || !isGone(e)) throw e;
        const full = await this.#list<T>(r, ns, selectors, map);
        return { items: [...full.items], resourceVersion: full.metadata.resourceVersion ?? '' };
      }
      for (const item of page.items) items.push(item);
      token = page.metadata.continue;
      if (token === undefined || token === '') return { items, resourceVersion: page.metadata.resourceVersion ?? '' };
    }
  }

  /** `metadataOnly`: answered with the created object's metadata alone ({@link WrittenObject}). */
  create(r: ResourceRef, ns: string | undefined, body: unknown, opts: CreateOptions & { metadataOnly: true }): Promise<WrittenObject>;
  create<T>(r: ResourceRef, ns: string | undefined, body: unknown, opts?: CreateOptions & { metadataOnly?: false }): Promise<T>;
  async create<T>(r: ResourceRef, ns: string | undefined, body: unknown, opts: CreateOptions & { metadataOnly?: boolean } = {}): Promise<T | WrittenObject> {
    // A create on a subresource (pods/binding, …) is addressed to the parent object.
    const name = opts.subresource === undefined ? undefined : (opts.name ?? nameOfBody(body));
    const path = name === undefined ? resourcePath(r, ns) : resourcePath(r, ns, name, opts.subresource);
    // dryRun=All: admission (webhooks included) and validation run, nothing is stored
    const query = opts.dryRun === true ? { dryRun: 'All' } : {};
    return (await this.#call('create', limiterKey(r, 'client'), 'POST', path, query, { contentType: 'application/json', value: body }, answerOf(opts))) as T | WrittenObject;
  }

  /** `metadataOnly`: answered with the patched object's metadata alone ({@link WrittenObject}). */
  patch(r: ResourceRef, ns: string | undefined, name: string, patch: unknown, type: PatchType, opts: WriteOptions & { metadataOnly: true }): Promise<WrittenObject>;
  patch<T>(r: ResourceRef, ns: string | undefined, name: string, patch: unknown, type: PatchType, opts?: WriteOptions & { metadataOnly?: false }): Promise<T>;
  async patch<T>(
    r: ResourceRef,
    ns: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions & { metadataOnly?: boolean } = {},
  ): Promise<T | WrittenObject> {
    const path = resourcePath(r, ns, name, opts.subresource);
    return (await this.#call('patch', limiterKey(r, 'client'), 'PATCH', path, {}, { contentType: PATCH_CONTENT_TYPE[type], value: patch }, answerOf(opts))) as T | WrittenObject;
  }

  /** PUT of the whole object (optimistic concurrency on metadata.resourceVersion). */
  async update<T>(r: ResourceRef, ns: string | undefined, name: string, body: unknown, opts: WriteOptions = {}): Promise<T> {
    const path = resourcePath(r, ns, name, opts.subresource);
    return (await this.#call('update', limiterKey(r, 'client'), 'PUT', path, {}, { contentType: 'application/json', value: body })) as T;
  }

  /** The answer (the object being deleted, or a Status) is not read: asked as metadata only, and not parsed. */
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
    await this.#call('delete', limiterKey(r, 'client'), 'DELETE', resourcePath(r, ns, name), {}, { contentType: 'application/json', value: body }, DISCARDED_ANSWER);
  }

  /**
   * Streams watch events to `onEvent` until the server ends the stream (timeoutSeconds), `signal` aborts, or
   * the stream is silent past its deadline; all three resolve. Rejects with ApiError (e.g. 410 Gone for a
   * too-old resourceVersion), ConnectionError, or what `onEvent` threw. ERROR events are passed to onEvent.
   */
  async watch(r: ResourceRef, ns: string | undefined, opts: WatchOptions, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const stop = any(this.#unsent, signal) ?? signal;
    try {
      await this.#s.limits.for(limiterKey(r, 'cache')).take(stop);
    } catch (e) {
      if (stop.aborted) return; // aborted while waiting for a token
      throw e;
    }
    if (stop.aborted) return;
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
    const host = this.#s.transport.server.host;
    const started = performance.now();
    let code = '200';
    try {
      await this.#s.transport.stream(resourcePath(r, ns), query, (line) => onEvent(parseWatchLine(line)), stop, deadline, this.#s.watchIdleTimeoutMs);
    } catch (e) {
      code = e instanceof ApiError ? String(e.code) : e instanceof ConnectionError ? '<error>' : code;
      throw e;
    } finally {
      this.#s.metrics.request({ method: 'GET', host, code, seconds: (performance.now() - started) / 1000, stream: true });
    }
  }
}

/**
 * A request body sent byte for byte, for objects whose exact serialisation matters (a ControllerRevision's
 * `data` is stored verbatim and compared as bytes, docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go).
 */
export interface RawJson {
  readonly rawJson: string;
}

/**
 * A Retry-After header that the Status body does not repeat is carried on the error, so that when the client
 * gives up the work queue still waits as long as the server asked (controller.ts `retryAfterMsOf`).
 */
function withRetryAfter(e: ApiError, header: string | undefined): ApiError {
  const seconds = header?.trim();
  if (e.retryAfterSeconds !== undefined || seconds === undefined || !/^\d+$/.test(seconds)) return e;
  const status = e.status ?? { kind: 'Status', code: e.code, message: e.message };
  return new ApiError(e.code, { ...status, details: { ...status.details, retryAfterSeconds: Number(seconds) } }, e.message);
}

function any(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return AbortSignal.any([a, b]);
}

/** A function, so TypeScript does not keep a narrowing of `aborted` across an await. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
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
