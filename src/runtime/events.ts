/**
 * Records core/v1 Events on objects (client-go `tools/record` legacy recorder, which Kruise uses).
 *
 * - Fire-and-forget: `event()` only enqueues and returns; one background loop writes, in order, so identical
 *   repeats are correlated deterministically. It never throws and never blocks a reconcile; write errors are
 *   logged at debug. When more than `maxQueued` events are waiting, new ones are dropped (client-go drops
 *   too when its broadcaster channel is full).
 * - Dedupe (client-go `eventLogger`): an event identical to one written less than `windowMs` ago (same
 *   involved object, type, reason, message) patches that Event's `count`/`lastTimestamp` instead of creating a
 *   new one; if the patch fails (the Event expired or was deleted) it is created again.
 * - Aggregation (client-go `EventAggregator`): from the `maxSimilar`-th event with the same object, type and
 *   reason but different messages within the window, they are folded into one Event whose message is
 *   "(combined from similar events): <latest message>".
 * - Spam filter (client-go `EventSourceObjectSpamFilter`): a token bucket of `spamBurst` (25) events refilled
 *   at one per `spamRefillMs` (5 min). client-go keys it by object only; we key it by object AND reason, so a
 *   flood of SuccessfulCreate during a 1 000-pod scale-up costs 25 writes, not 1 000, yet never hides a later
 *   Warning of another reason.
 * - All caches are LRU-bounded (`cacheSize`, client-go uses 4096).
 * - `involvedObject` is taken from the object itself: pass objects that carry apiVersion/kind (custom
 *   resources do; typed list items may not).
 */
import type { Logger } from 'pino';
import { rfc3339 } from '../kube/time.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Clock } from './clock.ts';

/** Write side for Events; implemented over the REST client by the composition root. */
export interface EventSink {
  create(namespace: string, event: object): Promise<unknown>;
  /** A merge (or strategic-merge) patch of an existing Event. */
  patch(namespace: string, name: string, patch: object): Promise<unknown>;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  readonly sink: EventSink;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly component?: string;
  readonly host?: string;
  readonly windowMs?: number;
  readonly maxSimilar?: number;
  readonly cacheSize?: number;
  readonly maxQueued?: number;
  readonly spamBurst?: number;
  readonly spamRefillMs?: number;
}

interface SpamBucket {
  tokens: number;
  lastMs: number;
}

export const EVENT_SOURCE_COMPONENT = 'cloneset-controller';

interface InvolvedObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

interface Pending {
  readonly involved: InvolvedObject;
  readonly namespace: string;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly atMs: number;
}

interface Observation {
  readonly name: string;
  readonly firstTimestamp: string;
  count: number;
  lastMs: number;
}

interface SimilarRecord {
  readonly messages: Set<string>;
  lastMs: number;
}

/** A Map used as an LRU: `get` refreshes, `set` evicts the oldest beyond `max`. */
class Lru<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();
  constructor(max: number) {
    this.#max = Math.max(1, max);
  }
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.#map.delete(key);
    this.#map.set(key, v);
    for (const oldest of this.#map.keys()) {
      if (this.#map.size <= this.#max) break;
      this.#map.delete(oldest);
    }
  }
  get size(): number {
    return this.#map.size;
  }
}

function involvedObjectOf(obj: KubeObject): InvolvedObject | undefined {
  const m = obj.metadata;
  if (m?.name === undefined) return undefined;
  return {
    ...(obj.apiVersion === undefined ? {} : { apiVersion: obj.apiVersion }),
    ...(obj.kind === undefined ? {} : { kind: obj.kind }),
    name: m.name,
    ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
    ...(m.uid === undefined ? {} : { uid: m.uid }),
    ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
  };
}

export class EventRecorder {
  readonly #sink: EventSink;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #source: { readonly component: string; readonly host?: string };
  readonly #windowMs: number;
  readonly #maxSimilar: number;
  readonly #maxQueued: number;
  readonly #observed: Lru<Observation>;
  readonly #similar: Lru<SimilarRecord>;
  readonly #spam: Lru<SpamBucket>;
  readonly #spamBurst: number;
  readonly #spamRefillMs: number;
  readonly #queue: Pending[] = [];
  #draining: Promise<void> | undefined;
  #seq = 0;
  #droppedTotal = 0;

  constructor(opts: EventRecorderOptions) {
    this.#sink = opts.sink;
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    const component = opts.component ?? EVENT_SOURCE_COMPONENT;
    this.#source = opts.host === undefined ? { component } : { component, host: opts.host };
    this.#windowMs = opts.windowMs ?? 10 * 60_000;
    this.#maxSimilar = opts.maxSimilar ?? 10;
    this.#maxQueued = opts.maxQueued ?? 1000;
    this.#observed = new Lru(opts.cacheSize ?? 4096);
    this.#similar = new Lru(opts.cacheSize ?? 4096);
    this.#spam = new Lru(opts.cacheSize ?? 4096);
    this.#spamBurst = opts.spamBurst ?? 25;
    this.#spamRefillMs = opts.spamRefillMs ?? 5 * 60_000;
  }

  /** Takes a token from the (object, reason) bucket; false when the bucket is empty. */
  #allow(key: string, nowMs: number): boolean {
    const bucket = this.#spam.get(key) ?? { tokens: this.#spamBurst, lastMs: nowMs };
    const refill = Math.floor((nowMs - bucket.lastMs) / this.#spamRefillMs);
    if (refill > 0) {
      bucket.tokens = Math.min(this.#spamBurst, bucket.tokens + refill);
      bucket.lastMs += refill * this.#spamRefillMs;
    }
    this.#spam.set(key, bucket);
    if (bucket.tokens <= 0) return false;
    bucket.tokens--;
    return true;
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    try {
      const involved = involvedObjectOf(obj);
      if (involved === undefined) {
        this.#logger.debug({ reason }, 'event dropped: object has no name');
        return;
      }
      this.#logger.debug({ object: `${involved.namespace ?? ''}/${involved.name}`, type, reason, message }, 'event');
      if (this.#queue.length >= this.#maxQueued) {
        this.#droppedTotal++;
        this.#logger.debug({ reason }, 'event dropped: queue full');
        return;
      }
      const namespace = involved.namespace !== undefined && involved.namespace !== '' ? involved.namespace : 'default';
      const nowMs = this.#clock.monotonicNow();
      if (!this.#allow(`${involved.uid ?? ''}/${namespace}/${involved.name}/${reason}`, nowMs)) {
        this.#droppedTotal++;
        return;
      }
      this.#queue.push({ involved, namespace, type, reason, message, atMs: this.#clock.now() });
      this.#draining ??= this.#drain();
    } catch (e: unknown) {
      this.#logger.debug({ err: e }, 'event dropped');
    }
  }

  /** Events dropped because too many were waiting to be written. */
  get droppedTotal(): number {
    return this.#droppedTotal;
  }

  /** Resolves when every event recorded so far has been written (or has failed). For tests and shutdown. */
  async flush(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  async #drain(): Promise<void> {
    try {
      for (let p = this.#queue.shift(); p !== undefined; p = this.#queue.shift()) await this.#write(p);
    } finally {
      this.#draining = undefined;
    }
  }

  async #write(p: Pending): Promise<void> {
    const { message, cacheKey } = this.#aggregate(p);
    const prev = this.#observed.get(cacheKey);
    if (prev !== undefined && p.atMs - prev.lastMs < this.#windowMs) {
      prev.count++;
      prev.lastMs = p.atMs;
      const patch = { count: prev.count, lastTimestamp: rfc3339(p.atMs), message };
      try {
        await this.#sink.patch(p.namespace, prev.name, patch);
        return;
      } catch (e: unknown) {
        this.#logger.debug({ err: e, event: prev.name }, 'event patch failed; creating it again');
      }
      await this.#create(p, message, prev);
      return;
    }
    const obs: Observation = { name: this.#newName(p), firstTimestamp: rfc3339(p.atMs), count: 1, lastMs: p.atMs };
    this.#observed.set(cacheKey, obs);
    await this.#create(p, message, obs);
  }

  async #create(p: Pending, message: string, obs: Observation): Promise<void> {
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: obs.name, namespace: p.namespace },
      involvedObject: p.involved,
      reason: p.reason,
      message,
      source: this.#source,
      firstTimestamp: obs.firstTimestamp,
      lastTimestamp: rfc3339(p.atMs),
      count: obs.count,
      type: p.type,
    };
    try {
      await this.#sink.create(p.namespace, event);
    } catch (e: unknown) {
      this.#logger.debug({ err: e, event: obs.name }, 'event create failed');
    }
  }

  /** client-go EventAggregate: returns the (possibly combined) message and the dedupe cache key. */
  #aggregate(p: Pending): { message: string; cacheKey: string } {
    const o = p.involved;
    const objectKey = [o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((s) => s ?? '').join('\u0000');
    const aggregateKey = [objectKey, p.type, p.reason].join('\u0000');
    const eventKey = [aggregateKey, p.message].join('\u0000');
    let rec = this.#similar.get(aggregateKey);
    if (rec === undefined || p.atMs - rec.lastMs >= this.#windowMs) {
      rec = { messages: new Set(), lastMs: p.atMs };
      this.#similar.set(aggregateKey, rec);
    }
    rec.lastMs = p.atMs;
    rec.messages.add(p.message);
    if (rec.messages.size < this.#maxSimilar) return { message: p.message, cacheKey: eventKey };
    // Keep the set bounded (client-go pops one); every further similar event lands on the aggregate from then on.
    const oldest = rec.messages.values().next();
    if (oldest.done !== true) rec.messages.delete(oldest.value);
    return { message: `(combined from similar events): ${p.message}`, cacheKey: aggregateKey };
  }

  /** client-go: `<object name>.<unix nanos as hex>`; a sequence number keeps names unique within one ms. */
  #newName(p: Pending): string {
    const nanos = BigInt(Math.floor(p.atMs)) * 1_000_000n + BigInt(this.#seq++ % 1_000_000);
    return `${p.involved.name}.${nanos.toString(16)}`;
  }
}
