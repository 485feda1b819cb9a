// The limit every benchmark time is compared with: the API server's (and scheduler's and kwok's) own speed for the
// same work without a controller. A direct client with no client-side limit and `concurrency` requests in flight
// creates `n` of the controller's own pods (built by its `newPod` for a CloneSet that nothing reconciles: the same
// labels, lifecycle annotation, readiness gate and owner reference) and, as soon as each exists, writes the
// controller's readiness write (InPlaceUpdateReady=True with the lifecycle's Normal) — the two requests per pod the
// controller needs; with `after-scheduling` (LimitOrder), once the pod is scheduled. A controller time divided by
// the limit is the ratio the benchmarks print. (Until session 36 the limit's pods carried two labels and no owner:
// smaller objects for the API server, kwok and the scheduler to handle than the controller's.)
import { KubeClient } from '../src/kube/client.ts';
import { loadKubeConfig } from '../src/kube/kubeconfig.ts';
import { OWNER_API_VERSION, type CloneSet } from '../src/api/cloneset.ts';
import { ANNOTATION_LIFECYCLE_TIMESTAMP, CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE } from '../src/api/well-known.ts';
import { newPod, rfc3339 } from '../src/cloneset/plan/pod-template.ts';
import { CLONESETS, CLONESETS_V1BETA1, PODS } from '../src/kube/resources.ts';
import type { Pod } from '../src/kube/types.ts';
import { runBounded } from '../src/runtime/bounded-parallel.ts';
import { scrapeApiServerWrites } from './apiserver-writes.ts';
import { benchCloneSet, CloneSetView, isReady } from './cloneset-view.ts';
import { diffCounts, processCpuSeconds } from './controller-process.ts';
import { type CpuReading, type CpuSpent, cpuSpent } from './process-cpu.ts';
import { createNamespace, deleteNamespace, deletePodsAtOnce, log, namespaceName, until } from './harness.ts';
import type { ScaleTimeline } from './scale-breakdown.ts';

export interface Limit {
  /** start → every pod exists (creates answered) */
  readonly existMs: number;
  /** start → every pod Ready, as a watch saw them */
  readonly readyMs: number;
  readonly requests: number;
  /**
   * CPU time (user + system, /proc) of this process from the first create until every pod was seen Ready: the
   * direct client's requests and its watch of the pods, what a TypeScript client doing the controller's writes
   * costs at the least. Includes the Ready scans (one per max(100, n / 100) ms).
   */
  readonly cpuSeconds: number;
  /** Every client's writes from the first create until every pod was Ready, as the API server counted them. */
  readonly apiWrites: ReadonlyMap<string, number>;
  /** With `cpuOf`: the test bed's CPU by process over the same span as `readyMs` (bench/process-cpu.ts). */
  readonly testBedCpu?: CpuSpent;
  /** With `waitForCleanup`: its namespace was still being deleted when the wait ran out (the next phase shares the API server with it). */
  readonly cleanupUnfinished?: boolean;
}

/** In-flight requests of the direct client: enough to keep the API server busy on a 2-core machine. */
export const LIMIT_CONCURRENCY = 64;

/**
 * When the limit writes each pod's InPlaceUpdateReady: `at-create`, right after the create is answered (before the
 * pod is scheduled: the least the API server, scheduler and kwok can do), or `after-scheduling`, once its watch shows
 * the pod scheduled, the order the controller writes in (the condition rides with PreparingNormal → Normal, which
 * waits for scheduling as in Kruise) and so the same work for kwok (docs/performance.md, "The distance to the limit").
 */
export type LimitOrder = 'at-create' | 'after-scheduling';

/** Runs tasks as they are pushed, at most `limit` at once; remembers the first failure. */
function boundedRunner(limit: number): { push(task: () => Promise<void>): void; readonly error: unknown } {
  let active = 0;
  let error: unknown;
  const waiting: (() => Promise<void>)[] = [];
  const pump = (): void => {
    while (active < limit) {
      const task = waiting.shift();
      if (task === undefined) return;
      active++;
      task()
        .catch((e: unknown) => {
          error ??= e;
        })
        .finally(() => {
          active--;
          pump();
        });
    }
  };
  return {
    push(task) {
      waiting.push(task);
      pump();
    },
    get error() {
      return error;
    },
  };
}

/** The CloneSet that owns the limit's pods, and the revision and instance ids of their labels. */
const LIMIT_OWNER = 'limit';
const LIMIT_REVISION = `${LIMIT_OWNER}-5d4b8c7f9d`;
const instanceId = (i: number): string => i.toString(36).padStart(5, '0');

/**
 * The owner of the limit's pods: a CloneSet of 0 replicas, selecting them, that nothing reconciles (no controller
 * runs in the limit's namespace). Each pod is the controller's own (`newPod`, src/cloneset/plan/pod-template.ts,
 * from this CloneSet as the webhook defaulted it): the same labels, lifecycle annotation, readiness gate and owner
 * reference, so that the API server, kwok, the scheduler and the garbage collector handle objects of the same size
 * and shape for the limit as for the controller. Its owner reference names the version the cluster serves (Kruise's
 * own CRD, under `bench:scale --kruise`, serves v1alpha1 alone, and the garbage collector must resolve the owner).
 */
async function limitOwner(client: KubeClient, ns: string): Promise<{ readonly owner: CloneSet; readonly ownerApiVersion: string }> {
  const owner = await client.create<CloneSet>(CLONESETS, ns, benchCloneSet(ns, 0, undefined, LIMIT_OWNER));
  const ownerApiVersion = await client.get<CloneSet>(CLONESETS_V1BETA1, ns, LIMIT_OWNER).then(
    () => OWNER_API_VERSION,
    () => `${CLONESETS.group}/${CLONESETS.version}`,
  );
  return { owner, ownerApiVersion };
}

/** The controller's pod `i` of the limit's owner, its owner reference in the version the cluster serves. */
export function limitPod(owner: CloneSet, ownerApiVersion: string, i: number): Pod {
  const pod = newPod(owner, owner.spec.template, LIMIT_REVISION, instanceId(i), { shortHashLabel: false, nowMs: Date.now() });
  if (ownerApiVersion === OWNER_API_VERSION) return pod;
  return { ...pod, metadata: { ...pod.metadata, ownerReferences: (pod.metadata.ownerReferences ?? []).map((r) => ({ ...r, apiVersion: ownerApiVersion })) } };
}

/**
 * Runs the limit in a namespace of its own and deletes it afterwards; `waitForCleanup` waits until it is gone (for
 * a phase that follows: bench:fleet runs the limit first and waits; bench:scale and bench:rollout run it last and
 * do not wait).
 */
export async function measureLimit(
  kubeconfig: string,
  n: number,
  timeoutMs: number,
  waitForCleanup = false,
  timeline?: ScaleTimeline,
  order: LimitOrder = 'at-create',
  cpuOf?: () => CpuReading,
): Promise<Limit> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { qps: 0, burst: 0 });
  const ns = namespaceName('limit');
  const stop = new AbortController();
  // The controller's readiness write (src/cloneset/execute-pod.ts setInPlaceUpdateReady): the condition, with the
  // lifecycle's PreparingNormal → Normal riding along.
  const condition = (): object => {
    const now = rfc3339(Date.now());
    return {
      metadata: { labels: { [LABEL_LIFECYCLE_STATE]: 'Normal' }, annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: now } },
      status: { conditions: [{ type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: now }] },
    };
  };
  const afterScheduling = boundedRunner(LIMIT_CONCURRENCY);
  let measured: Limit;
  let gone = true;
  const patched = new Set<string>();
  const onPod = (pod: Pod): void => {
    const name = pod.metadata.name ?? '';
    if (order !== 'after-scheduling' || (pod.spec.nodeName ?? '') === '' || patched.has(name)) return;
    patched.add(name);
    afterScheduling.push(() => client.patch(PODS, ns, name, condition(), 'strategic', { subresource: 'status' }).then(() => undefined));
  };
  try {
    await createNamespace(client, ns);
    const { owner, ownerApiVersion } = await limitOwner(client, ns);
    const view = new CloneSetView(client, ns, stop.signal, (type, pod) => {
      timeline?.observe(type, pod);
      if (type !== 'DELETED') onPod(pod);
    });
    const writes0 = await scrapeApiServerWrites(kubeconfig);
    timeline?.start();
    const cpu0 = processCpuSeconds(process.pid);
    const testBed0 = cpuOf?.();
    const t0 = Date.now();
    let existMs = 0;
    let created = 0;
    const one = async (i: number): Promise<void> => {
      const pod = limitPod(owner, ownerApiVersion, i);
      const name = pod.metadata.name ?? '';
      await client.create(PODS, ns, pod);
      if (++created === n) existMs = Date.now() - t0;
      if (order === 'at-create') await client.patch(PODS, ns, name, condition(), 'strategic', { subresource: 'status' });
    };
    const { error } = await runBounded(
      Array.from({ length: n }, (_, i) => () => one(i)),
      LIMIT_CONCURRENCY,
    );
    if (error !== undefined) throw error;
    // as bench/fleet.ts: a scan per 1 000 pods, so that the scans do not compete with the API server for the CPU
    const readyMs = await until(
      `${n} directly created pods Ready`,
      () => {
        if (afterScheduling.error !== undefined) throw afterScheduling.error;
        return [...view.pods.values()].filter(isReady).length >= n ? Date.now() - t0 : undefined;
      },
      timeoutMs,
      Math.max(100, n / 100),
    );
    const cpuSeconds = processCpuSeconds(process.pid) - cpu0;
    const testBed1 = cpuOf?.();
    const apiWrites = diffCounts(await scrapeApiServerWrites(kubeconfig), writes0);
    measured = {
      existMs,
      readyMs,
      requests: client.requestCount,
      cpuSeconds,
      apiWrites,
      ...(testBed0 === undefined || testBed1 === undefined ? {} : { testBedCpu: cpuSpent(testBed0, testBed1) }),
    };
  } finally {
    stop.abort();
    // A phase follows: the pods go at once (grace period 0), without waiting for kwok to play each one's deletion.
    // Left to the namespace's deletion, 100 000 pods were still 40 000 after 30 min, the fleet scaling up beside
    // them (session 34). 20 ms a pod, at least 10 min, for the rest.
    if (waitForCleanup) await deletePodsAtOnce(client, ns).catch((e: unknown) => log(`the limit's pods not deleted at once (its namespace's deletion does it): ${String(e)}`));
    gone = await deleteNamespace(client, ns, waitForCleanup, Math.max(600_000, n * 20));
    client.close();
  }
  return waitForCleanup && !gone ? { ...measured, cleanupUnfinished: true } : measured;
}

/** "2.31×" — how many times the limit a measured time is. */
export function ratio(ms: number, limitMs: number): string {
  return limitMs > 0 ? `${(ms / limitMs).toFixed(2)}×` : 'n/a';
}

/**
 * The limit of an in-place rollout: with the controller stopped, a direct client (no client limit, 64 in flight, no
 * maxUnavailable budget) makes the three writes the controller makes per pod — InPlaceUpdateReady=False, the new
 * image, InPlaceUpdateReady=True — and the time is until every pod runs `image` and is Ready (as `pods` shows them).
 */
export async function measureInPlaceLimit(kubeconfig: string, ns: string, pods: () => readonly Pod[], image: string, timeoutMs: number): Promise<Limit> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { qps: 0, burst: 0 });
  try {
    const names = pods().map((p) => p.metadata.name ?? '');
    const condition = (status: string): object => ({
      status: { conditions: [{ type: 'InPlaceUpdateReady', status, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] },
    });
    const writes0 = await scrapeApiServerWrites(kubeconfig);
    const cpu0 = processCpuSeconds(process.pid);
    const t0 = Date.now();
    const one = async (name: string): Promise<void> => {
      await client.patch(PODS, ns, name, condition('False'), 'strategic', { subresource: 'status' });
      await client.patch(PODS, ns, name, { spec: { containers: [{ name: 'nginx', image }] } }, 'strategic');
      await client.patch(PODS, ns, name, condition('True'), 'strategic', { subresource: 'status' });
    };
    const { error } = await runBounded(
      names.map((name) => () => one(name)),
      LIMIT_CONCURRENCY,
    );
    if (error !== undefined) throw error;
    const existMs = Date.now() - t0;
    const readyMs = await until(
      `${names.length} pods Ready on ${image}`,
      () => {
        const all = pods();
        return all.length === names.length && all.every((p) => isReady(p) && p.status?.containerStatuses?.[0]?.image === image) ? Date.now() - t0 : undefined;
      },
      timeoutMs,
      50,
    );
    const cpuSeconds = processCpuSeconds(process.pid) - cpu0;
    const apiWrites = diffCounts(await scrapeApiServerWrites(kubeconfig), writes0);
    return { existMs, readyMs, requests: client.requestCount, cpuSeconds, apiWrites };
  } finally {
    client.close();
  }
}
