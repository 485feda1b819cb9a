// The node side of the world: a scheduler and kubelet in one. A new pod is bound and started a moment after it
// appears; a pod is Ready when its containers run the images of its spec and every readiness gate is True; an
// image changed in place restarts that container (not ready meanwhile, then a new imageID); a deleted pod's
// containers stop within its grace period and the pod object goes away.
import type { Container } from '../src/kube/types.ts';
import type { ApiServer, Mutation, Obj } from './api-server.ts';
import type { SimClock } from './clock.ts';
import type { Rng } from './random.ts';

const ORIGIN = 'kubelet';

interface ContainerStatus {
  readonly name: string;
  readonly image: string;
  readonly imageID: string;
  readonly ready: boolean;
  readonly restartCount: number;
  readonly started: boolean;
  readonly state: Record<string, unknown>;
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly lastTransitionTime?: string;
  readonly [k: string]: unknown;
}

export class Kubelet {
  readonly #server: ApiServer;
  readonly #clock: SimClock;
  readonly #rng: Rng;
  /** Pods with a sync already scheduled (by uid). */
  readonly #pending = new Set<string>();
  actions = 0;

  constructor(server: ApiServer, clock: SimClock, rng: Rng) {
    this.#server = server;
    this.#clock = clock;
    this.#rng = rng;
    server.observe({ onMutation: (m) => this.#onMutation(m) });
  }

  #onMutation(m: Mutation): void {
    if (m.plural !== 'pods' || m.after === undefined || m.origin === ORIGIN) return;
    this.#schedule(m.after, this.#rng.int(50, 2_000));
  }

  #schedule(pod: Obj, ms: number): void {
    const uid = pod.metadata.uid;
    if (this.#pending.has(uid)) return;
    this.#pending.add(uid);
    const { namespace, name } = pod.metadata;
    this.#clock.after(ms, () => {
      this.#pending.delete(uid);
      const now = this.#server.peek('pods', namespace, name);
      if (now?.metadata.uid === uid) this.#sync(now);
    });
  }

  #path(pod: Obj, sub = ''): string {
    return `/api/v1/namespaces/${pod.metadata.namespace ?? ''}/pods/${pod.metadata.name}${sub}`;
  }

  #sync(pod: Obj): void {
    this.actions++;
    if (pod.metadata.deletionTimestamp !== undefined) {
      const grace = Math.min(pod.metadata.deletionGracePeriodSeconds ?? 30, 3);
      this.#clock.after(this.#rng.int(0, grace * 1000), () => this.#server.removeNow(ORIGIN, 'pods', pod.metadata.namespace, pod.metadata.name, pod.metadata.uid));
      return;
    }
    const spec = (pod['spec'] ?? {}) as { nodeName?: string; containers?: readonly Container[]; readinessGates?: readonly { conditionType: string }[] };
    if (spec.nodeName === undefined || spec.nodeName === '') {
      this.#server.write(ORIGIN, 'PATCH', this.#path(pod), { spec: { nodeName: 'sim-node' } });
      const bound = this.#server.peek('pods', pod.metadata.namespace, pod.metadata.name);
      if (bound !== undefined) this.#schedule(bound, this.#rng.int(100, 3_000));
      return;
    }
    const status = (pod['status'] ?? {}) as { containerStatuses?: readonly ContainerStatus[]; conditions?: readonly Condition[]; phase?: string };
    const containers = spec.containers ?? [];
    const old = status.containerStatuses ?? [];
    const now = this.#server.rfc3339();
    let restarting = false;
    const statuses: ContainerStatus[] = containers.map((c) => {
      const image = c.image ?? '';
      const prev = old.find((s) => s.name === c.name);
      if (prev === undefined) return { name: c.name, image, imageID: imageId(image), ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } };
      if (prev.image === image) return prev.ready ? prev : { ...prev, ready: true, started: true, state: { running: { startedAt: now } } };
      if (prev.ready) {
        // The container is being restarted with its new image: not ready until it runs again.
        restarting = true;
        return { ...prev, ready: false, started: false, state: { waiting: { reason: 'ContainerCreating' } } };
      }
      return { name: c.name, image, imageID: imageId(image), ready: true, restartCount: prev.restartCount + 1, started: true, state: { running: { startedAt: now } } };
    });
    const containersReady = statuses.every((s) => s.ready);
    const conditions = status.conditions ?? [];
    const gatesTrue = (spec.readinessGates ?? []).every((g) => conditions.some((c) => c.type === g.conditionType && c.status === 'True'));
    const set = (list: readonly Condition[], type: string, value: boolean): Condition[] => {
      const want = value ? 'True' : 'False';
      const cur = list.find((c) => c.type === type);
      if (cur?.status === want) return [...list];
      const next = { type, status: want, lastTransitionTime: now };
      return cur === undefined ? [...list, next] : list.map((c) => (c.type === type ? next : c));
    };
    let next = set(conditions, 'PodScheduled', true);
    next = set(next, 'Initialized', true);
    next = set(next, 'ContainersReady', containersReady);
    next = set(next, 'Ready', containersReady && gatesTrue);
    const desired = { phase: 'Running', hostIP: '10.0.0.1', podIP: podIp(pod.metadata.uid), containerStatuses: statuses, conditions: next };
    const current = {
      phase: status.phase,
      hostIP: (status as Record<string, unknown>)['hostIP'],
      podIP: (status as Record<string, unknown>)['podIP'],
      containerStatuses: old,
      conditions,
    };
    if (JSON.stringify(desired) !== JSON.stringify(current)) {
      this.#server.write(ORIGIN, 'PATCH', this.#path(pod, '/status'), { status: desired });
    }
    if (restarting) {
      const after = this.#server.peek('pods', pod.metadata.namespace, pod.metadata.name);
      if (after !== undefined) this.#schedule(after, this.#rng.int(500, 5_000));
    }
  }
}

function imageId(image: string): string {
  let h = 2166136261;
  for (let i = 0; i < image.length; i++) h = Math.imul(h ^ image.charCodeAt(i), 16777619) >>> 0;
  return `docker.io/library/${image.split(':')[0] ?? image}@sha256:${h.toString(16).padStart(8, '0').repeat(8)}`;
}

function podIp(uid: string): string {
  const n = parseInt(uid.slice(-4), 16);
  return `10.244.${(n >> 8) & 255}.${n & 255}`;
}
