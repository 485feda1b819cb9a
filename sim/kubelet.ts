// The node side of the world: a scheduler and kubelet in one. A new pod is bound and started a moment after it
// appears; a started container passes its readiness probe after a delay of its own (0–3 s), so pods of one
// scale-up turn Ready at different times; a pod is Ready when its containers pass their probes and every
// readiness gate is True; an image changed in place restarts that container (not ready meanwhile, then a new
// imageID); a deleted pod's containers stop within its grace period and the pod object goes away.
// While the fault window is open a Ready pod may flap, as on a real node: its readiness probe fails for a moment,
// or its container restarts (restartCount + 1, not ready until the probe passes again). Both change how the
// controller ranks pods (not ready first, then Ready for the shortest time, then most restarts), so two passes
// planned on caches a moment apart can pick different victims.
import type { Container } from '../src/kube/types.ts';
import { sameJson, type ApiServer, type Mutation, type Obj } from './api-server.ts';
import type { SimClock } from './clock.ts';
import type { FaultKind } from './faults.ts';
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
  readonly #flaps: Flaps;
  /** Pods with a sync already scheduled (by uid). */
  readonly #pending = new Set<string>();
  /** Per pod uid: the readiness probe fails until then (a container starting, a flap). */
  readonly #unreadyUntil = new Map<string, number>();
  /** Pods whose container restarts at their next sync (a flap). */
  readonly #restarts = new Set<string>();
  /** Pods with a flap already scheduled. */
  readonly #flapping = new Set<string>();
  /** Images whose readiness probe never passes (a broken build): their containers run but are never ready. */
  readonly #broken: ReadonlySet<string>;
  actions = 0;

  constructor(server: ApiServer, clock: SimClock, rng: Rng, flaps: Flaps = { rate: 0, withinMs: 0, untilMs: 0, faults: undefined }, brokenImages: readonly string[] = []) {
    this.#server = server;
    this.#clock = clock;
    this.#rng = rng;
    this.#flaps = flaps;
    this.#broken = new Set(brokenImages);
    server.observe({ onMutation: (m) => this.#onMutation(m) });
  }

  /** A Ready pod may flap later, while the fault window is open. */
  #maybeFlap(pod: Obj): void {
    const uid = pod.metadata.uid;
    if (this.#flaps.rate === 0 || this.#flapping.has(uid) || !this.#rng.chance(this.#flaps.rate)) return;
    const at = this.#rng.int(200, this.#flaps.withinMs);
    if (this.#clock.now() + at >= this.#flaps.untilMs) return;
    this.#flapping.add(uid);
    const restart = this.#rng.chance(0.4);
    const forMs = this.#rng.int(300, 4_000);
    const { namespace, name } = pod.metadata;
    this.#clock.after(at, () => {
      this.#flapping.delete(uid);
      const now = this.#server.peek('pods', namespace, name);
      if (now?.metadata.uid !== uid || now.metadata.deletionTimestamp !== undefined) return;
      this.#flapNow(now, restart, forMs);
    });
  }

  #flapNow(pod: Obj, restart: boolean, forMs: number): void {
    const uid = pod.metadata.uid;
    const kind: FaultKind = restart ? 'containerRestart' : 'readinessFlap';
    if (this.#flaps.faults !== undefined) this.#flaps.faults[kind]++;
    if (restart) this.#restarts.add(uid);
    this.#unreadyUntil.set(uid, this.#clock.now() + forMs);
    this.#sync(pod);
  }

  /**
   * The readiness probe of another Ready pod with the same controller as `namespace/name` fails now, for
   * 0.3–4 s (the kubelet's part of a delete coincidence, sim/network.ts). False when there is none.
   */
  failProbeBeside(namespace: string, name: string): boolean {
    const pod = this.#server.peek('pods', namespace, name);
    const owner = controllerUid(pod);
    if (pod === undefined || owner === undefined) return false;
    const candidates = this.#server
      .all('pods')
      .filter((p) => p.metadata.namespace === namespace && p.metadata.uid !== pod.metadata.uid && p.metadata.deletionTimestamp === undefined)
      .filter((p) => controllerUid(p) === owner && isReady(p));
    const picked = candidates.length === 0 ? undefined : this.#rng.pick(candidates);
    // A copy: `all` gives the stored objects.
    const target = picked === undefined ? undefined : this.#server.peek('pods', namespace, picked.metadata.name);
    if (target === undefined) return false;
    this.#flapNow(target, false, this.#rng.int(300, 4_000));
    return true;
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
    const uid = pod.metadata.uid;
    let restarting = false;
    /** A container (re)started now: its readiness probe passes after a delay of its own. */
    const started = (): boolean => {
      const delay = this.#rng.int(0, 3_000);
      this.#unreadyUntil.set(uid, Math.max(this.#unreadyUntil.get(uid) ?? 0, this.#clock.now() + delay));
      return delay === 0;
    };
    const restart = this.#restarts.delete(uid);
    const statuses: ContainerStatus[] = containers.map((c) => {
      const image = c.image ?? '';
      const prev = old.find((s) => s.name === c.name);
      if (prev === undefined)
        return {
          name: c.name,
          image,
          imageID: imageId(image),
          ready: started() && !this.#broken.has(image),
          restartCount: 0,
          started: true,
          state: { running: { startedAt: now } },
        };
      if (prev.image === image) {
        if (restart) return { ...prev, ready: false, restartCount: prev.restartCount + 1, started: true, state: { running: { startedAt: now } } };
        const probe = this.#clock.now() >= (this.#unreadyUntil.get(uid) ?? 0) && !this.#broken.has(image);
        return prev.ready === probe ? prev : { ...prev, ready: probe, started: true };
      }
      if (prev.ready) {
        // The container is being restarted with its new image: not ready until it runs again.
        restarting = true;
        return { ...prev, ready: false, started: false, state: { waiting: { reason: 'ContainerCreating' } } };
      }
      return {
        name: c.name,
        image,
        imageID: imageId(image),
        ready: started() && !this.#broken.has(image),
        restartCount: prev.restartCount + 1,
        started: true,
        state: { running: { startedAt: now } },
      };
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
    if (!sameJson(desired, current)) {
      this.#server.write(ORIGIN, 'PATCH', this.#path(pod, '/status'), { status: desired });
    }
    const after = this.#server.peek('pods', pod.metadata.namespace, pod.metadata.name);
    if (after === undefined) return;
    if (restarting) this.#schedule(after, this.#rng.int(500, 5_000));
    else if (!containersReady && !statuses.some((s) => this.#broken.has(s.image) && s.started))
      this.#schedule(after, Math.max(1, (this.#unreadyUntil.get(uid) ?? 0) - this.#clock.now()));
    else if (containersReady && gatesTrue) this.#maybeFlap(after);
  }
}

/** The kubelet's own faults: how often a Ready pod flaps, until when, and where they are counted. */
export interface Flaps {
  readonly rate: number;
  readonly withinMs: number;
  readonly untilMs: number;
  readonly faults: Record<FaultKind, number> | undefined;
}

function controllerUid(pod: Obj | undefined): string | undefined {
  return pod?.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}

function isReady(pod: Obj): boolean {
  const conditions = ((pod['status'] ?? {}) as { conditions?: readonly Condition[] }).conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
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
