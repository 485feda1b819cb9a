// The invariants, checked after every change the API server commits and at every write that reaches it.
// Every bound is the checker's own arithmetic on the CloneSet spec (Kruise's rules, written out again here on
// purpose): nothing is asked of the planner, so a planner bug cannot hide behind its own numbers.
//
// - pods ≤ replicas + maxSurge: no create by the controller leaves more active (not terminating) pods;
// - unavailable ≤ maxUnavailable: no write by the controller makes a pod unavailable when that leaves fewer
//   than replicas − maxUnavailable available pods (pods that are not yet ready do not count against it: only
//   the controller's own writes are judged, so scale-ups from nothing do not trip it). A pod whose becoming
//   available had not reached the writer's cache yet, or reached it less than PLAN_LAG_MS before the write (the
//   pass may have been planned before), is excused: Kruise counts it as unavailable then, and updating an
//   unavailable pod takes nothing from the budget;
// - no over-deletion: the controller never deletes an up-to-date pod (the newest image, not marked
//   specified-delete) when that leaves fewer active pods than replicas (scaling in stops at replicas; only
//   pods being replaced go below it, within maxUnavailable);
// - no duplicate instance id among existing pods;
// - no PVC lost (a PVC deleted while a live pod uses its instance id) or orphaned (at convergence, a PVC of
//   the CloneSet whose instance id has no pod);
// - no write from a non-leader: a write of a controller process reaches the API server only while the Lease
//   names that process and its last renewal reached the server less than a lease duration ago;
// - convergence: within a bound after the last fault and the last spec change, the pods, PVCs and status
//   match the spec.
// Specs change during a run and a controller may legitimately act on one a little older than the newest:
// bounds use the most permissive spec of the last SPEC_LAG_MS. An etcd restore brings back pods and Leases
// the controller cannot know about until it relists: the safety checks pause for RESTORE_GRACE_MS after one.
import type { ApiServer, Mutation, Obj } from './api-server.ts';
import type { SimClock } from './clock.ts';

const INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';
const LIFECYCLE_STATE = 'lifecycle.apps.kruise.io/state';
/** How old a spec a controller may still act on (slow or stalled caches, a restarted leader's first pass). */
export const SPEC_LAG_MS = 90_000;
export const LEASE_DURATION_MS = 15_000;
export const RESTORE_GRACE_MS = 30_000;
/** How long before its writes a pass may have been planned (a pass that waited out a 429 takes seconds). */
export const PLAN_LAG_MS = 4_000;

export interface Violation {
  readonly atMs: number;
  readonly invariant: 'surge' | 'unavailable' | 'over-deletion' | 'instance-id' | 'pvc' | 'leader' | 'convergence';
  readonly message: string;
}

export type IntOrString = number | string;

interface SpecView {
  readonly replicas: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
  readonly partition: number;
  readonly image: string;
  readonly withPvcs: boolean;
  /** spec.scaleStrategy.podsToDelete: pods the user asked to delete. */
  readonly podsToDelete: readonly string[];
}

/** Kubernetes' legacy GetValueFromIntOrPercent: every '%' dropped, an integer percentage, rounded up or down. */
export function scaled(v: IntOrString | undefined, total: number, roundUp: boolean, fallback: IntOrString): number {
  const value = v ?? fallback;
  if (typeof value === 'number') return value;
  const n = Number.parseInt(value.replaceAll('%', ''), 10);
  if (!Number.isFinite(n) || String(n) !== value.replaceAll('%', '').replace(/^\+/, '')) return 0;
  const exact = (n * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** Kruise's partition: an integer, or a percentage rounded up (not all when it is not exactly 100%), clamped. */
export function partitionOf(v: IntOrString | undefined, replicas: number): number {
  if (v === undefined) return 0;
  let p: number;
  if (typeof v === 'number') p = v;
  else {
    const pct = Number.parseFloat(v.slice(0, -1));
    p = Number.isFinite(pct) ? Math.ceil((pct * replicas) / 100) : 0;
    if (replicas > 1 && p === replicas && v !== '100%') p = replicas - 1;
  }
  return Math.max(0, Math.min(replicas, p));
}

export function specView(cs: Obj): SpecView {
  const spec = (cs['spec'] ?? {}) as {
    replicas?: number;
    updateStrategy?: { rollingUpdate?: { maxSurge?: IntOrString; maxUnavailable?: IntOrString; partition?: IntOrString; paused?: boolean } };
    template?: { spec?: { containers?: readonly { image?: string }[] } };
    volumeClaimTemplates?: readonly unknown[];
    scaleStrategy?: { podsToDelete?: readonly string[] };
  };
  const replicas = spec.replicas ?? 1;
  const ru = spec.updateStrategy?.rollingUpdate ?? {};
  const maxSurge = ru.paused === true ? 0 : scaled(ru.maxSurge, replicas, true, 0);
  const maxUnavailable = scaled(ru.maxUnavailable, replicas, maxSurge === 0, '20%');
  return {
    replicas,
    maxSurge,
    maxUnavailable,
    partition: partitionOf(ru.partition, replicas),
    image: spec.template?.spec?.containers?.[0]?.image ?? '',
    withPvcs: (spec.volumeClaimTemplates ?? []).length > 0,
    podsToDelete: spec.scaleStrategy?.podsToDelete ?? [],
  };
}

interface Owned {
  readonly uid: string;
}

function ownedBy(o: Obj, owner: Owned): boolean {
  return (o.metadata.ownerReferences ?? []).some((r) => r.uid === owner.uid && r.controller === true);
}

const active = (p: Obj): boolean => p.metadata.deletionTimestamp === undefined;

/** Named in a recent spec's podsToDelete or labelled apps.kruise.io/specified-delete: the user asked for its deletion. */
function userDeleted(p: Obj, specs: readonly SpecView[]): boolean {
  return p.metadata.labels?.['apps.kruise.io/specified-delete'] !== undefined || specs.some((s) => s.podsToDelete.includes(p.metadata.name));
}

/** Available as the checker sees it: Ready, every readiness gate True, lifecycle Normal (or none), not deleted. */
export function available(p: Obj): boolean {
  if (!active(p)) return false;
  const state = p.metadata.labels?.[LIFECYCLE_STATE];
  if (state !== undefined && state !== '' && state !== 'Normal') return false;
  const conditions = ((p['status'] ?? {}) as { conditions?: readonly { type: string; status: string }[] }).conditions ?? [];
  const gates = ((p['spec'] ?? {}) as { readinessGates?: readonly { conditionType: string }[] }).readinessGates ?? [];
  const isTrue = (t: string): boolean => conditions.some((c) => c.type === t && c.status === 'True');
  return isTrue('Ready') && gates.every((g) => isTrue(g.conditionType));
}

function imageOf(p: Obj): string {
  return ((p['spec'] ?? {}) as { containers?: readonly { image?: string }[] }).containers?.[0]?.image ?? '';
}

function runningImageOf(p: Obj): string | undefined {
  return ((p['status'] ?? {}) as { containerStatuses?: readonly { image?: string; ready?: boolean }[] }).containerStatuses?.[0]?.image;
}

/** `name:image:A` (available) or `name:image:-` for violation messages. */
function describePod(p: Obj): string {
  const conditions = ((p['status'] ?? {}) as { conditions?: readonly { type: string; status: string }[] }).conditions ?? [];
  const why = available(p)
    ? 'A'
    : conditions
        .filter((c) => c.status !== 'True')
        .map((c) => c.type)
        .join('+') ||
      (p.metadata.labels?.[LIFECYCLE_STATE] ?? 'no-conditions');
  return `${p.metadata.name}:${imageOf(p)}:${why}`;
}

export class Checker {
  readonly #server: ApiServer;
  readonly #clock: SimClock;
  readonly #namespace: string;
  readonly #name: string;
  readonly #isController: (origin: string) => boolean;
  readonly violations: Violation[] = [];
  /** Spec versions with the time they stopped being the newest (undefined: still current). */
  readonly #specs: { view: SpecView; until: number | undefined }[] = [];
  #leaseHolder = '';
  readonly #renewedAt = new Map<string, number>();
  /** Per pod uid: the resourceVersion at which it last became available. */
  readonly #availableAt = new Map<string, number>();
  /** Per pod uid: the resourceVersion at which the kubelet (not a controller) made it unavailable. */
  readonly #flappedAt = new Map<string, number>();
  /** When a process's pod cache could first have shown resourceVersion rv (undefined: not yet). */
  readonly #reachedAt: (identity: string, rv: number) => number | undefined;
  #suspendedUntil = -1;
  /**
   * After a restore a pod may exist without its PVC for good: the restore dropped the PVC while the pod's create
   * was being resent (a lost answer), and neither Kruise nor we create PVCs for a pod that exists.
   */
  #restoredOnce = false;
  checks = 0;

  constructor(
    server: ApiServer,
    clock: SimClock,
    namespace: string,
    name: string,
    isController: (origin: string) => boolean,
    reachedAt: (identity: string, rv: number) => number | undefined,
  ) {
    this.#reachedAt = reachedAt;
    this.#server = server;
    this.#clock = clock;
    this.#namespace = namespace;
    this.#name = name;
    this.#isController = isController;
    server.observe({ onMutation: (m) => this.#onMutation(m) });
  }

  /** An etcd restore happened: the safety checks pause (the Lease and pods may have gone back in time). */
  restored(): void {
    this.#suspendedUntil = this.#clock.now() + RESTORE_GRACE_MS;
    this.#restoredOnce = true;
    this.#renewedAt.clear();
  }

  #suspended(): boolean {
    return this.#clock.now() < this.#suspendedUntil;
  }

  #violate(invariant: Violation['invariant'], message: string): void {
    this.violations.push({ atMs: this.#clock.now(), invariant, message });
  }

  #cloneSet(): Obj | undefined {
    return this.#server.peek('clonesets', this.#namespace, this.#name);
  }

  #recentSpecs(): SpecView[] {
    const now = this.#clock.now();
    return this.#specs.filter((s) => s.until === undefined || now - s.until <= SPEC_LAG_MS).map((s) => s.view);
  }

  #pods(owner: Owned): Obj[] {
    return this.#server.all('pods').filter((p) => ownedBy(p, owner));
  }

  /** A write from a controller process has reached the API server (called before it is applied). */
  onWrite(origin: string, method: string, path: string): void {
    if (!this.#isController(origin) || path.includes('/leases/') || path.endsWith('/leases') || this.#suspended()) return;
    this.checks++;
    const renewed = this.#renewedAt.get(origin);
    const now = this.#clock.now();
    if (this.#leaseHolder !== origin) {
      this.#violate('leader', `${method} ${path} from ${origin} while the Lease names ${this.#leaseHolder === '' ? 'nobody' : this.#leaseHolder}`);
    } else if (renewed === undefined || now - renewed > LEASE_DURATION_MS) {
      this.#violate(
        'leader',
        `${method} ${path} from ${origin} ${renewed === undefined ? 'before any renewal' : `${((now - renewed) / 1000).toFixed(1)}s after its last renewal reached the server (lease ${LEASE_DURATION_MS / 1000}s)`}`,
      );
    }
  }

  #onMutation(m: Mutation): void {
    this.checks++;
    if (m.plural === 'leases' && m.after !== undefined) {
      const holder = ((m.after['spec'] ?? {}) as { holderIdentity?: string }).holderIdentity ?? '';
      this.#leaseHolder = holder;
      if (holder !== '' && holder === m.origin) this.#renewedAt.set(holder, this.#clock.now());
      return;
    }
    if (m.plural === 'clonesets') {
      if (m.after !== undefined && m.subresource === undefined && m.after.metadata.name === this.#name) {
        const view = specView(m.after);
        const last = this.#specs[this.#specs.length - 1];
        if (last === undefined || JSON.stringify(last.view) !== JSON.stringify(view)) {
          if (last !== undefined) last.until = this.#clock.now();
          this.#specs.push({ view, until: undefined });
        }
      }
      return;
    }
    const cs = this.#cloneSet();
    if (cs === undefined) return;
    const owner = { uid: cs.metadata.uid };
    // Another CloneSet's pod (a run may have two): judged by that CloneSet's checker.
    const pod = m.after ?? m.before;
    if (m.plural === 'pods' && pod !== undefined && (ownedBy(pod, owner) || (m.before !== undefined && ownedBy(m.before, owner)))) this.#checkPods(m, owner);
    if (m.plural === 'persistentvolumeclaims') this.#checkPvcs(m, owner);
  }

  #checkPods(m: Mutation, owner: Owned): void {
    if (m.after !== undefined && available(m.after) && (m.before === undefined || !available(m.before))) {
      this.#availableAt.set(m.after.metadata.uid, this.#server.resourceVersion);
      this.#flappedAt.delete(m.after.metadata.uid);
    }
    if (m.after !== undefined && m.before !== undefined && available(m.before) && !available(m.after) && !this.#isController(m.origin))
      this.#flappedAt.set(m.after.metadata.uid, this.#server.resourceVersion);
    if (this.#suspended()) return;
    const pods = this.#pods(owner);
    const specs = this.#recentSpecs();
    if (specs.length === 0) return;
    if (m.verb === 'create' && m.after !== undefined && this.#isController(m.origin)) {
      // Pods a preDelete hook holds and pods the user asked to delete may exceed the bound: their replacements may
      // exist first (Kruise pkg/controller/cloneset/sync/cloneset_scale.go).
      const count = pods.filter((p) => active(p) && p.metadata.labels?.[LIFECYCLE_STATE] !== 'PreparingDelete' && !userDeleted(p, specs)).length;
      const bound = Math.max(...specs.map((s) => s.replicas + s.maxSurge));
      if (count > bound) this.#violate('surge', `${m.origin} created ${m.after.metadata.name}: ${count} active pods, more than replicas + maxSurge = ${bound}`);
      const id = m.after.metadata.labels?.[INSTANCE_ID];
      const same = this.#server.all('pods').filter((p) => p.metadata.labels?.[INSTANCE_ID] === id && ownedBy(p, owner));
      if (id !== undefined && same.length > 1) this.#violate('instance-id', `instance id ${id} used by ${same.map((p) => p.metadata.name).join(', ')}`);
    }
    // 'remove': a pod no node runs goes at once.
    if ((m.verb === 'delete' || m.verb === 'remove') && this.#isController(m.origin) && m.before !== undefined && active(m.before)) {
      const newest = specs[specs.length - 1];
      const marked = userDeleted(m.before, specs);
      const count = pods.filter(active).length;
      const floor = Math.min(...specs.map((s) => s.replicas));
      if (newest !== undefined && imageOf(m.before) === newest.image && !marked && count < floor) {
        this.#violate(
          'over-deletion',
          `${m.origin} deleted up-to-date pod ${m.before.metadata.name}: ${count} active pods left, fewer than replicas = ${floor} [${pods.filter(active).map(describePod).join(' ')}]`,
        );
      }
    }
    // Seen PLAN_LAG_MS before the write, counted from when the change reached the writer (a late watch
    // delivers it seconds after the server committed it), not from the commit.
    const seenLongEnough = (rv: number): boolean => {
      const at = this.#reachedAt(m.origin, rv);
      return at !== undefined && this.#clock.now() - at >= PLAN_LAG_MS;
    };
    const since = this.#availableAt.get(m.before?.metadata.uid ?? '');
    const seen = since === undefined || seenLongEnough(since);
    // A pod the user asked to delete goes regardless of maxUnavailable (Kruise deletes it directly).
    const asked = m.before !== undefined && userDeleted(m.before, specs);
    if (this.#isController(m.origin) && m.before !== undefined && available(m.before) && (m.after === undefined || !available(m.after)) && seen && !asked) {
      // A pod the kubelet made unavailable (a failed probe, a restart) is counted as available when that had not
      // reached the writer's cache, or reached it less than PLAN_LAG_MS before: the pass was planned without it.
      const unseenFlap = (p: Obj): boolean => {
        const f = this.#flappedAt.get(p.metadata.uid);
        return f !== undefined && active(p) && !seenLongEnough(f);
      };
      const availableNow = pods.filter((p) => available(p) || unseenFlap(p)).length;
      const floor = Math.min(...specs.map((s) => s.replicas - s.maxUnavailable));
      if (availableNow < floor) {
        this.#violate(
          'unavailable',
          `${m.origin} ${m.verb} ${m.before.metadata.name} made it unavailable: ${availableNow} available pods, fewer than replicas − maxUnavailable = ${floor} [${pods.filter(active).map(describePod).join(' ')}]`,
        );
      }
    }
  }

  #checkPvcs(m: Mutation, owner: Owned): void {
    if (m.after !== undefined || m.before === undefined || m.origin === 'etcd-restore' || this.#suspended()) return;
    if (!ownedBy(m.before, owner)) return;
    const id = m.before.metadata.labels?.[INSTANCE_ID];
    const user = this.#pods(owner).find((p) => active(p) && p.metadata.labels?.[INSTANCE_ID] === id);
    if (user !== undefined) this.#violate('pvc', `PVC ${m.before.metadata.name} removed (${m.origin}) while pod ${user.metadata.name} uses instance id ${id ?? ''}`);
  }

  /** The last answer of `notConverged` and the world it was given for (the run asks after every event). */
  #convergence: { readonly rv: number; readonly restoredOnce: boolean; readonly why: string | undefined } | undefined;

  /** Undefined when the world matches the newest spec; else why not. */
  notConverged(): string | undefined {
    // The answer reads only stored objects and #restoredOnce: while neither changed, it is the same.
    const rv = this.#server.resourceVersion;
    const known = this.#convergence;
    if (known !== undefined && known.rv === rv && known.restoredOnce === this.#restoredOnce) return known.why;
    const why = this.#notConverged();
    this.#convergence = { rv, restoredOnce: this.#restoredOnce, why };
    return why;
  }

  #notConverged(): string | undefined {
    const cs = this.#cloneSet();
    if (cs === undefined) return 'the CloneSet is gone';
    const s = specView(cs);
    const all = this.#pods({ uid: cs.metadata.uid });
    const pods = all.filter(active);
    if (all.length !== pods.length) return `${all.length - pods.length} pods still terminating`;
    if (pods.length !== s.replicas) return `${pods.length} pods, want ${s.replicas}`;
    const unavailable = pods.filter((p) => !available(p) || runningImageOf(p) !== imageOf(p));
    if (unavailable.length > 0) return `${unavailable.length} pods not available (${unavailable.map((p) => p.metadata.name).join(', ')})`;
    const updated = pods.filter((p) => imageOf(p) === s.image).length;
    const wanted = s.replicas - s.partition;
    if (updated < wanted || (s.partition === 0 && updated !== s.replicas)) return `${updated} pods run ${s.image}, want ${wanted}`;
    const ids = pods.map((p) => p.metadata.labels?.[INSTANCE_ID] ?? '');
    if (new Set(ids).size !== ids.length) return 'duplicate instance ids';
    const pvcs = this.#server.all('persistentvolumeclaims').filter((c) => ownedBy(c, { uid: cs.metadata.uid }));
    if (s.withPvcs && !this.#restoredOnce) {
      const missing = ids.filter((id) => !pvcs.some((c) => c.metadata.labels?.[INSTANCE_ID] === id));
      if (missing.length > 0) return `no PVC for instance ids ${missing.join(', ')}`;
    }
    const orphans = pvcs.filter((c) => !ids.includes(c.metadata.labels?.[INSTANCE_ID] ?? ''));
    if (orphans.length > 0) return `orphaned PVCs ${orphans.map((c) => c.metadata.name).join(', ')}`;
    const st = (cs['status'] ?? {}) as { observedGeneration?: number; replicas?: number; readyReplicas?: number; availableReplicas?: number; updatedReplicas?: number };
    if (st.observedGeneration !== cs.metadata.generation) return `status.observedGeneration ${String(st.observedGeneration)}, generation ${String(cs.metadata.generation)}`;
    if (st.replicas !== s.replicas || st.readyReplicas !== s.replicas || st.availableReplicas !== s.replicas) {
      return `status replicas/ready/available ${String(st.replicas)}/${String(st.readyReplicas)}/${String(st.availableReplicas)}, want ${s.replicas}`;
    }
    if (st.updatedReplicas !== updated && s.partition === 0) return `status.updatedReplicas ${String(st.updatedReplicas)}, ${updated} pods updated`;
    return undefined;
  }

  convergenceFailed(reason: string, boundMs: number): void {
    this.#violate('convergence', `not converged ${boundMs / 1000}s after the last fault and spec change: ${reason}`);
  }
}
