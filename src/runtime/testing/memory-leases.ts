// Test doubles of leader election's LeasePort: the API server's Lease in memory, and a link to it that can be
// cut or made to hang (used by leader-election.test.ts and the fencing tests).
import type { Lease, LeaseGetResult, LeasePort, LeaseWriteResult } from '../leader-election.ts';

/** The API server's view: one Lease, resourceVersion bumped per write, stale updates rejected (409). */
export class MemoryLeases implements LeasePort {
  lease: Lease | undefined;
  #rv = 0;
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
  #store(lease: Lease): LeaseWriteResult {
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.#rv) } };
    return { kind: 'ok', lease: structuredClone(this.lease) };
  }
}

/** One candidate's network path to the server: can be cut (errors) or made to hang. */
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
}

