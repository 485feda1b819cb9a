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
//   pvc-lost          a PVC deleted while a live pod of its CloneSet with its instance id exists.
//   pvc-orphaned      (checked at convergence, see `convergence`) a PVC without a live pod when PVC reuse is off.
//   non-leader-write  see bench/chaos-audit.ts (the audit log against the Lease history kept here).
//
// Every change is judged against the world as of its own resourceVersion (bench/chaos-order.ts): a pod change
// against the CloneSet's newest version at or below it, once the CloneSet stream has passed it (in the gap a relist
// leaves, against the versions before and after it); a PVC deletion against the pods live at its resourceVersion,
// once the pod stream has passed it. No fixed delays.
import type { CloneSet, IntOrString } from '../src/api/cloneset.ts';
import { LABEL_INSTANCE_ID, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH, LABEL_SPECIFIED_DELETE } from '../src/api/well-known.ts';
import { partitionAbs, scaledValue } from '../src/cloneset/plan/int-or-percent.ts';
import type { KubeClient, WatchEvent } from '../src/kube/client.ts';
import { CLONESETS, LEASES, PODS, PVCS, type ResourceRef } from '../src/kube/resources.ts';
import type { KubeObject, PersistentVolumeClaim, Pod } from '../src/kube/types.ts';
import { HoldQueue, StreamPosition, rvNumber, rvOf } from './chaos-order.ts';

const DEFAULT_MAX_UNAVAILABLE = '20%';
/**
 * The longest a change waits for the other stream to pass its resourceVersion (a stream down: API server restart).
 * On the loaded 2-core machine a restarted API server served CloneSets again 11–17.5 s after its start (median
 * 13.5 s over 26 restarts, its log's start to "Adding GroupVersion apps.kruise.io"), and the pod stream seconds
 * before that: a shorter bound releases the pod changes of those seconds unordered, against a CloneSet stream still
 * down, where waiting for its relist orders them.
 */
export const HOLD_BOUND_MS = 30_000;
/**
 * A proof by list of one stream's position (chaos-order.ts `StreamPosition.prove`) is asked for once a change has
 * waited this long (the stream itself usually passes it first: the controller writes CloneSet status after most pod
 * changes), and at most once per interval: a few lists a second at most, on a 2-core machine shared with the run.
 */
const PROBE_AFTER_MS = 50;
const PROBE_INTERVAL_MS = 200;

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
 * to `onList` whole (the state at its resourceVersion), watch events to `onEvent` one by one, bookmarks (asked for)
 * to `onBookmark`.
 */
export async function follow(
  client: KubeClient,
  r: ResourceRef,
  ns: string,
  onEvent: (e: WatchEvent) => void,
  onList: (items: readonly KubeObject[], rv: string) => void,
  signal: AbortSignal,
  onBookmark?: (rv: string) => void,
): Promise<void> {
  let rv = '';
  while (!signal.aborted) {
    try {
      if (rv === '') {
        const list = await client.list<KubeObject>(r, ns);
        rv = list.metadata.resourceVersion ?? '';
        onList(list.items, rv);
      }
      await client.watch(
        r,
        ns,
        { resourceVersion: rv, timeoutSeconds: 60, allowWatchBookmarks: true },
        (e) => {
          if (e.type === 'ERROR') {
            rv = '';
            return;
          }
          rv = e.object.metadata?.resourceVersion ?? rv;
          if (e.type === 'BOOKMARK') onBookmark?.(rv);
          else onEvent(e);
        },
        signal,
      );
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

/**
 * One version of a CloneSet (undefined: deleted) from `rv` on. A version that came from a relist and differs from
 * the last one the stream delivered has `gapAfter`, the stream's position before the list: the CloneSet changed
 * somewhere in (gapAfter, rv], at resourceVersions the checker does not know (the watch was lost).
 */
interface Version {
  readonly rv: number;
  readonly cs: CloneSet | undefined;
  readonly gapAfter?: number;
}

/**
 * The CloneSet as of a resourceVersion: `known`, its newest version at or below it, and `gap`, the version a relist
 * brought after it when the resourceVersion falls in that relist's gap (the CloneSet may already have been it).
 */
export interface CloneSetAt {
  readonly known: CloneSet | undefined;
  readonly gap: CloneSet | undefined;
}

/** A pod's life as far as PVCs care: live (not terminating, not finished) from `from` until `to` (resourceVersions). */
interface PodLife {
  readonly name: string;
  readonly from: number;
  to: number | undefined;
}

/** Where a fresh list for a stream's proof comes from (the checker's client; a test may leave it out). */
export type ListFresh = (r: ResourceRef) => Promise<{ items: readonly KubeObject[]; resourceVersion: string }>;

export interface CheckerOptions {
  readonly leaseName: string;
  readonly signal: AbortSignal;
  readonly log: (m: string) => void;
  readonly listFresh?: ListFresh;
  readonly holdBoundMs?: number;
  readonly now?: () => number;
}

export class InvariantChecker {
  /** pods as of the last pod change judged (in resourceVersion order, behind the pod stream by the hold) */
  readonly pods = new Map<string, Pod>();
  readonly pvcs = new Map<string, PersistentVolumeClaim>();
  /** the newest version of each CloneSet */
  readonly cloneSets = new Map<string, CloneSet>();
  readonly terms: LeaseTerm[] = [];
  readonly violations: Violation[] = [];
  readonly cloneSetStream = new StreamPosition();
  readonly podStream = new StreamPosition();
  /** pod changes waiting for the CloneSet stream, PVC changes waiting for the pod stream */
  readonly podHold: HoldQueue;
  readonly pvcHold: HoldQueue;
  /** per CloneSet: its versions by resourceVersion, from the oldest a held pod change may still need */
  readonly #history = new Map<string, Version[]>();
  /** per CloneSet: bounds per generation and the resourceVersion that brought the generation */
  readonly #bounds = new Map<string, Map<number, { readonly bounds: Bounds; readonly rv: number }>>();
  /** per CloneSet and instance id: the lives of its pods by uid (recorded as the pod stream delivers them) */
  readonly #lives = new Map<string, Map<string, PodLife>>();
  readonly #seen = new Set<string>();
  readonly #leaseName: string;
  readonly #log: (m: string) => void;
  readonly #now: () => number;
  readonly #holdBoundMs: number;

  constructor(opts: CheckerOptions) {
    this.#leaseName = opts.leaseName;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    const boundMs = opts.holdBoundMs ?? HOLD_BOUND_MS;
    this.#holdBoundMs = boundMs;
    const prober = (r: ResourceRef, pos: StreamPosition, queue: () => HoldQueue): ((rv: number) => void) => {
      const list = opts.listFresh;
      if (list === undefined) return () => undefined;
      let busy = false;
      let last = 0;
      let told = Number.NaN;
      /** a change held past half the bound: why the list did not prove it, once per change (the run's log) */
      const tell = (rv: number, why: string): void => {
        if (told === rv) return;
        told = rv;
        this.#log(`checker: ${r.plural} stream not yet proven past resourceVersion ${String(rv)} (at ${String(pos.passed)}): ${why}`);
      };
      return (rv: number) => {
        if (busy) return;
        busy = true;
        const timer = setTimeout(
          () => {
            if (queue().pending === 0 || opts.signal.aborted) {
              busy = false; // the stream passed the held changes meanwhile
              return;
            }
            last = this.#now();
            const asked = this.#now();
            list(r)
              .then(
                (l) => {
                  if (pos.prove(l.items, rvNumber(l.resourceVersion)) || this.#now() - queue().heldSince < boundMs / 2) return;
                  const listed = l.items.map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`).join(' ');
                  const seen = [...pos.latest].map(([n, v]) => `${n}@${String(v)}`).join(' ');
                  tell(rv, `a list at ${l.resourceVersion} after ${String(this.#now() - asked)} ms holds ${listed}; the stream delivered ${seen}`);
                },
                (e: unknown) => {
                  if (this.#now() - queue().heldSince >= boundMs / 2) tell(rv, `the list failed: ${e instanceof Error ? e.message : String(e)}`);
                },
              )
              .finally(() => {
                busy = false;
                queue().pump();
              });
          },
          Math.max(PROBE_AFTER_MS, last + PROBE_INTERVAL_MS - this.#now()),
        );
        timer.unref();
      };
    };
    const unordered =
      (what: string, gate: string) =>
      (rv: number, passed: number): void =>
        this.#log(`checker: ${what} at resourceVersion ${String(rv)} judged after ${String(boundMs / 1000)} s without the ${gate} stream passing it (at ${String(passed)})`);
    this.podHold = new HoldQueue(this.cloneSetStream, {
      boundMs,
      now: this.#now,
      signal: opts.signal,
      probe: prober(CLONESETS, this.cloneSetStream, () => this.podHold),
      onUnordered: unordered('pod change', 'CloneSet'),
    });
    this.pvcHold = new HoldQueue(this.podStream, {
      boundMs,
      now: this.#now,
      signal: opts.signal,
      probe: prober(PODS, this.podStream, () => this.pvcHold),
      onUnordered: unordered('PVC deletion', 'pod'),
    });
  }

  /** A checker fed by its own watches of `ns` through `client`. */
  static watch(client: KubeClient, ns: string, leaseName: string, signal: AbortSignal, log: (m: string) => void): InvariantChecker {
    const listFresh: ListFresh = async (r) => {
      const l = await client.list<KubeObject>(r, ns);
      return { items: l.items, resourceVersion: l.metadata.resourceVersion ?? '' };
    };
    const c = new InvariantChecker({ leaseName, signal, log, listFresh });
    void follow(
      client,
      CLONESETS,
      ns,
      (e) => c.cloneSetEvent(e),
      (items, rv) => c.cloneSetList(items, rv),
      signal,
      (rv) => c.cloneSetBookmark(rv),
    );
    void follow(
      client,
      PODS,
      ns,
      (e) => c.podEvent(e),
      (items, rv) => c.podList(items, rv),
      signal,
      (rv) => c.podBookmark(rv),
    );
    void follow(
      client,
      PVCS,
      ns,
      (e) => c.pvcEvent(e),
      (items, rv) => c.pvcList(items, rv),
      signal,
    );
    void follow(
      client,
      LEASES,
      ns,
      (e) => c.leaseEvent(e),
      (items) => {
        for (const object of items) c.leaseEvent({ type: 'ADDED', object });
      },
      signal,
    );
    return c;
  }

  #violate(kind: Violation['kind'], detail: string): void {
    const key = `${kind}:${detail}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.violations.push({ at: this.#now(), kind, detail });
    this.#log(`VIOLATION ${kind}: ${detail}`);
  }

  // ---- the CloneSet stream: recorded at once, as versions by resourceVersion

  cloneSetEvent(e: WatchEvent): void {
    if (e.type === 'ERROR') return;
    if (e.type === 'BOOKMARK') {
      this.cloneSetBookmark(e.object.metadata?.resourceVersion ?? '');
      return;
    }
    const cs = e.object as CloneSet;
    this.#recordCloneSet(cs.metadata.name ?? '', rvOf(cs), e.type === 'DELETED' ? undefined : cs);
    this.cloneSetStream.event(e.type, cs);
    this.podHold.pump();
  }

  cloneSetBookmark(rv: string): void {
    this.cloneSetStream.bookmark(rvNumber(rv));
    this.podHold.pump();
  }

  /** A list after a lost watch: what it no longer holds was deleted at some point up to its resourceVersion. */
  cloneSetList(items: readonly KubeObject[], rv: string): void {
    const listed = new Set<string>();
    const gapAfter = this.cloneSetStream.passed;
    const changed: string[] = [];
    for (const o of items) {
      const cs = o as CloneSet;
      const name = cs.metadata.name ?? '';
      listed.add(name);
      if (this.cloneSetStream.latest.get(name) === rvOf(cs)) continue;
      const was = this.cloneSets.get(name)?.metadata.generation;
      changed.push(`${name}@${String(rvOf(cs))} (generation ${was === undefined ? '' : `${String(was)} → `}${String(cs.metadata.generation ?? 0)})`);
      this.#recordCloneSet(name, rvOf(cs), cs, gapAfter);
    }
    if (gapAfter > 0)
      this.#log(`checker: clonesets relisted at resourceVersion ${rv} (the stream was at ${String(gapAfter)}); changed in the gap: ${changed.join(', ') || 'none'}`);
    for (const name of [...this.cloneSets.keys()]) if (!listed.has(name)) this.#recordCloneSet(name, rvNumber(rv), undefined);
    this.cloneSetStream.list(items, rvNumber(rv));
    this.podHold.pump();
  }

  #recordCloneSet(name: string, rv: number, cs: CloneSet | undefined, gapAfter?: number): void {
    const versions = this.#history.get(name) ?? [];
    versions.push(gapAfter === undefined ? { rv, cs } : { rv, cs, gapAfter });
    this.#history.set(name, versions);
    if (cs === undefined) {
      this.cloneSets.delete(name);
      return;
    }
    this.cloneSets.set(name, cs);
    const byGen = this.#bounds.get(name) ?? new Map<number, { bounds: Bounds; rv: number }>();
    const gen = cs.metadata.generation ?? 0;
    if (!byGen.has(gen)) byGen.set(gen, { bounds: boundsOf(cs), rv });
    this.#bounds.set(name, byGen);
  }

  /**
   * The CloneSet `name` as of `rv`: its newest version at or below it (the oldest known when the checker started
   * after `rv`) and, if `rv` falls in the gap of the relist that brought the next version, that one too. A relist
   * (after the watch was lost: an API server restart) shows where the CloneSet ended up, not when it changed: after
   * a restart the checker's pod stream delivered a pod the controller created for a scale-up from 11 to 12, then
   * its CloneSet stream relisted the CloneSet at its status write after the create, so the newest version at or
   * below the create was the one before the scale-up (found by `npm run chaos`: `too-many-pods … 12 pods counted >
   * replicas + maxSurge = 11`). Versions older than the newest at or below `rv` are dropped: pod changes are
   * judged in resourceVersion order.
   */
  cloneSetAt(name: string, rv: number): CloneSetAt {
    const versions = this.#history.get(name);
    if (versions === undefined || versions.length === 0) return { known: undefined, gap: undefined };
    let i = 0;
    while (i + 1 < versions.length && (versions[i + 1]?.rv ?? Infinity) <= rv) i++;
    versions.splice(0, i);
    const next = versions[1];
    const inGap = next?.gapAfter !== undefined && next.gapAfter < rv;
    return { known: versions[0]?.cs, gap: inGap ? next.cs : undefined };
  }

  /** The generations the controller may still be acting on at `rv`: from the last it reported observing to the newest. */
  #boundsInFlight(cs: CloneSet, rv: number): Bounds[] {
    const byGen = this.#bounds.get(cs.metadata.name ?? '') ?? new Map<number, { bounds: Bounds; rv: number }>();
    const from = cs.status?.observedGeneration ?? 0;
    const to = cs.metadata.generation ?? 0;
    const out = [...byGen.entries()].filter(([g, b]) => g >= from && g <= to && b.rv <= rv).map(([, b]) => b.bounds);
    return out.length > 0 ? out : [boundsOf(cs)];
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
    const now = this.#now();
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

  // ---- the pod stream: lives and binding times recorded at once, changes judged when the CloneSet stream passed them

  podEvent(e: WatchEvent): void {
    if (e.type === 'ERROR') return;
    if (e.type === 'BOOKMARK') {
      this.podBookmark(e.object.metadata?.resourceVersion ?? '');
      return;
    }
    const pod = e.object as Pod;
    const rv = rvOf(pod);
    const gone = e.type === 'DELETED';
    if (gone) this.#binding.delete(pod.metadata.uid ?? '');
    else this.#trackBinding(pod);
    this.#recordLife(pod, rv, gone);
    this.podStream.event(e.type, pod);
    this.pvcHold.pump();
    this.podHold.push(rv, (ordered) => {
      const name = pod.metadata.name ?? '';
      const before = this.pods.get(name);
      if (gone) this.pods.delete(name);
      else this.pods.set(name, pod);
      this.#podChanged(before, gone ? undefined : pod, rv, ordered);
    });
  }

  podBookmark(rv: string): void {
    this.podStream.bookmark(rvNumber(rv));
    this.pvcHold.pump();
  }

  podList(items: readonly KubeObject[], rv: string): void {
    const at = rvNumber(rv);
    const pods = items as readonly Pod[];
    const listed = new Set(pods.map((p) => p.metadata.uid ?? ''));
    // A life the list shows ended (the watch was lost: an API server restart) ended somewhere after the stream's
    // position, at a resourceVersion the checker does not know: the earliest is taken, so that a PVC deletion in
    // the gap is not held against a pod that may already have been gone.
    const endedBy = this.podStream.passed + 1;
    for (const p of pods) {
      this.#trackBinding(p);
      this.#recordLife(p, rvOf(p), false, endedBy);
    }
    for (const lives of this.#lives.values()) for (const [uid, life] of lives) if (!listed.has(uid) && life.to === undefined) life.to = Math.min(at, endedBy);
    this.podStream.list(items, at);
    this.pvcHold.pump();
    this.podHold.push(at, (ordered) => {
      for (const [before, after] of applyList(this.pods, pods)) {
        if (after === undefined) this.#binding.delete(before?.metadata.uid ?? '');
        this.#podChanged(before, after, at, ordered);
      }
    });
  }

  /**
   * A pod is live from the resourceVersion it was first seen live at to the one it was first seen not live at, or
   * `endedBy` if that is earlier (seen in a list: it may have ended at any point of the gap before it).
   */
  #recordLife(pod: Pod, rv: number, gone: boolean, endedBy = rv): void {
    const cs = ownerName(pod);
    const id = pod.metadata.labels?.[LABEL_INSTANCE_ID];
    if (cs === undefined || id === undefined) return;
    const key = `${cs}/${id}`;
    const lives = this.#lives.get(key) ?? new Map<string, PodLife>();
    this.#lives.set(key, lives);
    const uid = pod.metadata.uid ?? '';
    const life = lives.get(uid);
    if (!gone && isLive(pod)) {
      if (life === undefined) lives.set(uid, { name: pod.metadata.name ?? '', from: rv, to: undefined });
    } else if (life !== undefined && life.to === undefined) life.to = Math.min(rv, endedBy);
  }

  /**
   * Judges a pod change at `rv` against the CloneSet as of `rv`. `ordered` false: the CloneSet stream did not pass
   * `rv` within the hold bound, so the CloneSet may be missing its last versions; a violation says so. In a relist's
   * gap the CloneSet was its last version before the gap or (already) the listed one, so the change is judged
   * against both, and a violation is one only against both: the spec lets the controller act on either.
   */
  #podChanged(before: Pod | undefined, after: Pod | undefined, rv: number, ordered: boolean): void {
    const pod = after ?? before;
    if (pod === undefined) return;
    const csName = ownerName(pod);
    if (csName === undefined) return;
    const { known: cs, gap } = this.cloneSetAt(csName, rv);
    if (cs === undefined) return;
    const pods = this.podsOf(csName);
    const inFlight = this.#boundsInFlight(cs, rv);
    const observed = (c: CloneSet): boolean => c.status?.observedGeneration === c.metadata.generation;
    // the listed version's generation may have been written before `rv` and not yet observed by then
    const views: { readonly cs: CloneSet; readonly inFlight: readonly Bounds[]; readonly observed: boolean }[] = [{ cs, inFlight, observed: observed(cs) }];
    if (gap !== undefined) {
      views.push({ cs: gap, inFlight: [...inFlight, boundsOf(gap)], observed: observed(gap) && gap.metadata.generation === cs.metadata.generation });
    }
    /** reported when every view finds it, with the last view's figures (the most permissive) */
    const violate = (kind: Violation['kind'], found: readonly (string | undefined)[]): void => {
      const detail = found.at(-1);
      if (detail === undefined || found.some((d) => d === undefined)) return;
      const across =
        gap === undefined || kind === 'duplicate-id'
          ? ''
          : ` [judged across a relist of the CloneSet stream: its versions at resourceVersions ${cs.metadata.resourceVersion ?? '?'} and ${gap.metadata.resourceVersion ?? '?'}]`;
      const unordered = ordered ? '' : ` [judged unordered: the CloneSet stream had not passed resourceVersion ${String(rv)} within ${String(this.#holdBoundMs / 1000)} s]`;
      this.#violate(kind, `${detail}${across}${unordered}`);
    };

    if (before === undefined && after !== undefined) {
      violate(
        'too-many-pods',
        views.map((v) => {
          const counted = pods.filter((p) => isLive(p) && p.metadata.labels?.[LABEL_LIFECYCLE_STATE] !== 'PreparingDelete' && !this.#userDeleted(v.cs, p));
          const bound = Math.max(...v.inFlight.map((b) => b.replicas + b.maxSurge));
          return counted.length > bound ? `${csName}: pod ${after.metadata.name ?? ''} created with ${counted.length} pods counted > replicas + maxSurge = ${bound}` : undefined;
        }),
      );
    }

    if (before !== undefined && isReady(before) && (after === undefined || !isReady(after))) {
      const live = pods.filter(isLive);
      const liveBefore = live.length + (after === undefined || !isLive(after) ? 1 : 0);
      violate(
        'too-unavailable',
        views.map((v) => {
          const b = boundsOf(v.cs);
          if (!v.observed || liveBefore > b.replicas || this.#userDeleted(v.cs, before)) return undefined;
          const unavailable = b.replicas - live.filter(isReady).length;
          return unavailable > b.maxUnavailable
            ? `${csName}: pod ${before.metadata.name ?? ''} made unavailable with ${unavailable} unavailable > maxUnavailable ${b.maxUnavailable} (replicas ${b.replicas})`
            : undefined;
        }),
      );
    }

    const ids = new Map<string, string>();
    for (const p of pods) {
      if (!isLive(p)) continue;
      const id = p.metadata.labels?.[LABEL_INSTANCE_ID];
      if (id === undefined) continue;
      const other = ids.get(id);
      if (other !== undefined) violate('duplicate-id', [`${csName}: pods ${other} and ${p.metadata.name ?? ''} share instance id ${id}`]);
      ids.set(id, p.metadata.name ?? '');
    }
  }

  // ---- the PVC stream: a deletion judged when the pod stream passed it

  pvcEvent(e: WatchEvent): void {
    if (e.type === 'ERROR' || e.type === 'BOOKMARK') return;
    const pvc = e.object as PersistentVolumeClaim;
    const name = pvc.metadata.name ?? '';
    const before = this.pvcs.get(name);
    if (e.type === 'DELETED') {
      this.pvcs.delete(name);
      // judged once: when it starts terminating or, if never seen terminating, when it is gone
      if (before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(pvc, rvOf(pvc));
      return;
    }
    this.pvcs.set(name, pvc);
    if (pvc.metadata.deletionTimestamp !== undefined && before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(pvc, rvOf(pvc));
  }

  pvcList(items: readonly KubeObject[], rv: string): void {
    const at = rvNumber(rv);
    for (const [before, after] of applyList(this.pvcs, items as readonly PersistentVolumeClaim[])) {
      if (after === undefined) {
        if (before !== undefined && before.metadata.deletionTimestamp === undefined) this.#pvcDeleted(before, at);
      } else if (after.metadata.deletionTimestamp !== undefined && before?.metadata.deletionTimestamp === undefined) this.#pvcDeleted(after, at);
    }
  }

  #pvcDeleted(pvc: PersistentVolumeClaim, rv: number): void {
    const cs = ownerName(pvc);
    const id = pvc.metadata.labels?.[LABEL_INSTANCE_ID];
    if (cs === undefined || id === undefined) return;
    this.pvcHold.push(rv, () => {
      const owner = [...(this.#lives.get(`${cs}/${id}`)?.values() ?? [])].find((l) => l.from <= rv && (l.to === undefined || rv < l.to));
      if (owner !== undefined) this.#violate('pvc-lost', `${cs}: PVC ${pvc.metadata.name ?? ''} deleted while pod ${owner.name} (instance id ${id}) lives`);
    });
  }

  /** Whether every change seen so far has been judged (the end of a run waits for it). */
  get settled(): boolean {
    return this.podHold.pending === 0 && this.pvcHold.pending === 0;
  }

  // ---- the Lease

  leaseEvent(e: WatchEvent): void {
    if (e.type !== 'ADDED' && e.type !== 'MODIFIED') return;
    const lease = e.object as { metadata: { name?: string }; spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string; leaseDurationSeconds?: number } };
    if (lease.metadata.name !== this.#leaseName) return;
    const s = lease.spec ?? {};
    const holder = s.holderIdentity ?? '';
    const renew = Date.parse(s.renewTime ?? '');
    const acquired = Date.parse(s.acquireTime ?? '');
    const current = this.terms.at(-1);
    if (holder === '') {
      if (current !== undefined && current.endedAt === undefined) current.endedAt = Number.isNaN(renew) ? this.#now() : renew;
      return;
    }
    if (current !== undefined && current.endedAt === undefined && current.holder === holder) {
      if (!Number.isNaN(renew)) current.lastRenewAt = Math.max(current.lastRenewAt, renew);
      current.leaseDurationMs = (s.leaseDurationSeconds ?? 15) * 1000;
      return;
    }
    const at = Number.isNaN(acquired) ? this.#now() : acquired;
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
      } else if (live.some((p) => !isReady(p))) {
        // phase and node say whose turn it is: unscheduled = the scheduler, Pending on a node = the kubelet (KWOK)
        const notReady = live.filter((p) => !isReady(p)).map((p) => `${p.metadata.name ?? ''} ${p.status?.phase ?? '?'}${p.spec.nodeName === undefined ? ' unscheduled' : ''}`);
        why.push(`${name}: pods not Ready (${notReady.join(', ')})`);
      } else if (updated < wantUpdated) why.push(`${name}: ${updated} pods updated, want ≥ ${wantUpdated}`);
      else if (s.replicas !== r || s.readyReplicas !== r || s.updatedReplicas !== updated || s.updatedReadyReplicas !== updated) {
        why.push(
          `${name}: status replicas/ready/updated/updatedReady ${s.replicas}/${s.readyReplicas}/${s.updatedReplicas}/${s.updatedReadyReplicas}, pods say ${r}/${r}/${updated}/${updated}`,
        );
      }
      if (cs.spec.scaleStrategy?.disablePVCReuse === true && (cs.spec.volumeClaimTemplates ?? []).length > 0) {
        const ids = new Set(live.map((p) => p.metadata.labels?.[LABEL_INSTANCE_ID]));
        const orphans = [...this.pvcs.values()].filter(
          (c) => ownerName(c) === name && c.metadata.deletionTimestamp === undefined && !ids.has(c.metadata.labels?.[LABEL_INSTANCE_ID]),
        );
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
