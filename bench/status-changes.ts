// Reconciles per pod status change: with the pods Ready and the controller settled, the benchmark writes pod status
// changes the way a kubelet does (pods/status patches, from its own client) and counts, from the controller's
// /metrics, the pod events it dropped or enqueued (cloneset_pod_events_total) and the reconciles they cost
// (controller_runtime_reconcile_total), per change the benchmark's own watch saw.
//
// Two kinds, each on the same `pods` pods, one after the other:
//  - unread: a container's `state` moves (running.startedAt), a field the controller's cache drops
//    (src/cloneset/cache-transforms.ts): the event filter (src/cloneset/event-handlers.ts) drops the update;
//  - readiness: a readiness probe fails — the containers not ready, ContainersReady and Ready False — and kwok, the
//    local "kubelet" (config/kwok/pod-stages.yaml pod-container-ready), makes them ready again 400 ms later:
//    Ready → False → True, two changes per pod, both read by the controller (readiness counts in status).
// The work queue holds a key once however often it is added, so reconciles per change depend on how many changes
// land on one CloneSet while it is queued or reconciling: the enqueued events are the upper bound.
import type { KubeClient } from '../src/kube/client.ts';
import { PODS } from '../src/kube/resources.ts';
import type { ContainerStatus, Pod, PodCondition } from '../src/kube/types.ts';
import { runBounded } from '../src/runtime/bounded-parallel.ts';
import { isReady, type CloneSetView } from './cloneset-view.ts';
import { cloneSetReconciles, requestCounters, requestSummary, diffCounts, scrape, sumOf } from './controller-process.ts';
import { until } from './harness.ts';

/** Requests in flight from the benchmark's client while it writes the changes. */
const CONCURRENCY = 32;

export interface StatusChangeFigures {
  readonly kind: 'unread' | 'readiness';
  /** pods/status patches the benchmark wrote */
  readonly written: number;
  /** pod updates (MODIFIED) the benchmark's watch saw for them: the changes, kwok's included */
  readonly changes: number;
  readonly ignored: number;
  readonly enqueued: number;
  readonly reconciles: number;
  /** the controller's API requests meanwhile, "<total> (<verb> <n>, …)" */
  readonly requests: string;
  /** first patch → controller settled */
  readonly ms: number;
}

export interface ControllerCounters {
  readonly reconciles: number;
  readonly ignored: number;
  readonly enqueued: number;
  readonly busy: boolean;
}

export async function controllerCounters(metricsUrl: string): Promise<ControllerCounters> {
  const body = await scrape(metricsUrl);
  const value = (re: RegExp): number => Number(re.exec(body)?.[1] ?? '0');
  const updates = (result: string): number => value(new RegExp(`^cloneset_pod_events_total\\{[^}]*event="update"[^}]*result="${result}"[^}]*\\} (\\d+)`, 'm'));
  return {
    reconciles: cloneSetReconciles(body),
    ignored: updates('ignored'),
    enqueued: updates('enqueued'),
    // summed over every queue: Kruise's manager (bench:scale --kruise) has one per controller
    busy: sumOf(body, 'workqueue_depth') > 0 || sumOf(body, 'controller_runtime_active_workers') > 0,
  };
}

/** Until the controller has been idle (queue empty, no worker busy, no new reconcile or pod event) for `quietMs`. */
export async function settled(metricsUrl: string, quietMs = 3_000, timeoutMs = 300_000): Promise<ControllerCounters> {
  let last: ControllerCounters | undefined;
  let since = Date.now();
  return until(
    'the controller to settle',
    async () => {
      const now = await controllerCounters(metricsUrl);
      const same = last !== undefined && now.reconciles === last.reconciles && now.ignored === last.ignored && now.enqueued === last.enqueued;
      if (!same || now.busy) since = Date.now();
      last = now;
      return !now.busy && Date.now() - since >= quietMs ? now : undefined;
    },
    timeoutMs,
    200,
  );
}

const stamp = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** A container whose running state started a second earlier than it says: a change only of what the cache drops. */
function movedState(c: ContainerStatus): ContainerStatus {
  const state = c['state'] as { running?: { startedAt?: string } } | undefined;
  const started = Date.parse(state?.running?.startedAt ?? '') || Date.now();
  return { ...c, state: { running: { startedAt: new Date(started - 1000).toISOString().replace(/\.\d+Z$/, 'Z') } } };
}

/** What a kubelet writes when a readiness probe fails: containers not ready, ContainersReady and Ready False. */
export function probeFailed(pod: Pod): { status: { containerStatuses: ContainerStatus[]; conditions: PodCondition[] } } {
  const now = stamp();
  return {
    status: {
      // containerStatuses has no merge key: the whole list is sent
      containerStatuses: (pod.status?.containerStatuses ?? []).map((c) => ({ ...c, ready: false })),
      conditions: [
        { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: now },
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: now },
      ],
    },
  };
}

/**
 * Writes one change of `kind` to each of `names` (pods of `view`) and counts what the controller did until it
 * settled. `modified()` is the number of pod MODIFIED events the benchmark's watch has seen so far.
 */
async function measure(
  kind: StatusChangeFigures['kind'],
  client: KubeClient,
  ns: string,
  view: CloneSetView,
  names: readonly string[],
  metricsUrl: string,
  modified: () => number,
): Promise<StatusChangeFigures> {
  const before = await settled(metricsUrl);
  const requestsBefore = await requestCounters(metricsUrl);
  const seen0 = modified();
  const t0 = Date.now();
  const patch = (name: string): unknown => {
    const pod = view.pods.get(name);
    if (pod === undefined) throw new Error(`pod ${name} is gone`);
    return kind === 'unread' ? { status: { containerStatuses: (pod.status?.containerStatuses ?? []).map(movedState) } } : probeFailed(pod);
  };
  const { error } = await runBounded(
    names.map((name) => () => client.patch(PODS, ns, name, patch(name), 'strategic', { subresource: 'status' })),
    CONCURRENCY,
  );
  if (error !== undefined) throw error;
  const want = kind === 'unread' ? names.length : 2 * names.length;
  await until(`${want} pod updates seen`, () => (modified() - seen0 >= want ? true : undefined), 300_000);
  if (kind === 'readiness')
    await until(
      `the ${names.length} pods Ready again`,
      () =>
        names.every((n) => {
          const p = view.pods.get(n);
          return p !== undefined && isReady(p);
        })
          ? true
          : undefined,
      300_000,
    );
  const after = await settled(metricsUrl);
  return {
    kind,
    written: names.length,
    changes: modified() - seen0,
    ignored: after.ignored - before.ignored,
    enqueued: after.enqueued - before.enqueued,
    reconciles: after.reconciles - before.reconciles,
    requests: requestSummary(diffCounts(await requestCounters(metricsUrl), requestsBefore)).text,
    ms: Date.now() - t0,
  };
}

/** Both kinds on the first `count` pods of the view (by name). */
export async function measureStatusChanges(
  client: KubeClient,
  ns: string,
  view: CloneSetView,
  count: number,
  metricsUrl: string,
  modified: () => number,
): Promise<StatusChangeFigures[]> {
  const names = [...view.pods.keys()].sort().slice(0, count);
  const unread = await measure('unread', client, ns, view, names, metricsUrl, modified);
  const readiness = await measure('readiness', client, ns, view, names, metricsUrl, modified);
  return [unread, readiness];
}

/** Report lines: per kind, the changes and what they cost. */
export function statusChangeLines(figures: readonly StatusChangeFigures[], row: (label: string, value: string) => string): string[] {
  const per = (n: number, d: number): string => (d > 0 ? (n / d).toFixed(3) : 'n/a');
  const title = { unread: 'a field the controller does not read (container state)', readiness: 'readiness: probe fails, Ready → False → True' };
  return figures.flatMap((f) => [
    `pod status changes, ${title[f.kind]}`,
    row('patches written / changes seen', `${f.written} / ${f.changes}  (${(f.ms / 1000).toFixed(1)} s to settled)`),
    row('pod updates ignored / enqueued', `${f.ignored} / ${f.enqueued}  (${per(f.enqueued, f.changes)} enqueued per change)`),
    row('reconciles', `${f.reconciles}  (${per(f.reconciles, f.changes)} per change)`),
    row('controller API requests', f.requests),
  ]);
}
