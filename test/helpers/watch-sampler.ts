// Bounds sampled from a pod WATCH stream instead of by sleeping: PodSampler evaluates every event of an informer
// as it arrives (most active pods, most unavailable ones); PodWatch records the raw events with their arrival time
// and replays them afterwards.
import pino from 'pino';
import type { KubeClient } from '../../src/kube/client.ts';
import { PODS } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { Informer } from '../../src/runtime/informer.ts';
import { isActive, isReady } from './cloneset.ts';

/**
 * Watches the pods of one CloneSet (an informer: list, then a WATCH stream) and evaluates every event against
 * the state it produces: the largest number of active pods and of unavailable ones (replicas − active Ready pods)
 * ever seen. A terminating pod counts as unavailable from the moment it has a deletionTimestamp.
 */
export class PodSampler {
  readonly #informer: Informer<Pod>;
  readonly #abort = new AbortController();
  readonly #replicas: number;
  maxActive = 0;
  maxUnavailable = 0;
  events = 0;
  readonly #worst: string[] = [];

  constructor(client: KubeClient, namespace: string, app: string, replicas: number) {
    this.#replicas = replicas;
    this.#informer = new Informer<Pod>({ client, resource: PODS, namespace, labelSelector: `app=${app}`, clock: systemClock, logger: pino({ level: 'silent' }) });
    const sample = (): void => this.#sample();
    this.#informer.addHandlers({ onAdd: sample, onUpdate: sample, onDelete: sample });
  }

  async start(): Promise<void> {
    this.#informer.start(this.#abort.signal);
    await this.#informer.waitForSync(this.#abort.signal);
  }

  stop(): void {
    this.#abort.abort();
  }

  /** A description of the worst states seen, for assertion messages. */
  get worst(): string {
    return this.#worst.join('\n');
  }

  #sample(): void {
    this.events++;
    const active = this.#informer.store.list().filter(isActive);
    const unavailable = this.#replicas - active.filter(isReady).length;
    if (active.length > this.maxActive || unavailable > this.maxUnavailable) {
      this.#worst.push(`event ${this.events}: ${active.length} active, ${unavailable} unavailable`);
    }
    this.maxActive = Math.max(this.maxActive, active.length);
    this.maxUnavailable = Math.max(this.maxUnavailable, unavailable);
  }
}

export interface PodEvent {
  /** Date.now() when the event arrived */
  readonly at: number;
  readonly type: string;
  readonly pod: Pod;
}

/** Every pod event of one app from `resourceVersion` on, timestamped on arrival, until stopped. */
export class PodWatch {
  readonly events: PodEvent[] = [];
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;

  constructor(client: KubeClient, ns: string, app: string, resourceVersion: string, timeoutSeconds = 900) {
    this.#done = client
      .watch(
        PODS,
        ns,
        { resourceVersion, timeoutSeconds, allowWatchBookmarks: false, labelSelector: `app=${app}` },
        (e) => {
          if (e.type === 'ERROR' || e.type === 'BOOKMARK') return;
          this.events.push({ at: Date.now(), type: e.type, pod: e.object as Pod });
        },
        this.#abort.signal,
      )
      .catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }

  /**
   * Replays the stream over the pods before it (`initial`): after each event, `visit` sees the event and the pods
   * then present by uid (deleted ones removed, terminating ones kept). Returns the pods present at the end.
   */
  replay(initial: readonly Pod[], visit: (event: PodEvent, live: ReadonlyMap<string, Pod>) => void): ReadonlyMap<string, Pod> {
    const live = new Map(initial.map((p) => [p.metadata.uid ?? '', p]));
    for (const e of this.events) {
      const uid = e.pod.metadata.uid ?? '';
      if (e.type === 'DELETED') live.delete(uid);
      else live.set(uid, e.pod);
      visit(e, live);
    }
    return live;
  }

  /** The largest number of active pods not Ready at any point of the stream (given the pods before it). */
  maxNotReady(initial: readonly Pod[]): number {
    const notReady = (live: ReadonlyMap<string, Pod>): number => [...live.values()].filter((p) => isActive(p) && !isReady(p)).length;
    let max = notReady(new Map(initial.map((p) => [p.metadata.uid ?? '', p])));
    this.replay(initial, (_e, live) => {
      max = Math.max(max, notReady(live));
    });
    return max;
  }
}
