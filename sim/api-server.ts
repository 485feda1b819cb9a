// An in-memory Kubernetes API server, just large enough for the CloneSet controller: the resources it reads and
// writes, one global resourceVersion counter (as etcd's revision), list, watch from a resourceVersion with
// bookmarks and `410 Gone` once that version has left the history window, optimistic concurrency (409),
// create/delete preconditions, graceful pod deletion, the status subresources, owner-reference garbage
// collection and the CloneSet admission defaults. Requests come in as HTTP would (method, path, query, body);
// the transport in front of it (transport.ts) adds latency and faults.
import { defaultCloneSet } from '../src/admission/mutating.ts';
import type { Query } from '../src/kube/transport.ts';
import type { KubeObject, ObjectMeta } from '../src/kube/types.ts';
import type { SimClock } from './clock.ts';
import { WALL_EPOCH_MS } from './clock.ts';
import { jsonPatch, mergePatch, PatchError, strategicMergePatch, type Json } from './patch.ts';

export interface ApiAnswer {
  readonly status: number;
  readonly body: string;
  readonly retryAfter?: string;
}

/** A stored object (mutable only by the server, never handed out: answers are serialised copies). */
export type Obj = KubeObject & { metadata: ObjectMeta & { name: string; uid: string; resourceVersion: string }; [k: string]: unknown };

interface Kind {
  readonly plural: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Writes to the main resource keep the status (a status subresource exists). */
  readonly statusSubresource: boolean;
  /** Stored and watchable (events are only acknowledged). */
  readonly stored: boolean;
}

const KINDS: readonly Kind[] = [
  { plural: 'pods', group: '', version: 'v1', kind: 'Pod', namespaced: true, statusSubresource: true, stored: true },
  { plural: 'persistentvolumeclaims', group: '', version: 'v1', kind: 'PersistentVolumeClaim', namespaced: true, statusSubresource: true, stored: true },
  { plural: 'nodes', group: '', version: 'v1', kind: 'Node', namespaced: false, statusSubresource: true, stored: true },
  { plural: 'events', group: '', version: 'v1', kind: 'Event', namespaced: true, statusSubresource: false, stored: false },
  { plural: 'controllerrevisions', group: 'apps', version: 'v1', kind: 'ControllerRevision', namespaced: true, statusSubresource: false, stored: true },
  { plural: 'clonesets', group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet', namespaced: true, statusSubresource: true, stored: true },
  { plural: 'storageclasses', group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass', namespaced: false, statusSubresource: false, stored: true },
  { plural: 'leases', group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', namespaced: true, statusSubresource: false, stored: true },
];

export type MutationVerb = 'create' | 'update' | 'patch' | 'delete' | 'remove';

/** One committed change, as the checker and the kubelet see it. `origin` is who sent it. */
export interface Mutation {
  readonly origin: string;
  readonly verb: MutationVerb;
  readonly plural: string;
  readonly subresource: string | undefined;
  readonly before: Obj | undefined;
  readonly after: Obj | undefined;
}

export interface ServerWatch {
  /** Receives each watch event line (without the newline) and the resourceVersion it brings the client to. */
  readonly send: (line: string, rv: number) => void;
  /** The server ended the stream (timeout, a 410 after its ERROR event, a restore). */
  readonly end: () => void;
}

interface OpenWatch {
  readonly plural: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly sink: ServerWatch;
  readonly timer: { cancel(): void };
  open: boolean;
}

interface HistoryEntry {
  readonly rv: number;
  readonly plural: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Obj;
  /** The watch event line, serialised once for every watch that gets it. */
  line?: string;
}

/** Events kept for watches resuming from an older resourceVersion (the watch cache's window). */
const HISTORY_WINDOW = 400;
const BOOKMARK_EVERY_MS = 60_000;

class HttpError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

function statusBody(code: number, reason: string, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...extra });
}

export function errorAnswer(code: number, reason: string, message: string, retryAfterSeconds?: number): ApiAnswer {
  const details = retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } };
  return { status: code, body: statusBody(code, reason, message, details), ...(retryAfterSeconds === undefined ? {} : { retryAfter: String(retryAfterSeconds) }) };
}

interface Target {
  readonly kind: Kind;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

function parsePath(path: string): Target | { readonly discovery: string } | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  let rest: string[];
  let group: string;
  let version: string;
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return { discovery: path };
  }
  if (rest.length === 0) return { discovery: path };
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const kind = KINDS.find((k) => k.plural === rest[0] && k.group === group && k.version === version);
  if (kind === undefined) return undefined;
  return { kind, namespace, name: rest[1], subresource: rest[2] };
}

/** Stored objects are never changed in place (every write builds a new one), so copies are only needed for restore snapshots. */
function clone<T>(v: T): T {
  return v;
}

export interface ApiServerObserver {
  onMutation(m: Mutation): void;
}

export class ApiServer {
  readonly #clock: SimClock;
  readonly #objects = new Map<string, Obj>();
  #rv = 1;
  #uid = 0;
  readonly #history: HistoryEntry[] = [];
  /** Watches from a resourceVersion below this are answered 410 Gone. */
  #compactedRv = 0;
  readonly #watches = new Set<OpenWatch>();
  readonly #observers: ApiServerObserver[] = [];
  /** Terminating pods whose containers have stopped, held by a finalizer (by uid). */
  readonly #stoppedPods = new Set<string>();
  /** The wall clock of the API server's machine (creation and deletion timestamps). */
  #wallOffset = 0;

  constructor(clock: SimClock) {
    this.#clock = clock;
    this.#scheduleBookmarks();
  }

  observe(o: ApiServerObserver): void {
    this.#observers.push(o);
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  wallNow(): number {
    return WALL_EPOCH_MS + this.#clock.now() + this.#wallOffset;
  }

  rfc3339(): string {
    // Whole seconds: one text per second of wall time (the kubelet and every write ask for it).
    const second = Math.floor(this.wallNow() / 1000);
    if (this.#rfc3339?.second !== second) this.#rfc3339 = { second, text: new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
    return this.#rfc3339.text;
  }

  #rfc3339: { readonly second: number; readonly text: string } | undefined;

  // ---- direct access (the scenario, the kubelet, the checker) -------------------------------------------------

  /** The stored object (never change it: writes go through requests), or undefined. */
  peek(plural: string, namespace: string | undefined, name: string): Obj | undefined {
    const o = this.#objects.get(keyOf(plural, namespace, name));
    return o === undefined ? undefined : clone(o);
  }

  /** Stored objects of a kind (the live ones, not copies: callers must not change them). */
  all(plural: string): Obj[] {
    const out: Obj[] = [];
    for (const [k, o] of this.#objects) if (k.startsWith(`${plural}/`)) out.push(o);
    return out;
  }

  /** A request as `origin` straight to the server (no transport, no faults). */
  write(origin: string, method: string, path: string, body?: unknown, contentType = 'application/merge-patch+json'): ApiAnswer {
    return this.handleTyped(origin, method, path, {}, body === undefined ? undefined : JSON.stringify(body), contentType);
  }

  /**
   * An etcd restore: every stored object goes back to what it was `snapshot` (taken earlier by `snapshot()`);
   * objects keep their old resourceVersions, so caches that saw newer ones are ahead of the server. Every
   * watch ends and the history is compacted (re-watches get 410 and relist).
   */
  restore(snapshot: ReadonlyMap<string, Obj>): void {
    const before = new Map(this.#objects);
    this.#objects.clear();
    for (const [k, o] of snapshot) this.#objects.set(k, o);
    this.#history.length = 0;
    this.#listSnapshots.clear();
    // Every resourceVersion handed out before the restore is now too old to watch from (410 → relist).
    this.#compactedRv = ++this.#rv;
    for (const w of [...this.#watches]) this.#closeWatch(w);
    for (const [k, o] of before) {
      const now = this.#objects.get(k);
      if (now === undefined || now.metadata.uid !== o.metadata.uid)
        this.#notify({ origin: 'etcd-restore', verb: 'remove', plural: k.split('/')[0] ?? '', subresource: undefined, before: o, after: undefined });
    }
    for (const [k, o] of this.#objects) {
      const was = before.get(k);
      if (was === undefined || was.metadata.resourceVersion !== o.metadata.resourceVersion) {
        this.#notify({ origin: 'etcd-restore', verb: 'update', plural: k.split('/')[0] ?? '', subresource: undefined, before: was, after: o });
      }
    }
  }

  snapshot(): ReadonlyMap<string, Obj> {
    return new Map(this.#objects);
  }

  /** Drops the watch history: every watch that reconnects from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history.length = 0;
    this.#listSnapshots.clear(); // a continue token of a compacted revision is answered 410, as etcd's
  }

  /** Ends every open watch (an API server restart or a load balancer dropping connections). */
  dropWatches(filter: (plural: string) => boolean = () => true): number {
    let n = 0;
    for (const w of [...this.#watches]) {
      if (!filter(w.plural)) continue;
      this.#closeWatch(w);
      n++;
    }
    return n;
  }

  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  // ---- HTTP ----------------------------------------------------------------------------------------------------

  /** Request paths parsed so far: a run sends the same few hundred paths again and again. */
  readonly #paths = new Map<string, ReturnType<typeof parsePath>>();

  #parsePath(path: string): ReturnType<typeof parsePath> {
    if (this.#paths.has(path)) return this.#paths.get(path);
    const target = parsePath(path);
    this.#paths.set(path, target);
    return target;
  }

  #handleAny(origin: string, method: string, path: string, query: Query, body: string | undefined): ApiAnswer {
    try {
      return this.#handle(origin, method, path, query, body);
    } catch (e) {
      if (e instanceof HttpError) return errorAnswer(e.code, e.reason, e.message);
      if (e instanceof PatchError) return errorAnswer(e.code, e.code === 422 ? 'Invalid' : 'BadRequest', e.message);
      if (e instanceof SyntaxError) return errorAnswer(400, 'BadRequest', e.message);
      throw e;
    }
  }

  #handle(origin: string, method: string, path: string, query: Query, body: string | undefined): ApiAnswer {
    const target = this.#parsePath(path);
    if (target === undefined) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    if ('discovery' in target) return this.#discovery(target.discovery);
    const { kind, namespace, name, subresource } = target;
    if (method === 'GET' && name === undefined) return ok(this.#list(kind, namespace, query));
    if (method === 'GET' && name !== undefined) return this.#okObject(kind, this.#get(kind, namespace, name));
    if (method === 'POST') return this.#create(origin, kind, namespace, parseBody(body));
    if (name === undefined) throw new HttpError(405, 'MethodNotAllowed', `${method} on a collection`);
    if (method === 'PUT') return this.#okObject(kind, this.#update(origin, kind, namespace, name, subresource, parseBody(body)));
    if (method === 'PATCH') return this.#okObject(kind, this.#patch(origin, kind, namespace, name, subresource, parseBody(body), query));
    if (method === 'DELETE') return this.#delete(origin, kind, namespace, name, parseBody(body ?? '{}'));
    throw new HttpError(405, 'MethodNotAllowed', method);
  }

  #discovery(path: string): ApiAnswer {
    if (path === '/version') return ok({ major: '1', minor: '31', gitVersion: 'v1.31.0' });
    const parts = path.split('/').filter((p) => p !== '');
    const group = parts[0] === 'api' ? '' : (parts[1] ?? '');
    const version = parts[0] === 'api' ? (parts[1] ?? '') : (parts[2] ?? '');
    const resources = KINDS.filter((k) => k.group === group && k.version === version).map((k) => ({ name: k.plural, kind: k.kind, namespaced: k.namespaced }));
    if (resources.length === 0) throw new HttpError(404, 'NotFound', `no API group ${path}`);
    return ok({ kind: 'APIResourceList', groupVersion: group === '' ? version : `${group}/${version}`, resources });
  }

  #get(kind: Kind, namespace: string | undefined, name: string): Obj {
    const o = this.#objects.get(keyOf(kind.plural, namespace, name));
    if (o === undefined) throw new HttpError(404, 'NotFound', `${kind.plural} "${name}" not found`);
    return o;
  }

  #list(kind: Kind, namespace: string | undefined, query: Query): unknown {
    const limit = Number(query['limit'] ?? 0);
    const token = typeof query['continue'] === 'string' ? query['continue'] : '';
    if (!(limit > 0) && token === '') {
      const items = this.#select(kind.plural, namespace, fieldName(query['fieldSelector'])).map((o) => this.#wire(kind, o));
      return { kind: `${kind.kind}List`, apiVersion: apiVersion(kind), metadata: { resourceVersion: String(this.#rv) }, items };
    }
    // Pages (`limit`/`continue`) of one snapshot taken at the first page, as etcd serves them at the list's revision:
    // a million pods in one answer would not even fit in one string.
    let page = token === '' ? undefined : this.#listSnapshots.get(token);
    if (token !== '' && page === undefined) throw new HttpError(410, 'Expired', 'The provided continue parameter is too old');
    this.#listSnapshots.delete(token);
    page ??= { items: this.#select(kind.plural, namespace, fieldName(query['fieldSelector'])), offset: 0, rv: this.#rv };
    const end = page.offset + (limit > 0 ? limit : page.items.length);
    const items = page.items.slice(page.offset, end).map((o) => this.#wire(kind, o));
    let next = '';
    if (end < page.items.length) {
      next = `${page.rv}-${String(++this.#listSnapshotSeq)}`;
      this.#listSnapshots.set(next, { ...page, offset: end });
    }
    return { kind: `${kind.kind}List`, apiVersion: apiVersion(kind), metadata: { resourceVersion: String(page.rv), ...(next === '' ? {} : { continue: next }) }, items };
  }

  /** Paginated lists in progress: continue token → the snapshot and where the next page starts. */
  readonly #listSnapshots = new Map<string, { readonly items: readonly Obj[]; readonly offset: number; readonly rv: number }>();
  #listSnapshotSeq = 0;

  #select(plural: string, namespace: string | undefined, name: string | undefined): Obj[] {
    const out: Obj[] = [];
    for (const [k, o] of this.#objects) {
      if (!k.startsWith(`${plural}/`)) continue;
      if (namespace !== undefined && o.metadata.namespace !== namespace) continue;
      if (name !== undefined && o.metadata.name !== name) continue;
      out.push(o);
    }
    return out;
  }

  #wire(kind: Kind, o: Obj): Obj {
    return { ...clone(o), apiVersion: apiVersion(kind), kind: kind.kind };
  }

  /**
   * A stored object as the wire carries it, written out once: the answer to the write that stored it, its watch
   * event and later GETs share the text (stored objects are never changed in place).
   */
  readonly #texts = new WeakMap<Obj, string>();

  #json(kind: Kind, o: Obj): string {
    let text = this.#texts.get(o);
    if (text === undefined) {
      text = JSON.stringify(this.#wire(kind, o));
      this.#texts.set(o, text);
    }
    return text;
  }

  #okObject(kind: Kind, o: Obj): ApiAnswer {
    return { status: 200, body: this.#json(kind, o) };
  }

  #create(origin: string, kind: Kind, namespace: string | undefined, raw: unknown): ApiAnswer {
    let body = asObject(raw);
    const meta = asObject(body['metadata'] ?? {});
    let name = typeof meta['name'] === 'string' ? meta['name'] : '';
    if (name === '' && typeof meta['generateName'] === 'string') name = `${meta['generateName']}${(this.#uid + 1).toString(36).padStart(5, 'x')}`;
    if (name === '') throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    if (!kind.stored) {
      return { status: 201, body: JSON.stringify({ ...body, metadata: { ...meta, name, namespace, uid: this.#newUid(), resourceVersion: String(this.#rv) } }) };
    }
    const key = keyOf(kind.plural, namespace, name);
    if (this.#objects.has(key)) throw new HttpError(409, 'AlreadyExists', `${kind.plural} "${name}" already exists`);
    if (kind.plural === 'clonesets') body = defaultCloneSet(body, 'v1beta1', { injectTemplateDefaults: false });
    const rv = String(++this.#rv);
    const obj = {
      ...body,
      metadata: {
        ...meta,
        name,
        ...(namespace === undefined ? {} : { namespace }),
        uid: this.#newUid(),
        resourceVersion: rv,
        creationTimestamp: this.rfc3339(),
        ...(kind.plural === 'clonesets' ? { generation: 1 } : {}),
      },
    } as Obj;
    stripTypeMeta(obj);
    if (kind.statusSubresource && kind.plural !== 'pods') delete obj['status'];
    if (kind.plural === 'pods') obj['status'] = { phase: 'Pending', ...asObject(obj['status'] ?? {}) };
    this.#objects.set(key, obj);
    this.#commit(origin, 'create', kind.plural, undefined, undefined, obj, 'ADDED');
    return { status: 201, body: this.#json(kind, obj) };
  }

  #update(origin: string, kind: Kind, namespace: string | undefined, name: string, subresource: string | undefined, raw: unknown): Obj {
    const old = this.#get(kind, namespace, name);
    const body = asObject(raw);
    const meta = asObject(body['metadata'] ?? {});
    const rv = meta['resourceVersion'];
    if (typeof rv === 'string' && rv !== '' && rv !== old.metadata.resourceVersion) {
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${kind.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    return this.#replace(origin, kind, old, subresource, body as Obj, 'update');
  }

  #patch(origin: string, kind: Kind, namespace: string | undefined, name: string, subresource: string | undefined, patch: unknown, _query: Query): Obj {
    const old = this.#get(kind, namespace, name);
    const doc = old as unknown as Json;
    let next: Json;
    const p = patch as Json;
    if (Array.isArray(p)) next = jsonPatch(doc, p);
    else if (kind.group === '' && this.#patchType === 'strategic') next = strategicMergePatch(doc, p);
    else next = mergePatch(doc, p);
    // A resourceVersion in a patch is a precondition (the API server compares it with the stored one).
    const pm = !Array.isArray(p) && typeof p === 'object' && p !== null ? (p as Record<string, Json>)['metadata'] : undefined;
    const prv = typeof pm === 'object' && pm !== null && !Array.isArray(pm) ? pm['resourceVersion'] : undefined;
    if (typeof prv === 'string' && prv !== old.metadata.resourceVersion) {
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${kind.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    return this.#replace(origin, kind, old, subresource, next as unknown as Obj, 'patch');
  }

  /** The content type of the request being handled (set by `handleTyped`). */
  #patchType: 'merge' | 'strategic' | 'json' = 'merge';

  /** `handle` for a request whose Content-Type matters (patches). */
  handleTyped(origin: string, method: string, path: string, query: Query, body: string | undefined, contentType: string | undefined): ApiAnswer {
    this.#patchType = contentType?.includes('strategic') === true ? 'strategic' : contentType?.includes('json-patch') === true ? 'json' : 'merge';
    return this.#handleAny(origin, method, path, query, body);
  }

  #replace(origin: string, kind: Kind, old: Obj, subresource: string | undefined, incoming: Obj, verb: MutationVerb): Obj {
    const inMeta = asObject(incoming.metadata ?? {});
    let next: Obj;
    if (subresource === 'status') {
      next = { ...clone(old), status: clone(incoming['status']) } as Obj;
      if (kind.plural === 'pods') {
        // pods/status may change labels, annotations and conditions, never the spec or the owners.
        next = {
          ...next,
          metadata: { ...old.metadata, labels: clone(incoming.metadata?.labels ?? {}), annotations: clone(incoming.metadata?.annotations ?? {}) },
        } as Obj;
      }
    } else if (subresource === undefined || subresource === 'resize') {
      next = { ...clone(incoming), metadata: { ...clone(inMeta), name: old.metadata.name, uid: old.metadata.uid, resourceVersion: old.metadata.resourceVersion } } as Obj;
      copyMeta(next, old, ['namespace', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']);
      if (kind.statusSubresource && kind.plural !== 'pods') next['status'] = clone(old['status']);
      if (kind.plural === 'pods') next['status'] = clone(old['status']);
      if (kind.plural === 'clonesets') {
        const defaulted = defaultCloneSet(next as unknown as Record<string, unknown>, 'v1beta1', { injectTemplateDefaults: false }) as Obj;
        next = defaulted;
        if (!sameJson(next['spec'], old['spec'])) next.metadata = { ...next.metadata, generation: (old.metadata.generation ?? 1) + 1 };
      }
    } else {
      throw new HttpError(404, 'NotFound', `subresource ${subresource}`);
    }
    stripTypeMeta(next);
    // A terminating object goes when its last finalizer does (a pod: once its containers have stopped too).
    const stopped = kind.plural !== 'pods' || this.#stoppedPods.has(old.metadata.uid);
    if (old.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0 && stopped) {
      return this.#remove(origin, kind, old);
    }
    if (sameJson(next, old)) return old; // a no-op write keeps the resourceVersion
    next.metadata = { ...next.metadata, resourceVersion: String(++this.#rv) };
    this.#objects.set(keyOf(kind.plural, old.metadata.namespace, old.metadata.name), next);
    this.#commit(origin, verb, kind.plural, subresource, old, next, 'MODIFIED');
    return next;
  }

  #delete(origin: string, kind: Kind, namespace: string | undefined, name: string, raw: unknown): ApiAnswer {
    const old = this.#get(kind, namespace, name);
    const opts = asObject(raw);
    const pre = asObject(opts['preconditions'] ?? {});
    if (typeof pre['uid'] === 'string' && pre['uid'] !== old.metadata.uid) {
      throw new HttpError(409, 'Conflict', `Precondition failed: UID in precondition: ${pre['uid']}, UID in object meta: ${old.metadata.uid}`);
    }
    if (typeof pre['resourceVersion'] === 'string' && pre['resourceVersion'] !== old.metadata.resourceVersion) {
      throw new HttpError(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${pre['resourceVersion']}`);
    }
    // A pod no node runs (not bound yet) has no containers to stop: it goes at once, as in the API server's
    // CheckGracefulDelete (pkg/registry/core/pod/strategy.go).
    const unbound = kind.plural === 'pods' && (((old['spec'] ?? {}) as { nodeName?: string }).nodeName ?? '') === '';
    if (kind.plural === 'pods' && !unbound) {
      if (old.metadata.deletionTimestamp !== undefined) return this.#okObject(kind, old);
      const grace = typeof opts['gracePeriodSeconds'] === 'number' ? opts['gracePeriodSeconds'] : 30;
      const next = { ...old };
      next.metadata = { ...next.metadata, deletionTimestamp: this.rfc3339(), deletionGracePeriodSeconds: grace, resourceVersion: String(++this.#rv) };
      this.#objects.set(keyOf(kind.plural, namespace, name), next);
      this.#commit(origin, 'delete', kind.plural, undefined, old, next, 'MODIFIED');
      return this.#okObject(kind, next);
    }
    if ((old.metadata.finalizers ?? []).length > 0) {
      const next = { ...old };
      next.metadata = { ...next.metadata, deletionTimestamp: this.rfc3339(), resourceVersion: String(++this.#rv) };
      this.#objects.set(keyOf(kind.plural, namespace, name), next);
      this.#commit(origin, 'delete', kind.plural, undefined, old, next, 'MODIFIED');
      return this.#okObject(kind, next);
    }
    this.#remove(origin, kind, old);
    return ok({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name, kind: kind.plural, uid: old.metadata.uid } });
  }

  /** The final removal of an object (a pod whose containers stopped, an object without finalizers). */
  removeNow(origin: string, plural: string, namespace: string | undefined, name: string, uid: string): void {
    const kind = KINDS.find((k) => k.plural === plural);
    const o = this.#objects.get(keyOf(plural, namespace, name));
    if (kind === undefined || o === undefined || o.metadata.uid !== uid) return;
    if ((o.metadata.finalizers ?? []).length > 0) {
      // The containers stopped, but a finalizer holds the pod: it goes when the finalizer is removed.
      this.#stoppedPods.add(uid);
      return;
    }
    this.#remove(origin, kind, o);
  }

  #remove(origin: string, kind: Kind, old: Obj): Obj {
    this.#objects.delete(keyOf(kind.plural, old.metadata.namespace, old.metadata.name));
    const gone = { ...clone(old), metadata: { ...old.metadata, resourceVersion: String(++this.#rv) } } as Obj;
    this.#commit(origin, 'remove', kind.plural, undefined, old, undefined, 'DELETED', gone);
    this.#collectGarbage(old.metadata.uid);
    return gone;
  }

  /** Background garbage collection: dependents whose every owner is gone are deleted (a moment later). */
  #collectGarbage(ownerUid: string): void {
    const live = new Set<string>();
    for (const o of this.#objects.values()) live.add(o.metadata.uid);
    for (const [k, o] of this.#objects) {
      const owners = o.metadata.ownerReferences ?? [];
      if (!owners.some((r) => r.uid === ownerUid)) continue;
      if (owners.some((r) => live.has(r.uid))) continue;
      const plural = k.split('/')[0] ?? '';
      const { namespace, name } = o.metadata;
      this.#clock.after(1_000, () => {
        const kind = KINDS.find((x) => x.plural === plural);
        const now = this.#objects.get(keyOf(plural, namespace, name));
        if (kind === undefined || now === undefined || now.metadata.uid !== o.metadata.uid) return;
        this.#delete('garbage-collector', kind, namespace, name, { preconditions: { uid: o.metadata.uid } });
      });
    }
  }

  #newUid(): string {
    this.#uid++;
    return `00000000-0000-4000-8000-${this.#uid.toString(16).padStart(12, '0')}`;
  }

  #commit(
    origin: string,
    verb: MutationVerb,
    plural: string,
    subresource: string | undefined,
    before: Obj | undefined,
    after: Obj | undefined,
    type: HistoryEntry['type'],
    event?: Obj,
  ): void {
    const object = event ?? after;
    if (object !== undefined) {
      const entry: HistoryEntry = { rv: this.#rv, plural, type, object };
      this.#history.push(entry);
      if (this.#history.length > HISTORY_WINDOW) {
        const dropped = this.#history.shift();
        if (dropped !== undefined) this.#compactedRv = dropped.rv;
      }
      for (const w of this.#watches) this.#deliver(w, entry);
    }
    this.#notify({ origin, verb, plural, subresource, before, after });
  }

  #notify(m: Mutation): void {
    for (const o of this.#observers) o.onMutation(m);
  }

  // ---- watch ---------------------------------------------------------------------------------------------------

  /** Opens a watch; the sink receives lines until `end`. Returns a cancel function (the client went away). */
  watch(path: string, query: Query, sink: ServerWatch): () => void {
    const target = this.#parsePath(path);
    if (target === undefined || 'discovery' in target) {
      sink.send(JSON.stringify({ type: 'ERROR', object: JSON.parse(statusBody(404, 'NotFound', path)) as unknown }), 0);
      sink.end();
      return () => undefined;
    }
    const { kind, namespace } = target;
    const name = fieldName(query['fieldSelector']);
    const timeoutSeconds = Number(query['timeoutSeconds'] ?? 1800);
    const w: OpenWatch = { plural: kind.plural, namespace, name, sink, open: true, timer: { cancel: () => undefined } };
    const rvText = String(query['resourceVersion'] ?? '');
    const from = Number(rvText);
    if (rvText !== '' && rvText !== '0' && from < this.#compactedRv) {
      sink.send(JSON.stringify({ type: 'ERROR', object: JSON.parse(statusBody(410, 'Expired', `too old resource version: ${from} (${this.#compactedRv})`)) as unknown }), 0);
      sink.end();
      return () => undefined;
    }
    const timer = this.#clock.after(timeoutSeconds * 1000, () => this.#closeWatch(w));
    const live: OpenWatch = { ...w, timer };
    this.#watches.add(live);
    if (rvText === '' || rvText === '0') {
      for (const o of this.#select(kind.plural, namespace, name)) sink.send(`{"type":"ADDED","object":${this.#json(kind, o)}}`, 0);
    } else {
      for (const e of this.#history) if (e.rv > from) this.#deliver(live, e);
    }
    return () => {
      live.open = false;
      live.timer.cancel();
      this.#watches.delete(live);
    };
  }

  #deliver(w: OpenWatch, e: HistoryEntry): void {
    if (!w.open || e.plural !== w.plural) return;
    if (w.namespace !== undefined && e.object.metadata.namespace !== w.namespace) return;
    if (w.name !== undefined && e.object.metadata.name !== w.name) return;
    const kind = KINDS.find((k) => k.plural === e.plural);
    if (kind === undefined) return;
    e.line ??= `{"type":"${e.type}","object":${this.#json(kind, e.object)}}`;
    w.sink.send(e.line, e.rv);
  }

  #closeWatch(w: OpenWatch): void {
    if (!w.open) return;
    w.open = false;
    w.timer.cancel();
    this.#watches.delete(w);
    w.sink.end();
  }

  #scheduleBookmarks(): void {
    this.#clock.after(BOOKMARK_EVERY_MS, () => {
      for (const w of this.#watches) {
        const kind = KINDS.find((k) => k.plural === w.plural);
        if (kind === undefined) continue;
        w.sink.send(JSON.stringify({ type: 'BOOKMARK', object: { kind: kind.kind, apiVersion: apiVersion(kind), metadata: { resourceVersion: String(this.#rv) } } }), this.#rv);
      }
      this.#scheduleBookmarks();
    });
  }

  /** Open watches (the run ends its bookkeeping by closing them). */
  get openWatches(): number {
    return this.#watches.size;
  }
}

function ok(body: unknown): ApiAnswer {
  return { status: 200, body: JSON.stringify(body) };
}

function apiVersion(kind: Kind): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

export function keyOf(plural: string, namespace: string | undefined, name: string): string {
  return `${plural}/${namespace ?? ''}/${name}`;
}

function fieldName(selector: unknown): string | undefined {
  if (typeof selector !== 'string') return undefined;
  const m = /^metadata\.name=(.+)$/.exec(selector);
  return m?.[1];
}

function parseBody(body: string | undefined): unknown {
  if (body === undefined || body === '') return {};
  return JSON.parse(body) as unknown;
}

function asObject(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HttpError(400, 'BadRequest', 'expected a JSON object');
  return v as Record<string, unknown>;
}

function copyMeta(next: Obj, old: Obj, keys: readonly string[]): void {
  const meta: Record<string, unknown> = { ...next.metadata };
  for (const k of keys) {
    const v = (old.metadata as Record<string, unknown>)[k];
    if (v === undefined) delete meta[k];
    else meta[k] = v;
  }
  next.metadata = meta as Obj['metadata'];
}

/**
 * `JSON.stringify(a) === JSON.stringify(b)`, without writing either out: a write's result shares most of its parts
 * with the stored object (patches copy only the path they change), and a shared part is equal at once.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!isPlain(a) || !isPlain(b)) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    // In an array, what JSON leaves out of an object (undefined, a function) is written as null.
    return a.every((v: unknown, i) => sameJson(inArray(v), inArray(b[i])));
  }
  const ka = Object.keys(a).filter((k) => written(a[k]));
  const kb = Object.keys(b).filter((k) => written(b[k]));
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson(a[k], b[k]));
}

/** An object or array that JSON writes member by member (no toJSON of its own). */
function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

const written = (v: unknown): boolean => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
const inArray = (v: unknown): unknown => (written(v) ? v : null);

/** Stored objects carry no apiVersion/kind (answers add the served ones). */
function stripTypeMeta(o: Obj): void {
  const r = o as Record<string, unknown>;
  delete r['apiVersion'];
  delete r['kind'];
}
