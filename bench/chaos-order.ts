// Orders the checker's watch streams by resourceVersion (bench/chaos-checker.ts). The pod, PVC and CloneSet watches
// are separate HTTP streams: each is in resourceVersion order, but nothing orders one against another, so a pod
// deletion can reach the checker before the CloneSet scale-down that caused it (found by `npm run chaos`). A single
// etcd numbers every write of every resource from one revision counter, so "the CloneSet as of this pod event" is
// well defined: the CloneSet's newest version at or below the pod event's resourceVersion, once the CloneSet stream
// has passed that resourceVersion. The API server documents resourceVersions as opaque strings; reading them as
// integers is an assumption about our local control plane (one etcd), stated in docs/chaos.md.
import type { KubeObject } from '../src/kube/types.ts';

/** A resourceVersion as etcd's revision (one etcd: an integer, one order across every resource). NaN if absent. */
export const rvOf = (o: KubeObject | undefined): number => Number(o?.metadata?.resourceVersion ?? Number.NaN);
export const rvNumber = (rv: string | undefined): number => Number(rv ?? Number.NaN);

/**
 * How far one watch stream has got: `passed` is the highest resourceVersion it has delivered (an event, a bookmark,
 * a list) or been proven to have passed (`prove`); `latest` the resourceVersion of each object's newest delivered
 * version (deleted objects absent).
 */
export class StreamPosition {
  passed = 0;
  readonly latest = new Map<string, number>();

  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): void {
    const name = o.metadata?.name ?? '';
    const rv = rvOf(o);
    if (type === 'DELETED') this.latest.delete(name);
    else this.latest.set(name, rv);
    this.#advance(rv);
  }

  bookmark(rv: number): void {
    this.#advance(rv);
  }

  list(items: readonly KubeObject[], rv: number): void {
    this.latest.clear();
    for (const o of items) this.latest.set(o.metadata?.name ?? '', rvOf(o));
    this.#advance(rv);
  }

  /**
   * A fresh (quorum) list at `rv` proves the stream has passed `rv` when it holds exactly the versions the stream
   * has delivered: any write between the stream's position and `rv` would show in it as a newer resourceVersion, a
   * new name or a missing one. Watch bookmarks say the same, but the API server sends one to a watch only about
   * once a minute and 2 s before its timeout (k8s.io/apiserver pkg/storage/cacher/cache_watcher.go
   * `nextBookmarkTime`), far too rarely to hold pod events for.
   */
  prove(items: readonly KubeObject[], rv: number): boolean {
    if (items.length !== this.latest.size) return false;
    for (const o of items) if (this.latest.get(o.metadata?.name ?? '') !== rvOf(o)) return false;
    this.#advance(rv);
    return true;
  }

  #advance(rv: number): void {
    if (Number.isFinite(rv) && rv > this.passed) this.passed = rv;
  }
}

interface Held {
  readonly rv: number;
  readonly since: number;
  readonly release: (ordered: boolean) => void;
}

export interface HoldOptions {
  /** the longest an item waits for the gate; past it, it is released unordered (and counted) */
  readonly boundMs: number;
  readonly now: () => number;
  /** asks for a proof that the gate stream has passed `rv` (a fresh list, `StreamPosition.prove`); may do nothing */
  readonly probe: (rv: number) => void;
  readonly signal: AbortSignal;
  /** told of each item released after the bound: its resourceVersion and the gate's */
  readonly onUnordered?: (rv: number, gatePassed: number) => void;
}

/**
 * A FIFO of one stream's changes (already in resourceVersion order), each released once the gate stream has passed
 * its resourceVersion, or after `boundMs` without that (a stream that is down: an API server restart, a frozen etcd).
 */
export class HoldQueue {
  readonly #gate: StreamPosition;
  readonly #opts: HoldOptions;
  readonly #queue: Held[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** changes released in order / after the bound without the gate's proof, and the longest wait of either */
  ordered = 0;
  unordered = 0;
  longestWaitMs = 0;

  constructor(gate: StreamPosition, opts: HoldOptions) {
    this.#gate = gate;
    this.#opts = opts;
    opts.signal.addEventListener('abort', () => clearTimeout(this.#timer), { once: true });
  }

  get pending(): number {
    return this.#queue.length;
  }

  /** when the oldest change still held arrived (now when none is) */
  get heldSince(): number {
    return this.#queue[0]?.since ?? this.#opts.now();
  }

  push(rv: number, release: (ordered: boolean) => void): void {
    this.#queue.push({ rv, since: this.#opts.now(), release });
    this.pump();
  }

  /** Releases what the gate has passed (or what waited past the bound); call after the gate moves. */
  pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const now = this.#opts.now();
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      // an item without a resourceVersion cannot be ordered: it goes as it came
      const ordered = !Number.isFinite(head.rv) || head.rv <= this.#gate.passed;
      if (!ordered && now - head.since < this.#opts.boundMs) break;
      this.#queue.shift();
      this.longestWaitMs = Math.max(this.longestWaitMs, now - head.since);
      if (ordered) this.ordered++;
      else {
        this.unordered++;
        this.#opts.onUnordered?.(head.rv, this.#gate.passed);
      }
      head.release(ordered);
    }
    const head = this.#queue[0];
    if (head === undefined || this.#opts.signal.aborted) return;
    this.#opts.probe(head.rv);
    this.#timer = setTimeout(() => this.pump(), Math.max(0, head.since + this.#opts.boundMs - now));
    this.#timer.unref();
  }
}
