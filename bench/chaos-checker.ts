// The invariant checker of a chaos run. It watches the namespace's CloneSets, pods, PVCs and the leader Lease on
// its OWN connection to the API server (not through the fault proxy: it must see the truth while the controllers
// see faults) and records a violation whenever the controller does something the CloneSet spec forbids:
//
//   too-many-pods     a pod CREATED while the CloneSet already has replicas + maxSurge pods. Counted: active pods
//                     (not terminating, not Failed/Succeeded) except those the spec lets exceed the bound — pods in
//                     PreparingDelete (a preDelete hook holds them), pods named in scaleStrategy.podsToDelete or
//                     labelled apps.kruise.io/specified-delete (their replacement may exist first). `replicas` is the
//                     largest among the generations the controller may still act on (status.observedGeneration …
//                     metadata.generation): a scale-down is not the controller's fault until it has seen it.
//   too-unavailable   a pod that was Ready stops being Ready or starts terminating (a delete or an in-place update
//                     by the controller) while replicas - (Ready, non-terminating pods) exceeds maxUnavailable.
//                     Not counted (the spec allows them): the CloneSet has more pods than replicas (a scale-down
//                     deletes the surplus regardless of maxUnavailable), the pod was named in podsToDelete / labelled
//                     specified-delete (the user asked), or the controller has not observed the current generation.
//   duplicate-id      two live pods of one CloneSet with the same apps.kruise.io/cloneset-instance-id.
//   pvc-lost          a PVC deleted while a live pod of its CloneSet with its instance id, created before the
//                     deletion, still exists 3 s later (the watch streams of pods and PVCs are not ordered).
//   pvc-orphaned      (checked at convergence, see `convergence`) a PVC without a live pod when PVC reuse is off.
//   non-leader-write  see bench/chaos-audit.ts (the audit log against the Lease history kept here).
import type { CloneSet, IntOrString } from '../src/api/cloneset.ts';
import { LABEL_INSTANCE_ID, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH, LABEL_SPECIFIED_DELETE } from '../src/api/well-known.ts';
import { partitionAbs, scaledValue } from '../src/cloneset/plan/int-or-percent.ts';
import type { KubeClient, WatchEvent } from '../src/kube/client.ts';
import { CLONESETS, LEASES, PODS, PVCS, type ResourceRef } from '../src/kube/resources.ts';
import type { KubeObject, PersistentVolumeClaim, Pod } from '../src/kube/types.ts';

const DEFAULT_MAX_UNAVAILABLE = '20%';

export interface Violation {
  readonly at: number;
  readonly kind: 'too-many-pods' | 'too-unavailable' | 'duplicate-id' | 'pvc-lost' | 'pvc-orphaned' | 'non-leader-write' | 'no-convergence';
  readonly detail: string;
}

/** One leader's tenure as the Lease watch saw it (times in epoch ms, from the Lease's own MicroTimes). */
export interface LeaseTerm {
  readonly holder: string;
  readonly acquiredAt: number;
  lastRenewAt: number;
  leaseDurationMs: number;
  /** the successor's acquireTime, or the release's renewTime; undefined while it lasts */
  endedAt?: number;
}

export const isLive = (p: Pod): boolean => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded';
export const isReady = (p: Pod): boolean => isLive(p) && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const ownerName = (o: KubeObject): string | undefined => o.metadata?.ownerReferences?.find((r) => r.kind === 'CloneSet')?.name;

/**
 * List then watch `r` in `ns`, resuming after every stream end (410 → relist), until `signal` aborts. A list goes
 * to `onList` whole (the state at one moment), watch events to `onEvent` one by one.
 */
export async function follow(client: KubeClient, r: ResourceRef, ns: string, onEvent: (e: WatchEvent) => void, onList: (items: readonly KubeObject[]) => void, signal: AbortSignal): Promise<void> {
  let rv = '';
  while (!signal.aborted) {
    try {
      if (rv === '') {
        const list = await client.list<KubeObject>(r, ns);
        onList(list.items);
        rv = list.metadata.resourceVersion ?? '';
      }
      await client.watch(r, ns, { resourceVersion: rv, timeoutSeconds: 60, allowWatchBookmarks: true }, (e) => {
        if (e.type === 'ERROR') {
          rv = '';
          return;
        }
        rv = e.object.metadata?.resourceVersion ?? rv;
        if (e.type !== 'BOOKMARK') onEvent(e);
      }, signal);
    } catch {
      if (signal.aborted) return;
      rv = ''; // the API server restarted, or 410 Gone
      await new Promise((res) => setTimeout(res, 300));
    }
  }
}

/**
 * Applies a list (at the start, and again after the watch was lost: an API server restart) to `m` whole, and
 * returns each change it made as [before, after], to be judged against the map as the list left it. A list is the
 * state at one moment, not the order of the changes it folds together: judged one at a time against a half-applied
 * list, a pod deleted after its replacement became Ready looked like two unavailable pods at once (the removal was
 * judged before the replacement's update was applied; found by `npm run chaos`).
 */
export function applyList<T extends KubeObject>(m: Map<string, T>, items: readonly T[]): [T | undefined, T | undefined][] {
  const listed = new Map(items.map((o) => [o.metadata?.name ?? '', o]));
  const changes: [T | undefined, T | undefined][] = [];
  for (const [k, v] of m) if (!listed.has(k)) changes.push([v, undefined]);
  for (const [k, v] of listed) changes.push([m.get(k), v]);
  for (const [k] of m) if (!listed.has(k)) m.delete(k);
  for (const [k, v] of listed) m.set(k, v);
  return changes;
}

interface Bounds {
  readonly replicas: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

function boundsOf(cs: CloneSet): Bounds {
  const r = cs.spec.replicas ?? 1;
  const us = cs.spec.updateStrategy;
  const maxSurge = us?.maxSurge !== undefined && us.paused !== true ? scaledValue(us.maxSurge, r, true) : 0;
  const mu: IntOrString = us?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE;
  return { replicas: r, maxSurge, maxUnavailable: scaledValue(mu, r, maxSurge === 0) };
}

export class InvariantChecker {
  readonly pods = new Map<string, Pod>();
  readonly pvcs = new Map<string, PersistentVolumeClaim>();
  readonly cloneSets = new Map<string, CloneSet>();
  readonly terms: LeaseTerm[] = [];
  readonly violations: Violation[] = [];
  /** per CloneSet: bounds per generation, to know what the controller may still be acting on */
  readonly #bounds = new Map<string, Map<number, Bounds>>();
  readonly #seen = new Set<string>();
  readonly #leaseName: string;
  readonly #signal: AbortSignal;
  readonly #log: (m: string) => void;

  constructor(client: KubeClient, ns: string, leaseName: string, signal: AbortSignal, log: (m: string) => void) {
    this.#leaseName = leaseName;
    this.#signal = signal;
    this.#log = log;
    const relist = <T extends KubeObject>(m: Map<string, T>, judge: (before: T | undefined, after: T | undefined) => void) => (items: readonly KubeObject[]): void => {
      for (const [before, after] of applyList(m, items as readonly T[])) judge(before, after);
    };
    void follow(client, CLONESETS, ns, (e) => this.#onCloneSet(e), (items) => { for (const object of items) this.#onCloneSet({ type: 'ADDED', object }); }, signal);
    void follow(client, PODS, ns, (e) => this.#onPod(e), relist(this.pods, (before, after) => this.#podSeen(before, after)), signal);
    void follow(client, PVCS, ns, (e) => this.#onPvc(e), relist(this.pvcs, (before, after) => {
      // as #onPvc: judged once, when it starts terminating or, if never seen terminating, when it is gone
      if (after === undefined) {
        if (before !== undefined && before.metadata.deletionTimestamp === undefined) this.#pvcDeleted(before);
      } else if (after.metadata.deletionTimestamp !== undefined && before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(after);
    }), signal);
    void follow(client, LEASES, ns, (e) => this.#onLease(e), (items) => { for (const object of items) this.#onLease({ type: 'ADDED', object }); }, signal);
  }

  #violate(kind: Violation['kind'], detail: string): void {
    const key = `${kind}:${detail}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.violations.push({ at: Date.now(), kind, detail });
    this.#log(`VIOLATION ${kind}: ${detail}`);
  }

  #onCloneSet(e: WatchEvent): void {
    if (e.type === 'ERROR' || e.type === 'BOOKMARK') return;
    const cs = e.object as CloneSet;
    const name = cs.metadata.name ?? '';
    if (e.type === 'DELETED') {
      this.cloneSets.delete(name);
      return;
    }
    this.cloneSets.set(name, cs);
    const byGen = this.#bounds.get(name) ?? new Map<number, Bounds>();
    byGen.set(cs.metadata.generation ?? 0, boundsOf(cs));
    this.#bounds.set(name, byGen);
  }

  /** The generations the controller may still be acting on: from the last it reported observing to the newest. */
  #boundsInFlight(cs: CloneSet): Bounds[] {
    const byGen = this.#bounds.get(cs.metadata.name ?? '') ?? new Map<number, Bounds>();
    const from = cs.status?.observedGeneration ?? 0;
    const out = [...byGen.entries()].filter(([g]) => g >= from).map(([, b]) => b);
    return out.length > 0 ? out : [boundsOf(cs)];
  }

  /** replicas + maxSurge of the generations that arrived after `then` (the CloneSet as it was known earlier). */
  #boundsSeenSince(latest: CloneSet, then: CloneSet): number[] {
    const byGen = this.#bounds.get(latest.metadata.name ?? '') ?? new Map<number, Bounds>();
    const after = then.metadata.generation ?? 0;
    return [...byGen.entries()].filter(([g]) => g > after).map(([, b]) => b.replicas + b.maxSurge);
  }

  #userDeleted(cs: CloneSet, p: Pod): boolean {
    const name = p.metadata.name ?? '';
    return (cs.spec.scaleStrategy?.podsToDelete ?? []).includes(name) || p.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined;
  }

  podsOf(cs: string): Pod[] {
    return [...this.pods.values()].filter((p) => ownerName(p) === cs);
  }

  /** Per pod uid: when this checker first saw it, and first saw it bound to a node (the kube-scheduler's part). */
  readonly #binding = new Map<string, { readonly seenAt: number; boundAt: number | undefined }>();

  #trackBinding(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const now = Date.now();
    const b = this.#binding.get(uid) ?? { seenAt: now, boundAt: undefined };
    if (b.boundAt === undefined && pod.spec.nodeName !== undefined) b.boundAt = now;
    this.#binding.set(uid, b);
  }

  /**
   * How long, within [from, to], the CloneSets' live pods waited for the kube-scheduler (created, not yet bound):
   * the longest such wait. Not the controller's time: after an API server or etcd restart the local
   * kube-scheduler's informers back off (client-go's reflector, up to 30 s, reset only after 2 quiet minutes), and
   * the pods the controller created meanwhile wait unbound (found by `npm run chaos`).
   */
  schedulerWaitMs(from: number, to: number): number {
    let longest = 0;
    for (const pod of this.pods.values()) {
      const b = isLive(pod) ? this.#binding.get(pod.metadata.uid ?? '') : undefined;
      if (b === undefined) continue;
      const start = Math.max(from, b.seenAt);
      const end = Math.min(to, b.boundAt ?? to);
      longest = Math.max(longest, end - start);
    }
    return longest;
  }

  #onPod(e: WatchEvent): void {
    if (e.type === 'ERROR' || e.type === 'BOOKMARK') return;
    const pod = e.object as Pod;
    const name = pod.metadata.name ?? '';
    const before = this.pods.get(name);
    if (e.type === 'DELETED') this.pods.delete(name);
    else this.pods.set(name, pod);
    this.#podSeen(before, e.type === 'DELETED' ? undefined : pod);
  }

  /** A pod change already applied to `pods` (a watch event or a list): binding times, then the invariants. */
  #podSeen(before: Pod | undefined, after: Pod | undefined): void {
    if (after === undefined) this.#binding.delete(before?.metadata.uid ?? '');
    else this.#trackBinding(after);
    this.#podChanged(before, after);
  }

  #podChanged(before: Pod | undefined, after: Pod | undefined): void {
    const pod = after ?? before;
    if (pod === undefined) return;
    const csName = ownerName(pod);
    const cs = csName === undefined ? undefined : this.cloneSets.get(csName);
    if (cs === undefined || csName === undefined) return;
    const pods = this.podsOf(csName);

    if (before === undefined && after !== undefined) {
      const counted = pods.filter((p) => isLive(p) && p.metadata.labels?.[LABEL_LIFECYCLE_STATE] !== 'PreparingDelete' && !this.#userDeleted(cs, p));
      const bound = Math.max(...this.#boundsInFlight(cs).map((b) => b.replicas + b.maxSurge));
      if (counted.length > bound) {
        // The pod and CloneSet watches are separate streams with no order between them: the pod may arrive before
        // the scale-up that allowed it. Judge again once the CloneSet stream has had time to catch up.
        const podName = after.metadata.name ?? '';
        const timer = setTimeout(() => {
          const latest = this.cloneSets.get(csName) ?? cs;
          const later = Math.max(bound, ...this.#boundsInFlight(latest).map((b) => b.replicas + b.maxSurge), ...this.#boundsSeenSince(latest, cs));
          if (counted.length > later) this.#violate('too-many-pods', `${csName}: pod ${podName} created with ${counted.length} pods counted > replicas + maxSurge = ${later}`);
        }, 2000);
        timer.unref();
      }
    }

    if (before !== undefined && isReady(before) && (after === undefined || !isReady(after))) {
      const b = boundsOf(cs);
      const live = pods.filter(isLive);
      const observed = cs.status?.observedGeneration === cs.metadata.generation;
      const liveBefore = live.length + (after === undefined || !isLive(after) ? 1 : 0);
      if (observed && liveBefore <= b.replicas && !this.#userDeleted(cs, before)) {
        const unavailable = b.replicas - live.filter(isReady).length;
        if (unavailable > b.maxUnavailable) {
          this.#violate('too-unavailable', `${csName}: pod ${before.metadata.name ?? ''} made unavailable with ${unavailable} unavailable > maxUnavailable ${b.maxUnavailable} (replicas ${b.replicas})`);
        }
      }
    }

    const ids = new Map<string, string>();
    for (const p of pods) {
      if (!isLive(p)) continue;
      const id = p.metadata.labels?.[LABEL_INSTANCE_ID];
      if (id === undefined) continue;
      const other = ids.get(id);
      if (other !== undefined) this.#violate('duplicate-id', `${csName}: pods ${other} and ${p.metadata.name ?? ''} share instance id ${id}`);
      ids.set(id, p.metadata.name ?? '');
    }
  }

  #onPvc(e: WatchEvent): void {
    if (e.type === 'ERROR' || e.type === 'BOOKMARK') return;
    const pvc = e.object as PersistentVolumeClaim;
    const name = pvc.metadata.name ?? '';
    const before = this.pvcs.get(name);
    if (e.type === 'DELETED') {
      this.pvcs.delete(name);
      if (before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(pvc);
      return;
    }
    this.pvcs.set(name, pvc);
    if (pvc.metadata.deletionTimestamp !== undefined && before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(pvc);
  }

  #pvcDeleted(pvc: PersistentVolumeClaim): void {
    const cs = ownerName(pvc);
    const id = pvc.metadata.labels?.[LABEL_INSTANCE_ID];
    if (cs === undefined || id === undefined) return;
    const deletedAt = Date.now();
    const timer = setTimeout(() => {
      if (this.#signal.aborted) return;
      const owner = this.podsOf(cs).find((p) => isLive(p) && p.metadata.labels?.[LABEL_INSTANCE_ID] === id
        && Date.parse(p.metadata.creationTimestamp ?? '') <= deletedAt - 1000);
      if (owner !== undefined) this.#violate('pvc-lost', `${cs}: PVC ${pvc.metadata.name ?? ''} deleted while pod ${owner.metadata.name ?? ''} (instance id ${id}) lives`);
    }, 3000);
    timer.unref();
  }

  #onLease(e: WatchEvent): void {
    if (e.type !== 'ADDED' && e.type !== 'MODIFIED') return;
    const lease = e.object as { metadata: { name?: string }; spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string; leaseDurationSeconds?: number } };
    if (lease.metadata.name !== this.#leaseName) return;
    const s = lease.spec ?? {};
    const holder = s.holderIdentity ?? '';
    const renew = Date.parse(s.renewTime ?? '');
    const acquired = Date.parse(s.acquireTime ?? '');
    const current = this.terms.at(-1);
    if (holder === '') {
      if (current !== undefined && current.endedAt === undefined) current.endedAt = Number.isNaN(renew) ? Date.now() : renew;
      return;
    }
    if (current !== undefined && current.endedAt === undefined && current.holder === holder) {
      if (!Number.isNaN(renew)) current.lastRenewAt = Math.max(current.lastRenewAt, renew);
      current.leaseDurationMs = (s.leaseDurationSeconds ?? 15) * 1000;
      return;
    }
    const at = Number.isNaN(acquired) ? Date.now() : acquired;
    if (current !== undefined && current.endedAt === undefined) current.endedAt = at;
    this.terms.push({ holder, acquiredAt: at, lastRenewAt: Number.isNaN(renew) ? at : renew, leaseDurationMs: (s.leaseDurationSeconds ?? 15) * 1000 });
    this.#log(`lease: ${holder} leads (acquired ${new Date(at).toISOString()})`);
  }

  /** Why the CloneSets are not yet converged (empty = converged): the status and the pods agree with the spec. */
  convergence(): string[] {
    const why: string[] = [];
    for (const [name, cs] of this.cloneSets) {
      const r = cs.spec.replicas ?? 1;
      const s = cs.status;
      const pods = this.podsOf(name);
      const live = pods.filter(isLive);
      if (s === undefined || s.observedGeneration !== cs.metadata.generation) {
        why.push(`${name}: generation ${cs.metadata.generation ?? 0} not observed (${s?.observedGeneration ?? 0})`);
        continue;
      }
      const wantUpdated = r - partitionAbs(cs.spec.updateStrategy?.partition, r);
      const updated = live.filter((p) => p.metadata.labels?.[LABEL_REVISION_HASH] === s.updateRevision).length;
      if (live.length !== r || pods.length !== live.length) {
        const states = [...new Set(live.map((p) => p.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? 'no state'))].join('/');
        why.push(`${name}: ${live.length} live pods (${states}) of ${pods.length}, want ${r}`);
      }
      else if (live.some((p) => !isReady(p))) {
        // phase and node say whose turn it is: unscheduled = the scheduler, Pending on a node = the kubelet (KWOK)
        const notReady = live.filter((p) => !isReady(p)).map((p) => `${p.metadata.name ?? ''} ${p.status?.phase ?? '?'}${p.spec.nodeName === undefined ? ' unscheduled' : ''}`);
        why.push(`${name}: pods not Ready (${notReady.join(', ')})`);
      }
      else if (updated < wantUpdated) why.push(`${name}: ${updated} pods updated, want ≥ ${wantUpdated}`);
      else if (s.replicas !== r || s.readyReplicas !== r || s.updatedReplicas !== updated || s.updatedReadyReplicas !== updated) {
        why.push(`${name}: status replicas/ready/updated/updatedReady ${s.replicas}/${s.readyReplicas}/${s.updatedReplicas}/${s.updatedReadyReplicas}, pods say ${r}/${r}/${updated}/${updated}`);
      }
      if (cs.spec.scaleStrategy?.disablePVCReuse === true && (cs.spec.volumeClaimTemplates ?? []).length > 0) {
        const ids = new Set(live.map((p) => p.metadata.labels?.[LABEL_INSTANCE_ID]));
        const orphans = [...this.pvcs.values()].filter((c) => ownerName(c) === name && c.metadata.deletionTimestamp === undefined && !ids.has(c.metadata.labels?.[LABEL_INSTANCE_ID]));
        if (orphans.length > 0) why.push(`${name}: orphaned PVCs ${orphans.map((c) => c.metadata.name ?? '').join(', ')}`);
      }
    }
    return why;
  }

  /** Records a convergence failure: an orphaned PVC is its own kind of violation. */
  failConvergence(why: readonly string[], after: string): void {
    for (const w of why) this.#violate(w.includes('orphaned PVCs') ? 'pvc-orphaned' : 'no-convergence', `${w} (after ${after})`);
  }

  /** The leader at `t`, by the Lease history. */
  leaderAt(t: number): LeaseTerm | undefined {
    return this.terms.find((x) => x.acquiredAt <= t && (x.endedAt === undefined || t < x.endedAt));
  }
}
