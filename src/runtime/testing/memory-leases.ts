// Test doubles of leader election's LeasePort: the API server's Lease in memory, and a link to it that can be
// cut or made to hang (used by leader-election.test.ts and the fencing tests).
import type { Lease, LeaseGetResult, LeasePort, LeaseWatchEvent, LeaseWriteResult } from '../leader-election.ts';

interface Change {
  readonly rv: number;
  readonly event: LeaseWatchEvent;
}

/**
 * The API server's view: one Lease, resourceVersion bumped per write, stale updates rejected (409), and watches
 * that replay the changes after the resourceVersion they start from, then stream new ones (delivered
 * asynchronously, like a real stream).
 */
export class MemoryLeases implements LeasePort {
  lease: Lease | undefined;
  #rv = 0;
  readonly #history: Change[] = [];
  readonly #watches = new Set<{ deliver(c: Change): void; fail(e: unknown): void; end(): void }>();

  async get(_ns: string, _name: string): Promise<LeaseGetResult> {
    return this.lease === undefined ? { kind: 'notFound' } : { kind: 'found', lease: structuredClone(this.lease) };
  }
  async create(_ns: string, lease: Lease): Promise<LeaseWriteResult> {
    if (this.lease !== undefined) return { kind: 'conflict' };
    return this.#store(lease);
  }
  async update(_ns: string, _name: string, lease: Lease): Promise<LeaseWriteResult> {
    if (this.lease === undefined) return { kind: 'error', error: new Error('not found') };
    if (lease.metadata.resourceVersion !== this.lease.metadata.resourceVersion) return { kind: 'conflict' };
    return this.#store(lease);
  }
  /** Someone (an operator) deletes the Lease. */
  delete(): void {
    if (this.lease === undefined) return;
    this.lease = undefined;
    this.#publish({ rv: ++this.#rv, event: { kind: 'deleted', resourceVersion: String(this.#rv) } });
  }
  /** Every open watch fails (e.g. 410 Gone, the API server restarted). */
  failWatches(error: unknown): void {
    for (const w of [...this.#watches]) w.fail(error);
  }
  /** Every open watch ends normally (the server's timeoutSeconds). */
  endWatches(): void {
    for (const w of [...this.#watches]) w.end();
  }
  /** Watches open now. */
  get openWatches(): number {
    return this.#watches.size;
  }

  watch(_ns: string, _name: string, resourceVersion: string, onEvent: (e: LeaseWatchEvent) => void, signal: AbortSignal): Promise<void> {
    const from = Number(resourceVersion);
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      let open = true;
      const close = (): void => {
        open = false;
        this.#watches.delete(w);
        signal.removeEventListener('abort', onAbort);
      };
      const w = {
        deliver: (c: Change): void => {
          queueMicrotask(() => {
            if (!open || c.rv <= from) return;
            try {
              onEvent(c.event);
            } catch (e: unknown) {
              w.fail(e);
            }
          });
        },
        fail: (e: unknown): void => {
          close();
          reject(e);
        },
        end: (): void => {
          close();
          resolve();
        },
      };
      const onAbort = (): void => w.end();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#watches.add(w);
      for (const c of this.#history) w.deliver(c);
    });
  }

  #store(lease: Lease): LeaseWriteResult {
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.#rv) } };
    this.#publish({ rv: this.#rv, event: { kind: 'changed', lease: structuredClone(this.lease) } });
    return { kind: 'ok', lease: structuredClone(this.lease) };
  }
  #publish(c: Change): void {
    this.#history.push(c);
    for (const w of this.#watches) w.deliver(c);
  }
}

/**
 * One candidate's network path to the server: can be cut (calls fail; an open watch fails at its next event)
 * or made to hang (calls never answer; an open watch goes silent, like a half-open connection).
 */
export class Link implements LeasePort {
  down = false;
  hang = false;
  readonly #inner: LeasePort;
  constructor(inner: LeasePort) {
    this.#inner = inner;
  }
  #gate<T>(call: () => Promise<T>, failure: T): Promise<T> {
    if (this.hang) return new Promise<T>(() => {});
    return this.down ? Promise.resolve(failure) : call();
  }
  get(ns: string, name: string): Promise<LeaseGetResult> {
    return this.#gate(() => this.#inner.get(ns, name), { kind: 'error', error: new Error('unreachable') });
  }
  create(ns: string, lease: Lease): Promise<LeaseWriteResult> {
    return this.#gate(() => this.#inner.create(ns, lease), { kind: 'error', error: new Error('unreachable') });
  }
  update(ns: string, name: string, lease: Lease): Promise<LeaseWriteResult> {
    return this.#gate(() => this.#inner.update(ns, name, lease), { kind: 'error', error: new Error('unreachable') });
  }
  watch(ns: string, name: string, resourceVersion: string, onEvent: (e: LeaseWatchEvent) => void, signal: AbortSignal): Promise<void> {
    if (this.hang) return new Promise<void>(() => {});
    if (this.down || this.#inner.watch === undefined) return Promise.reject(new Error('unreachable'));
    return this.#inner.watch(
      ns,
      name,
      resourceVersion,
      (e) => {
        if (this.hang) return;
        if (this.down) throw new Error('connection reset');
        onEvent(e);
      },
      signal,
    );
  }
}
