// Fleet benchmark: N pods spread over M CloneSets, then what a running controller costs when nothing happens and
// what a restart costs.
//
//   node bench/fleet.ts [--pods 1000] [--clonesets 10] [--idle-seconds 60] [--churn-minutes 3] [--unthrottled-setup]
//                       [--large] [--limit-pods N] [--scale-up-minutes M] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
//
// --large: the local control plane's large profile (tools/localcluster/components.ts), the default above
// LARGE_FLEET_PODS pods. --limit-pods N: the limit is measured with N pods and scaled to --pods linearly, for quick
// runs only: the API server's work per pod grows with what it stores (session 34: 100 000 pods took 1 911.5 s, 2.2×
// the 10 000-pod limit scaled), so a figure to quote measures the limit at --pods; printed.
// --scale-up-minutes M: gives up after M minutes of scale-up, printing how far it got (pods, Ready, CPU, RSS).
//
// --unthrottled-setup: the first controller (scale-up and idle) runs with --kube-api-qps=0 (no client limit), so
// that a 10 000-pod fleet is built in minutes; the restarted controller runs with the given flags.
//
// 1. scale-up: M CloneSets created at once, time until all N pods are Ready and available (with the limit of
//    limit.ts, measured first on the empty cluster, and the ratio);
// 2. idle: once the controller has been quiet for 5 s, its CPU (mCPU, from /proc/<pid>/stat), requests and the pod
//    updates it still received (cloneset_pod_events_total) over --idle-seconds with nothing changing;
// 3. heap per cached pod: an informer over the same pods in this process, with the controller's cache transform
//    (cloneset/cache-transforms.ts) and without it, heap measured after a full GC;
// 4. restart: the controller is stopped (SIGTERM) and a new one started: time to all caches synced (/readyz), to
//    all CloneSets reconciled (reconcile count ≥ M, queue empty, no worker busy), and the writes it made — ~0 when
//    nothing changed (no status or pod write storm). Its limit: one direct paginated list of the N pods.
// 5. churn, with the restarted controller: for --churn-minutes, 1 % of the pods per minute have a readiness probe
//    fail (written as a kubelet writes it; kwok makes them ready again), and at the start one rollout (in place, a
//    new image) of 10 CloneSets; reconcile latency p50/p99 from the controller's histograms
//    (controller_runtime_reconcile_time_seconds, workqueue_queue_duration_seconds) over the phase.
// 6. relist (a local control plane only): kube-apiserver restarted, every watch of the controller expires and its
//    informers list again: the time to the pods listed, the writes (~0), and the controller's RSS, peak RSS and
//    native heap before and after (relist.ts).
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { podTransform } from '../src/cloneset/cache-transforms.ts';
import { isAlreadyExists } from '../src/kube/api-error.ts';
import { CLONESETS, PODS } from '../src/kube/resources.ts';
import type { CloneSet } from '../src/api/cloneset.ts';
import type { Pod } from '../src/kube/types.ts';
import { systemClock } from '../src/runtime/clock.ts';
import { Informer } from '../src/runtime/informer.ts';
import { benchCloneSet, CloneSetView, fleet, isReady, statusSum } from './cloneset-view.ts';
import { diffCounts, eventWrites, peakRssMiB, requestCounters, rssMiB, requestSummary, startController, sumOf, type ControllerProcess } from './controller-process.ts';
import { measureRelist, type RelistFigures } from './relist.ts';
import { controllerCounters, settled } from './status-changes.ts';
import {
  CLUSTER_OPTIONS,
  clusterArgs,
  createNamespace,
  DEFAULT_CONTROLLER_FLAGS,
  deleteNamespace,
  deletePodsAtOnce,
  log,
  namespaceName,
  ROOT,
  runBenchmark,
  secs,
  until,
  type ClusterArgs,
} from './harness.ts';
import { withCluster } from './harness.ts';
import type { ClusterProfile } from '../tools/localcluster/cluster.ts';
import { runBounded } from '../src/runtime/bounded-parallel.ts';
import { probeFailed } from './status-changes.ts';
import { histogramBuckets, histogramQuantile } from './histogram.ts';
import { measureLimit, ratio } from './limit.ts';
import { scrapeApiServerWrites, writesPerPod } from './apiserver-writes.ts';
import { heapUsedAfterGc } from './heap.ts';
import type { KubeClient } from '../src/kube/client.ts';

const USAGE =
  'usage: node bench/fleet.ts [--pods N (1000)] [--clonesets M (10)] [--idle-seconds S (60)] [--churn-minutes C (3)] [--unthrottled-setup] [--large] [--limit-pods N] [--scale-up-minutes M] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]\n';

/** Above this many pods the local control plane starts with its large profile (3 default nodes hold 30 000). */
const LARGE_FLEET_PODS = 25_000;
/** CloneSets rolled out during the churn phase. */
const CHURN_ROLLOUTS = 10;
/** Requests in flight from the benchmark's client while it creates the CloneSets and during the churn. */
const CLIENT_CONCURRENCY = 16;

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on every common kernel build. */
const CLOCK_TICKS_PER_SECOND = 100;
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'create', 'update', 'patch', 'delete']);

interface FleetArgs extends ClusterArgs {
  readonly idleSeconds: number;
  readonly churnMinutes: number;
  readonly unthrottledSetup: boolean;
  readonly profile: ClusterProfile;
  readonly limitPods: number;
  /** --scale-up-minutes: give up the scale-up after this long, printing how far it got; undefined = no bound */
  readonly scaleUpMinutes: number | undefined;
}

function parse(argv: readonly string[]): FleetArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      ...CLUSTER_OPTIONS,
      'idle-seconds': { type: 'string' },
      'churn-minutes': { type: 'string' },
      'unthrottled-setup': { type: 'boolean' },
      large: { type: 'boolean' },
      'limit-pods': { type: 'string' },
      'scale-up-minutes': { type: 'string' },
    },
  });
  const common = clusterArgs({ ...values, clonesets: values.clonesets ?? '10' }, positionals, USAGE, 'bench');
  const idleSeconds = Number(values['idle-seconds'] ?? '60');
  if (!(idleSeconds > 0)) throw new Error(`--idle-seconds: not a positive number: ${values['idle-seconds'] ?? ''}`);
  const churnMinutes = Number(values['churn-minutes'] ?? '3');
  if (!Number.isInteger(churnMinutes) || churnMinutes < 0) throw new Error(`--churn-minutes: not a count of minutes: ${values['churn-minutes'] ?? ''}`);
  const limitPods = Number(values['limit-pods'] ?? String(common.pods));
  if (!Number.isInteger(limitPods) || limitPods <= 0 || limitPods > common.pods)
    throw new Error(`--limit-pods: not a count between 1 and --pods (${common.pods}): ${values['limit-pods'] ?? ''}`);
  const profile = values.large === true || common.pods > LARGE_FLEET_PODS ? 'large' : 'default';
  const scaleUpMinutes = values['scale-up-minutes'] === undefined ? undefined : Number(values['scale-up-minutes']);
  if (scaleUpMinutes !== undefined && !(scaleUpMinutes > 0)) throw new Error(`--scale-up-minutes: not a positive number: ${values['scale-up-minutes'] ?? ''}`);
  return { ...common, idleSeconds, churnMinutes, unthrottledSetup: values['unthrottled-setup'] === true, profile, limitPods, scaleUpMinutes };
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** The value of an unlabelled gauge in a Prometheus text body. */
function gauge(body: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)`, 'm').exec(body);
  return m === null ? undefined : Number(m[1]);
}

/** Writes among request counters (verbs create/update/patch/delete). */
function writes(c: Map<string, number>): number {
  let n = 0;
  for (const [verb, count] of c) if (WRITE_VERBS.has(verb)) n += count;
  return n;
}

/** Heap growth while `copies` informers over the pods of `ns` (matching `labelSelector`) are synced and watching. */
async function informersHeap(client: KubeClient, ns: string, transform: boolean, copies: number, labelSelector?: string): Promise<{ pods: number; bytes: number }> {
  const before = heapUsedAfterGc();
  const stop = new AbortController();
  const informers: Informer<Pod>[] = [];
  for (let i = 0; i < copies; i++) {
    const informer = new Informer<Pod>({
      client,
      resource: PODS,
      namespace: ns,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      ...(transform ? { transform: podTransform() } : {}),
      ...(labelSelector !== undefined ? { labelSelector } : {}),
    });
    informer.start(stop.signal);
    await informer.waitForSync();
    informers.push(informer);
  }
  const after = heapUsedAfterGc();
  const pods = informers.reduce((n, inf) => n + inf.store.list().length, 0);
  stop.abort();
  await new Promise((r) => setTimeout(r, 500)); // the aborted watches let go of the stores before the next measurement
  return { pods, bytes: after - before };
}

/**
 * Heap bytes per pod of an informer cache over the pods of `ns`, with or without the controller's transform: the
 * growth with the pods minus the growth of the same informers over no pod (connection, watch, buffers). Several
 * copies of the cache (≥ 10 000 pods in all, at most 10) keep the GC's noise small against the figure.
 */
async function heapPerCachedPod(client: KubeClient, ns: string, pods: number, transform: boolean): Promise<{ pods: number; bytesPerPod: number }> {
  const copies = Math.min(10, Math.max(1, Math.ceil(10_000 / pods)));
  const fixed = await informersHeap(client, ns, transform, copies, 'cloneset-bench=none');
  const full = await informersHeap(client, ns, transform, copies);
  return { pods: full.pods / copies, bytesPerPod: full.pods > 0 ? (full.bytes - fixed.bytes) / full.pods : 0 };
}

/**
 * Creates a benchmarked CloneSet, again after a failure of the API server's call to the conversion webhook (a
 * connection reset when the machine is overloaded, seen at 100 000 pods): 5 attempts, a second apart; an
 * AlreadyExists after a retry is our own earlier attempt.
 */
async function createCloneSet(client: KubeClient, ns: string, name: string, replicas: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.create(CLONESETS, ns, benchCloneSet(ns, replicas, undefined, name));
      return;
    } catch (e) {
      if (attempt > 1 && isAlreadyExists(e)) return;
      if (attempt >= 5) throw e;
      log(`creating CloneSet ${name} failed (attempt ${attempt} of 5), again in 1 s: ${e instanceof Error ? e.message : String(e)}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

interface ChurnFigures {
  readonly flips: number;
  readonly failedFlips: number;
  readonly rolloutMs: number;
  readonly rolledPods: number;
  readonly reconciles: number;
  readonly reconcileP50: number | undefined;
  readonly reconcileP99: number | undefined;
  readonly queueP50: number | undefined;
  readonly queueP99: number | undefined;
  readonly cpuMilli: number;
  readonly requests: string;
  readonly ms: number;
}

/**
 * The churn phase (5. above): readiness probes failing on 1 % of the pods per minute, spread evenly over each
 * minute, and one in-place rollout of CHURN_ROLLOUTS CloneSets started at once; waits until the rollouts are
 * complete, every flipped pod is Ready again and the controller settled.
 */
async function churn(
  client: KubeClient,
  ns: string,
  view: CloneSetView,
  sets: ReadonlyMap<string, number>,
  minutes: number,
  pid: number,
  metricsUrl: string,
): Promise<ChurnFigures> {
  const scrape = async (): Promise<{ reconcile: Map<number, number>; queue: Map<number, number>; reconciles: number }> => {
    const body = await (await fetch(metricsUrl)).text();
    return {
      reconcile: histogramBuckets(body, 'controller_runtime_reconcile_time_seconds'),
      queue: histogramBuckets(body, 'workqueue_queue_duration_seconds'),
      reconciles: sumOf(body, 'controller_runtime_reconcile_total'),
    };
  };
  const before = await scrape();
  const requestsBefore = await requestCounters(metricsUrl);
  const cpu0 = cpuSeconds(pid);
  const t0 = Date.now();

  const rolled = [...sets.keys()].sort().slice(0, CHURN_ROLLOUTS);
  const generations = new Map<string, number | undefined>();
  const image = 'nginx:mainline';
  for (const name of rolled) {
    const patch = { spec: { updateStrategy: { type: 'InPlaceIfPossible' }, template: { spec: { containers: [{ name: 'nginx', image }] } } } };
    const patched = await client.patch<CloneSet>(CLONESETS, ns, name, patch, 'merge');
    generations.set(name, patched.metadata.generation);
  }

  // Pods of the other CloneSets, in a fixed order that spreads over the CloneSets (names sorted, then strided).
  const rolledSet = new Set(rolled);
  const candidates = [...view.pods.values()].filter((p) => !rolledSet.has(p.metadata.labels?.['cloneset'] ?? '') && isReady(p)).map((p) => p.metadata.name ?? '');
  candidates.sort();
  const perMinute = Math.max(1, Math.round(sets.size === 0 ? 0 : [...sets.values()].reduce((a, b) => a + b, 0) / 100));
  const total = Math.min(candidates.length, perMinute * minutes);
  const stride = Math.max(1, Math.floor(candidates.length / Math.max(1, total)));
  const flipped = Array.from({ length: total }, (_, i) => candidates[(i * stride) % candidates.length] ?? '');
  const intervalMs = 60_000 / perMinute;
  let failedFlips = 0;
  const { error } = await runBounded(
    flipped.map((name, i) => async () => {
      const wait = t0 + i * intervalMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const pod = view.pods.get(name);
      if (pod === undefined) {
        failedFlips++;
        return;
      }
      await client.patch(PODS, ns, name, probeFailed(pod), 'strategic', { subresource: 'status' }).catch(() => {
        failedFlips++;
      });
    }),
    CLIENT_CONCURRENCY,
  );
  if (error !== undefined) throw error;
  const rolloutMs = await until(
    `the rollout of ${rolled.length} CloneSets to complete`,
    () =>
      rolled.every((name) => {
        const st = view.cloneSets.get(name)?.status;
        const want = sets.get(name) ?? 0;
        return st !== undefined && st.observedGeneration === generations.get(name) && st.updatedReadyReplicas === want && st.replicas === want;
      })
        ? Date.now() - t0
        : undefined,
    1_800_000,
    200,
  );
  await until(
    `the ${flipped.length} flipped pods Ready again`,
    () =>
      flipped.every((n) => {
        const p = view.pods.get(n);
        return p !== undefined && isReady(p);
      })
        ? true
        : undefined,
    600_000,
    500,
  );
  await settled(metricsUrl, 5_000, 600_000);
  const ms = Date.now() - t0;
  const after = await scrape();
  return {
    flips: flipped.length,
    failedFlips,
    rolloutMs,
    rolledPods: rolled.reduce((n, name) => n + (sets.get(name) ?? 0), 0),
    reconciles: after.reconciles - before.reconciles,
    reconcileP50: histogramQuantile(0.5, after.reconcile, before.reconcile),
    reconcileP99: histogramQuantile(0.99, after.reconcile, before.reconcile),
    queueP50: histogramQuantile(0.5, after.queue, before.queue),
    queueP99: histogramQuantile(0.99, after.queue, before.queue),
    cpuMilli: ((cpuSeconds(pid) - cpu0) / (ms / 1000)) * 1000,
    requests: requestSummary(diffCounts(await requestCounters(metricsUrl), requestsBefore)).text,
    ms,
  };
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  await withCluster(
    args,
    async (client, kubeconfig) => {
      const ns = namespaceName('fleet');
      const stop = new AbortController();
      let controller: ControllerProcess | undefined;
      const timeout = 60_000 + args.pods * 1_000;
      // The limit first, on the empty cluster, as bench:scale measures it: measured last, it had to wait for the
      // fleet's pods to be deleted (100 000 pods: a quarter of an hour), and the cluster was empty again then too.
      // It waits until its namespace is gone: not waiting, the 100 000-pod run of session 29 scaled up while the
      // limit's 10 000 pods were being deleted (19 000 pod DELETEs counted in the fleet's writes).
      log(`the limit: ${args.limitPods} pods created and made Ready by a direct client…`);
      const measured = await measureLimit(kubeconfig, args.limitPods, timeout, true);
      try {
        await createNamespace(client, ns);
        const view = new CloneSetView(client, ns, stop.signal);
        const setupArgs = args.unthrottledSetup ? [...args.controllerArgs, '--kube-api-qps=0'] : args.controllerArgs;
        controller = await startController(kubeconfig, ns, setupArgs);
        const n = args.pods;
        const sets = fleet(n, args.cloneSets);
        const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : `(${DEFAULT_CONTROLLER_FLAGS})`;
        log(`namespace ${ns}; controller pid ${controller.pid}, flags ${flags}; log ${path.relative(ROOT, controller.logFile)}`);

        // 1. scale-up of the whole fleet
        const base = await requestCounters(controller.metricsUrl);
        const writes0 = await scrapeApiServerWrites(kubeconfig);
        const t0 = Date.now();
        // 16 in flight: one after the other, 1 000 CloneSets take minutes on a loaded API server (each create passes
        // the conversion and admission webhook), and the controller would start on the last ones that much later.
        const created = await runBounded(
          [...sets].map(
            ([name, replicas]) =>
              () =>
                createCloneSet(client, ns, name, replicas),
          ),
          CLIENT_CONCURRENCY,
        );
        if (created.error !== undefined) throw created.error;
        // a scan of 100 000 pods every 100 ms would compete with the controller for the CPU: one scan per 1 000 pods
        const pollMs = Math.max(100, n / 100);
        // Progress every 30 s (pods, Ready, the controller's CPU and RSS), and, with --scale-up-minutes, the point
        // where the run gave up: on a loaded 2-core machine a 100 000-pod scale-up may not fit in the time there is.
        const cpuUp0 = cpuSeconds(controller.pid);
        const controllerPid = controller.pid;
        const scaleUpProgress = (): string => {
          const pods = [...view.pods.values()];
          const ready = pods.filter(isReady).length;
          const s = (Date.now() - t0) / 1000;
          return `${s.toFixed(0)} s: ${pods.length} pods, ${ready} Ready (${(ready / s).toFixed(1)}/s), controller CPU ${(cpuSeconds(controllerPid) - cpuUp0).toFixed(1)} s, RSS ${rssMiB(controllerPid)}, peak ${peakRssMiB(controllerPid)}`;
        };
        const ticker = setInterval(() => log(`scale-up ${scaleUpProgress()}`), 30_000);
        const scaleUpTimeout = args.scaleUpMinutes === undefined ? timeout : args.scaleUpMinutes * 60_000;
        let tReady: number;
        try {
          tReady = await until(`${n} Ready pods`, () => ([...view.pods.values()].filter(isReady).length >= n ? Date.now() - t0 : undefined), scaleUpTimeout, pollMs);
        } catch (e) {
          process.stdout.write(
            `CloneSet fleet benchmark: ${n} pods in ${sets.size} CloneSets, control plane profile ${args.profile}: gave up the scale-up at ${scaleUpProgress()}\n`,
          );
          throw e;
        } finally {
          clearInterval(ticker);
        }
        const tAvailable = await until(`status.availableReplicas == ${n}`, () => (statusSum(view, 'availableReplicas') === n ? Date.now() - t0 : undefined), timeout, pollMs);
        const up = diffCounts(await requestCounters(controller.metricsUrl), base);
        const writesUp = diffCounts(await scrapeApiServerWrites(kubeconfig), writes0);
        const events = await eventWrites(client, ns);
        const rssUp = peakRssMiB(controller.pid);
        // The idle window starts once the controller has had nothing to do for 5 s (the trailing status writes of
        // the scale-up, and kwok's, can take a while with 10 000 pods); the pod events it still receives during the
        // window are printed, so that CPU spent on them is not mistaken for the controller's own.
        log(`fleet up: ${n} pods Ready in ${secs(tReady)}; waiting for the controller to settle before the idle window…`);
        await settled(controller.metricsUrl, 5_000, 300_000).catch(() => log('the controller did not settle within 5 minutes; measuring the idle window anyway'));

        // 2. idle
        const idleBefore = await requestCounters(controller.metricsUrl);
        const idleCounters0 = await controllerCounters(controller.metricsUrl);
        const cpu0 = cpuSeconds(controller.pid);
        await new Promise((r) => setTimeout(r, args.idleSeconds * 1000));
        const idleCpu = ((cpuSeconds(controller.pid) - cpu0) / args.idleSeconds) * 1000;
        const idleRequests = diffCounts(await requestCounters(controller.metricsUrl), idleBefore);
        const idleRss = rssMiB(controller.pid);
        const idleCounters1 = await controllerCounters(controller.metricsUrl);
        const idleUpdates = `${String(idleCounters1.ignored - idleCounters0.ignored)} ignored / ${String(idleCounters1.enqueued - idleCounters0.enqueued)} enqueued; ${String(idleCounters1.reconciles - idleCounters0.reconciles)} reconciles`;

        // 3. heap per cached pod (this process, the same pods; a first run warms up code and caches)
        await heapPerCachedPod(client, ns, n, true);
        const reduced = await heapPerCachedPod(client, ns, n, true);
        const whole = await heapPerCachedPod(client, ns, n, false);

        // 4. restart
        await controller.stop();
        controller = undefined;
        const tr = Date.now();
        controller = await startController(kubeconfig, ns, args.controllerArgs);
        const tSynced = Date.now() - tr;
        const metricsUrl = controller.metricsUrl;
        const tReconciled = await until(
          'every CloneSet reconciled after the restart',
          async () => {
            const body = await (await fetch(metricsUrl)).text();
            const done =
              sumOf(body, 'controller_runtime_reconcile_total') >= sets.size && gauge(body, 'workqueue_depth') === 0 && gauge(body, 'controller_runtime_active_workers') === 0;
            return done ? Date.now() - tr : undefined;
          },
          timeout,
          50,
        );
        await new Promise((r) => setTimeout(r, 5_000)); // anything a restart would still write shows up by now
        const restart = await requestCounters(metricsUrl);
        const restartRss = rssMiB(controller.pid);
        const tl = Date.now();
        const listed = await client.listAll<Pod>(PODS, ns);
        const listMs = Date.now() - tl;

        // 5. churn
        let churned: ChurnFigures | undefined;
        if (args.churnMinutes > 0) {
          log(`churn: ${args.churnMinutes} min of readiness flips on 1 % of the pods per minute, and a rollout of ${CHURN_ROLLOUTS} CloneSets…`);
          churned = await churn(client, ns, view, sets, args.churnMinutes, controller.pid, metricsUrl);
        }
        const churnRss = peakRssMiB(controller.pid);

        // 6. relist, on a local control plane (its API server is restarted)
        const ownCluster = args.kubeconfig === undefined;
        if (ownCluster) log('relist: restarting kube-apiserver, so that every watch of the controller expires…');
        // A failed relist (the restarted API server not ready in time) is printed with the rest, not thrown: the
        // phases before it took an hour at 100 000 pods.
        const relist = ownCluster ? await measureRelist(args.stateDir, controller, timeout).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))) : undefined;

        await controller.stop();
        controller = undefined;
        stop.abort();
        // A control plane of our own is stopped next, its pods with it; on someone else's, the pods are deleted.
        if (!ownCluster || args.keepCluster) {
          await deletePodsAtOnce(client, ns);
          await deleteNamespace(client, ns, true);
        }
        const row = (label: string, value: string): string => `  ${label.padEnd(48)}${value}`;
        const scale = n / args.limitPods;
        const limit = { existMs: measured.existMs * scale, readyMs: measured.readyMs * scale };
        const ms = (v: number | undefined): string => (v === undefined ? 'n/a' : `${(v * 1000).toFixed(1)} ms`);
        const churnLines =
          churned === undefined
            ? []
            : [
                `churn (${args.churnMinutes} min, the restarted controller: 1 % of the pods per minute Ready → False → True, one in-place rollout of ${CHURN_ROLLOUTS} CloneSets)`,
                row('readiness flips written', `${churned.flips}${churned.failedFlips > 0 ? ` (${churned.failedFlips} failed)` : ''}`),
                row(`rollout of ${CHURN_ROLLOUTS} CloneSets (${churned.rolledPods} pods)`, secs(churned.rolloutMs)),
                row('reconciles', String(churned.reconciles)),
                row('reconcile time p50 / p99', `${ms(churned.reconcileP50)} / ${ms(churned.reconcileP99)}`),
                row('queue wait p50 / p99', `${ms(churned.queueP50)} / ${ms(churned.queueP99)}`),
                row('controller CPU', `${churned.cpuMilli.toFixed(1)} mCPU over ${secs(churned.ms)}`),
                row('controller API requests', churned.requests),
                row('controller peak RSS (VmHWM, since the restart)', churnRss),
              ];

        const kib = (b: number): string => `${(b / 1024).toFixed(2)} KiB`;
        const lines = [
          `CloneSet fleet benchmark: ${n} pods in ${sets.size} CloneSets, controller ${flags}, control plane profile ${args.profile}`,
          `scale-up of the fleet${args.unthrottledSetup ? ' (and idle: this controller runs with --kube-api-qps=0)' : ''}`,
          ...(measured.cleanupUnfinished === true ? ["  NOTE: it started while the limit's pods were still being deleted (the wait for their namespace ran out)"] : []),
          row(`${n} pods Ready`, `${secs(tReady)}  (${ratio(tReady, limit.readyMs)} the limit)`),
          row(`status.availableReplicas == ${n}`, `${secs(tAvailable)}  (${ratio(tAvailable, limit.readyMs)} the limit)`),
          row('controller API requests', requestSummary(up).text),
          row('  of which Events (POST + PATCH)', `${events.posts + events.patches} (${events.posts} + ${events.patches})`),
          row('requests per pod, without Events', ((requestSummary(up).total - events.posts - events.patches) / n).toFixed(2)),
          row("every client's writes per pod (the API server's count)", writesPerPod(writesUp, n)),
          row("  the limit's", writesPerPod(measured.apiWrites, args.limitPods)),
          row('controller peak RSS (VmHWM)', rssUp),
          `idle (${args.idleSeconds} s, nothing changing, from 5 s after the controller's last reconcile)`,
          row('controller CPU', `${idleCpu.toFixed(1)} mCPU`),
          row('controller API requests', requestSummary(idleRequests).text),
          row('controller RSS', idleRss),
          row('pod updates received meanwhile', idleUpdates),
          `heap per cached pod (an informer over the ${reduced.pods} pods in the benchmark process)`,
          row("with the controller's cache transform", kib(reduced.bytesPerPod)),
          row('whole objects (managedFields dropped)', kib(whole.bytesPerPod)),
          `restart (SIGTERM, new process, nothing changed meanwhile)`,
          row('all caches synced (/readyz)', `${secs(tSynced)}  (limit: one direct list of the pods ${secs(listMs)}, ${listed.items.length} pods)`),
          row(`all ${sets.size} CloneSets reconciled`, `${secs(tReconciled)}  (${ratio(tReconciled, listMs)} the list)`),
          row('writes after the restart', String(writes(restart))),
          row('all requests after the restart', requestSummary(restart).text),
          row('controller RSS after the restart', restartRss),
          ...churnLines,
          ...relistLines(relist, n),
          `the limit: a direct client, no controller, ${args.limitPods} pods created + 1 status patch each, 64 in flight, no client limit${scale === 1 ? '' : ` (×${scale.toFixed(2)}, scaled linearly to ${n} pods)`}`,
          row(`${n} pods exist`, secs(limit.existMs)),
          row(`${n} pods Ready`, secs(limit.readyMs)),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        stop.abort();
        await controller?.stop();
        if (controller !== undefined) await deleteNamespace(client, ns, false);
      }
    },
    { profile: args.profile },
  );
}

function relistLines(relist: RelistFigures | Error | undefined, n: number): string[] {
  if (relist === undefined) return [];
  const row = (label: string, value: string): string => `  ${label.padEnd(48)}${value}`;
  const head = `relist (kube-apiserver restarted: the controller's watches expire, its informers list the ${n} pods again)`;
  if (relist instanceof Error) return [head, row('failed', relist.message)];
  if (!relist.relisted) return [head, row('the pod informer', 'did not relist within 60 s (its watch resumed); nothing measured')];
  return [
    head,
    row('restart → the pods listed', secs(relist.ms)),
    row('writes during the relist', String(writes(relist.requests))),
    row('controller API requests', requestSummary(relist.requests).text),
    row('controller RSS before / after', `${relist.rss[0]} / ${relist.rss[1]}`),
    row('controller peak RSS (VmHWM) before / after', `${relist.peakRss[0]} / ${relist.peakRss[1]}`),
    row('native heap ([heap] in smaps) before / after', `${relist.nativeHeap[0]} / ${relist.nativeHeap[1]}`),
  ];
}

runBenchmark(main);
