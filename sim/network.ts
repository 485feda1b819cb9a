// Between the controller processes and the API server: latency, lost answers, injected 409s and 429s, and the
// watch streams (delayed, stalled or dropped). `SimTransport` is what a process's KubeClient talks to: the
// client's own code (rate limits, retries, Retry-After, the fencing guard) runs unchanged above it. Each transport
// has a bounded pool of sockets, as Node's agent has (`maxSockets`, src/kube/transport.ts): a watch holds one for
// its whole life, a request for its exchange, and a request that finds none free waits in line (FIFO) on its
// process's own time, so a paused or slow process can hold a write in that line past its fence deadline.
import { ConnectionError, FenceDeadlineError, RequestAbortedError } from '../src/kube/api-error.ts';
import { WatchIdleError, type HttpResponse, type HttpTransport, type Query, type RequestControl } from '../src/kube/transport.ts';
import { errorAnswer, type ApiAnswer, type ApiServer } from './api-server.ts';
import type { ProcessClock, SimClock } from './clock.ts';
import type { FaultKind, FaultPlan } from './faults.ts';
import { PodsSeen } from './pods-seen.ts';
import type { Rng } from './random.ts';

/** Who sent a request: the API server attributes writes to it (the checker asks whether it was the leader). */
export interface Sender {
  readonly identity: string;
  readonly clock: ProcessClock;
}

interface ClientStream {
  readonly sender: Sender;
  readonly drop: () => void;
}

export class Network {
  readonly #clock: SimClock;
  readonly #server: ApiServer;
  readonly #rng: Rng;
  readonly #plan: FaultPlan;
  readonly #faults: Record<FaultKind, number>;
  readonly #trace: (line: string) => void;
  /** The coincidences' own draws: a run without them draws nothing from it, so its other streams stay the same. */
  readonly #coincidenceRng: Rng;
  readonly #streams = new Set<ClientStream>();
  /** Watch events enqueued before this are held until it (a stalled watch cache). */
  #stallUntil = 0;
  /** Pod watch events enqueued before this are held until it (the pods' watch cache alone lags). */
  #podStallUntil = 0;
  /** Extra delay of watch events (a slow cache) until `#slowUntil`. */
  #slowUntil = 0;
  #slowMs = 0;
  requests = 0;
  /** Per process: the resourceVersions of pods its cache can have seen (list answers and watch events delivered), and when. */
  readonly podsSeen = new PodsSeen();
  readonly #pool: SocketPoolPlan;
  /** Told of every write that reaches the server, before it is applied (the checker's leader check). */
  onWrite: (origin: string, method: string, path: string) => void = () => undefined;
  /**
   * Makes the readiness probe of another Ready pod of the same CloneSet as pod `namespace/name` fail now (the
   * kubelet's part of a delete coincidence); whether there was one to fail.
   */
  probeFailsBeside: (namespace: string, name: string) => boolean = () => false;

  constructor(
    clock: SimClock,
    server: ApiServer,
    rng: Rng,
    plan: FaultPlan,
    faults: Record<FaultKind, number>,
    trace: (line: string) => void,
    coincidenceRng: Rng,
    pool: SocketPoolPlan = { size: NODE_MAX_SOCKETS, rng: undefined },
  ) {
    this.#pool = pool;
    this.#clock = clock;
    this.#server = server;
    this.#rng = rng;
    this.#plan = plan;
    this.#faults = faults;
    this.#trace = trace;
    this.#coincidenceRng = coincidenceRng;
  }

  get clock(): SimClock {
    return this.#clock;
  }

  /** A client's transport: its own pool of sockets (every KubeClient of the binary has its own agent). */
  transportFor(sender: Sender): HttpTransport {
    return new SimTransport(this, sender, new SocketPool(this.#pool.size, () => this.#handoffMs()));
  }

  /**
   * How long a freed socket takes to reach the next request in line: usually a few ms of the process's own event
   * loop, sometimes seconds (a process busy decoding a large list, a GC pause). Drawn only when a request waited,
   * from the pool's own generator, so runs whose requests never wait draw nothing.
   */
  #handoffMs(): number {
    const rng = this.#pool.rng;
    if (rng === undefined) return 1;
    return rng.chance(0.02) ? rng.int(500, 5_000) : rng.int(1, 30);
  }

  /** Told when a write has to wait for a socket (the harness's queuedPause coincidence). */
  onQueuedWrite: (identity: string) => void = () => undefined;

  /** A request waits for a socket. */
  queued(sender: Sender, method: string, what: string): void {
    this.#trace(`${sender.identity} ${what} waits for a socket`);
    if (method !== 'GET') this.onQueuedWrite(sender.identity);
  }

  stall(forMs: number): void {
    this.#stallUntil = Math.max(this.#stallUntil, this.#clock.now() + forMs);
  }

  slow(forMs: number, delayMs: number): void {
    this.#slowUntil = this.#clock.now() + forMs;
    this.#slowMs = delayMs;
  }

  /** Cuts every open watch connection (events still in flight are lost with it). */
  dropStreams(filter: (s: Sender) => boolean = () => true): number {
    let n = 0;
    for (const s of [...this.#streams]) {
      if (!filter(s.sender)) continue;
      s.drop();
      n++;
    }
    return n;
  }

  #latency(): number {
    return this.#rng.int(1, 20);
  }

  #faultsOn(): boolean {
    return this.#clock.now() <= this.#plan.windowEndMs;
  }

  /** A pod list or watch event of resourceVersion `rv` reached `identity`. */
  sawPods(identity: string, rv: number): void {
    this.podsSeen.saw(identity, rv, this.#clock.now());
  }

  get serverResourceVersion(): number {
    return this.#server.resourceVersion;
  }

  /** Decides the fate of one request at its arrival and returns the answer the client will get (or 'lost'). */
  exchange(sender: Sender, method: string, path: string, query: Query, body: { contentType: string; data: string } | undefined): ApiAnswer | 'lost' {
    this.requests++;
    const write = method !== 'GET';
    const lease = path.includes('/leases');
    const events = path.includes('/events');
    const faulty = this.#faultsOn() && !events;
    if (write) this.onWrite(sender.identity, method, path);
    if (faulty && this.#plan.rates.throttle > 0 && this.#rng.chance(this.#plan.rates.throttle)) {
      this.#faults.throttle++;
      const seconds = this.#rng.int(0, 3);
      this.#trace(`${sender.identity} ${method} ${path} → 429 (Retry-After ${seconds})`);
      return errorAnswer(429, 'TooManyRequests', 'the server has received too many requests and has asked us to try again later', seconds);
    }
    if (faulty && method === 'PUT' && this.#plan.rates.conflict > 0 && this.#rng.chance(this.#plan.rates.conflict)) {
      this.#faults.conflict++;
      this.#trace(`${sender.identity} ${method} ${path} → 409 (injected)`);
      return errorAnswer(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again');
    }
    const coincidence = faulty && method === 'DELETE' && this.#deleteCoincidence(path);
    const answer = this.#server.handleTyped(sender.identity, method, path, query, body?.data, body?.contentType);
    this.#trace(`${sender.identity} ${method} ${path}${query['watch'] === undefined ? '' : ' (watch)'} → ${answer.status}`);
    // The lost-answer draw is made for a coincidence too, so that the network's draws stay in step.
    const lost = faulty && write && !lease && this.#plan.rates.lostAnswer > 0 && this.#rng.chance(this.#plan.rates.lostAnswer);
    if (lost || coincidence) {
      const kind: FaultKind = path.endsWith('/status') ? 'lostStatusAnswer' : method === 'POST' ? 'lostCreateAnswer' : method === 'DELETE' ? 'lostDeleteAnswer' : 'lostPatchAnswer';
      this.#faults[kind]++;
      this.#trace(`  answer lost (${kind})`);
      return 'lost';
    }
    return answer;
  }

  /**
   * BUGGIFY for the delete of a pod that is not terminating yet: three faults that each happen on their own, made to
   * coincide (FoundationDB's way of making a rare interleaving common). Another Ready pod of its CloneSet failed a
   * readiness probe just before the delete arrived (so the pass after it ranks that pod first), the delete's
   * answer will be lost and the pods' watch cache lags after it (so that pass does not see the deletion yet). A
   * controller that settles the lost answer keeps waiting for this pod; one that gave up on it picks a second
   * victim and deletes one pod too many.
   */
  #deleteCoincidence(path: string): boolean {
    const rate = this.#plan.rates.deleteCoincidence;
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(path);
    if (rate === 0 || m === null) return false;
    const [, namespace = '', name = ''] = m;
    const pod = this.#server.peek('pods', namespace, name);
    if (pod === undefined || pod.metadata.deletionTimestamp !== undefined || !this.#coincidenceRng.chance(rate)) return false;
    if (!this.probeFailsBeside(namespace, name)) return false;
    // The API server is loaded: its watch cache of pods (one per resource in kube-apiserver) lags from now on, so
    // the deletion (and the pod events after it) reaches no cache for a while, while the probe failure, sent
    // before, arrives as usual, and so do the other resources' events (the CloneSet's status).
    const forMs = this.#coincidenceRng.int(300, 3_000);
    this.#podStallUntil = Math.max(this.#podStallUntil, this.#clock.now() + forMs);
    this.#faults.deleteCoincidence++;
    this.#trace(`  a readiness probe beside ${name} failed just before; the pods' watch cache stalls for ${forMs} ms (deleteCoincidence)`);
    return true;
  }

  /**
   * When a watch event sent now reaches its client: 5–60 ms after the write (the API server's watch cache and
   * dispatch; a write's own answer usually comes back sooner, which is why the controller has expectations).
   */
  watchDeliveryAt(pods: boolean): number {
    const now = this.#clock.now();
    let at = now + this.#rng.int(5, 60);
    if (now < this.#slowUntil) at += this.#slowMs;
    return Math.max(at, this.#stallUntil, pods ? this.#podStallUntil : 0);
  }

  watchServer(): ApiServer {
    return this.#server;
  }

  register(s: ClientStream): () => boolean {
    this.#streams.add(s);
    return () => this.#streams.delete(s);
  }

  latency(): number {
    return this.#latency();
  }
}

const ORIGIN = 'https://apiserver.sim';

/** Node's agent in the binary (src/kube/transport.ts MAX_SOCKETS). */
export const NODE_MAX_SOCKETS = 32;

/** The sockets of each client of a run, and the generator of the time a freed socket takes to reach a waiter. */
export interface SocketPoolPlan {
  readonly size: number;
  readonly rng: Rng | undefined;
}

interface Waiter {
  readonly proc: ProcessClock;
  readonly grant: () => void;
  cancelled: boolean;
}

/** A client's sockets: taken at once when one is free and nobody waits, else handed over in FIFO order. */
class SocketPool {
  #free: number;
  readonly #waiters: Waiter[] = [];
  readonly #handoffMs: () => number;

  constructor(size: number, handoffMs: () => number) {
    this.#free = size;
    this.#handoffMs = handoffMs;
  }

  /** Calls `grant` (holding a socket) now if one is free, else when its turn comes; false when it has to wait. */
  acquire(proc: ProcessClock, grant: () => void): { readonly waits: boolean; readonly cancel: () => void } {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free--;
      grant();
      return { waits: false, cancel: () => undefined };
    }
    const w: Waiter = { proc, grant, cancelled: false };
    this.#waiters.push(w);
    return {
      waits: true,
      cancel: () => {
        w.cancelled = true;
      },
    };
  }

  /**
   * A socket is free again. A kept-alive socket goes to the next waiter in the same turn (Node's agent hands it
   * over on 'free', so a process resumed from a pause writes its queued requests as it reads the answers, before
   * its overdue timers run); a destroyed one (lost answer, timeout, abort, a watch that ended) is replaced by a new
   * connection, which takes a moment of the waiter's own time (held while it is paused).
   */
  release(keptAlive: boolean): void {
    for (;;) {
      const w = this.#waiters.shift();
      if (w === undefined) {
        this.#free++;
        return;
      }
      if (w.cancelled) continue;
      if (keptAlive) w.grant();
      else
        w.proc.setTimeout(() => {
          if (w.cancelled) this.release(true);
          else w.grant();
        }, this.#handoffMs());
      return;
    }
  }
}

/**
 * A 2xx answer as the API server encodes it for the Accept header: with `as=PartialObjectMetadata` (client.ts
 * METADATA_ONLY_ACCEPT), the object's metadata alone, as kube-apiserver's transformResponseObject does for a
 * write; anything else whole.
 */
export function answerBody(answer: { readonly status: number; readonly body: string }, metadataOnly: boolean): string {
  if (!metadataOnly || answer.status < 200 || answer.status > 299 || answer.body === '') return answer.body;
  const object: unknown = JSON.parse(answer.body);
  // A Status (a delete that removed the object at once) is sent as it is, as by the API server.
  if (typeof object !== 'object' || object === null || !('metadata' in object) || ('kind' in object && object.kind === 'Status')) return answer.body;
  return JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata });
}

class SimTransport implements HttpTransport {
  readonly server = new URL(ORIGIN);
  readonly #net: Network;
  readonly #sender: Sender;
  readonly #pool: SocketPool;

  constructor(net: Network, sender: Sender, pool: SocketPool) {
    this.#net = net;
    this.#sender = sender;
    this.#pool = pool;
  }

  close(): void {
    // Idle sockets hold nothing in the simulation: nothing to close.
  }

  request(method: string, path: string, query: Query, body?: { contentType: string; data: string }, control: RequestControl = {}): Promise<HttpResponse> {
    const what = `${method} ${path}`;
    const { signal, timeoutMs, fenceMs, accept } = control;
    if (signal?.aborted === true) return Promise.reject(new RequestAbortedError(what));
    const metadataOnly = accept?.includes('as=PartialObjectMetadata') === true;
    // The fence deadline as the real transport keeps it: counted from the call, before the wait for a socket; not
    // sent once it passed, cut if unanswered at it.
    if (fenceMs !== undefined && fenceMs <= 0) return Promise.reject(new FenceDeadlineError(what, false));
    const clock = this.#net.clock;
    const proc = this.#sender.clock;
    const fenceAt = fenceMs === undefined ? undefined : proc.monotonicNow() + fenceMs;
    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      let arrived = false;
      let holding = false;
      let waiting: { cancel(): void } | undefined;
      /** `keptAlive`: an answer was read whole, the socket stays open for the next request. */
      const settle = (fn: () => void, keptAlive = false): void => {
        if (settled) return;
        settled = true;
        forget();
        deadline?.cancel();
        fence?.cancel();
        signal?.removeEventListener('abort', onAbort);
        waiting?.cancel();
        // A request on the wire is not unsent by the client giving up on it: it still reaches the server.
        if (holding) {
          holding = false;
          this.#pool.release(keptAlive);
        }
        fn();
      };
      const onAbort = (): void => settle(() => reject(new RequestAbortedError(what)));
      const deadline =
        timeoutMs !== undefined && timeoutMs > 0
          ? proc.setTimeout(() => settle(() => reject(new ConnectionError(ORIGIN, what, new Error(`no complete answer within ${timeoutMs / 1000}s`)))), timeoutMs)
          : undefined;
      const fence = fenceMs === undefined ? undefined : proc.setTimeout(() => settle(() => reject(new FenceDeadlineError(what, arrived))), fenceMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      const forget = signal === undefined ? () => undefined : proc.whileAlive(() => signal.removeEventListener('abort', onAbort));
      const send = (): void => {
        if (settled) {
          this.#pool.release(true);
          return;
        }
        holding = true;
        // Handed a socket after a pause or a long line: not written once the deadline has passed.
        if (fenceAt !== undefined && proc.monotonicNow() >= fenceAt) {
          settle(() => reject(new FenceDeadlineError(what, false)));
          return;
        }
        clock.after(this.#net.latency(), () => {
          arrived = true;
          const answer = this.#net.exchange(this.#sender, method, path, query, body);
          const listedPods = method === 'GET' && /\/pods$/.test(path) ? this.#net.serverResourceVersion : 0;
          clock.after(this.#net.latency(), () =>
            proc.run(() => {
              if (listedPods > 0 && answer !== 'lost' && answer.status === 200) this.#net.sawPods(this.#sender.identity, listedPods);
              if (answer === 'lost') settle(() => reject(new ConnectionError(ORIGIN, what, new Error('socket hang up'))));
              else
                settle(
                  () =>
                    resolve(
                      answer.retryAfter === undefined
                        ? { status: answer.status, body: answerBody(answer, metadataOnly) }
                        : { status: answer.status, body: answerBody(answer, metadataOnly), retryAfter: answer.retryAfter },
                    ),
                  true,
                );
            }),
          );
        });
      };
      const line = this.#pool.acquire(proc, send);
      waiting = line;
      if (line.waits) this.#net.queued(this.#sender, method, what);
    });
  }

  stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal, deadlineMs: number, idleMs = 0): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    const net = this.#net;
    const clock = net.clock;
    const proc = this.#sender.clock;
    const what = `WATCH ${path}`;
    const podWatch = /\/pods$/.test(path);
    return new Promise<void>((resolve, reject) => {
      let finished = false;
      let lastAt = 0;
      let cancelServer: () => void = () => undefined;
      let unregister: () => boolean = () => false;
      let idle: { cancel(): void } | undefined;
      let holding = false;
      let waiting: { cancel(): void } | undefined;
      const finish = (err?: unknown): void => {
        if (finished) return;
        finished = true;
        forget();
        deadline.cancel();
        idle?.cancel();
        signal.removeEventListener('abort', onAbort);
        cancelServer();
        unregister();
        waiting?.cancel();
        if (holding) {
          holding = false;
          this.#pool.release(false);
        }
        if (err === undefined) resolve();
        else reject(err);
      };
      const armIdle = (): void => {
        if (idleMs <= 0) return;
        idle?.cancel();
        idle = proc.setTimeout(() => finish(new WatchIdleError(`${what}: no data and no bookmark for ${idleMs / 1000}s (--watch-idle-timeout)`)), idleMs);
      };
      const onAbort = (): void => finish();
      const deadline = proc.setTimeout(() => finish(), deadlineMs);
      signal.addEventListener('abort', onAbort, { once: true });
      const forget = proc.whileAlive(() => signal.removeEventListener('abort', onAbort));
      armIdle();
      // A dropped connection ends the server's side at once; the client notices when it next runs.
      unregister = net.register({
        sender: this.#sender,
        drop: () => {
          cancelServer();
          proc.run(() => finish(new ConnectionError(ORIGIN, what, new Error('connection reset by peer'))));
        },
      });
      // A watch holds a socket for its whole life. Opening it takes one trip; events then flow in order, each no
      // earlier than the one before.
      const open = (): void => {
        if (finished) {
          this.#pool.release(true);
          return;
        }
        holding = true;
        clock.after(net.latency(), () => {
          if (finished) return;
          const at = (): number => {
            lastAt = Math.max(lastAt, net.watchDeliveryAt(podWatch));
            return lastAt;
          };
          cancelServer = net.watchServer().watch(path, query, {
            send: (line, rv) => {
              clock.at(at(), () =>
                proc.run(() => {
                  if (finished) return;
                  if (podWatch) net.sawPods(this.#sender.identity, rv);
                  armIdle();
                  try {
                    onLine(line);
                  } catch (e) {
                    finish(e);
                  }
                }),
              );
            },
            end: () => {
              clock.at(at(), () => proc.run(() => finish()));
            },
          });
        });
      };
      const line = this.#pool.acquire(proc, open);
      waiting = line;
      if (line.waits) net.queued(this.#sender, 'GET', what);
    });
  }
}
