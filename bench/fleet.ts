// Fleet benchmark: N pods spread over M CloneSets, then what a running controller costs when nothing happens and
// what a restart costs.
//
//   node bench/fleet.ts [--pods 1000] [--clonesets 10] [--idle-seconds 60] [--unthrottled-setup] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
//
// --unthrottled-setup: the first controller (scale-up and idle) runs with --kube-api-qps=0 (no client limit), so
// that a 10 000-pod fleet is built in minutes; the restarted controller runs with the given flags.
//
// 1. scale-up: M CloneSets created at once, time until all N pods are Ready and available (with the limit of
//    limit.ts, measured at the end, and the ratio);
// 2. idle: once the controller has been quiet for 5 s, its CPU (mCPU, from /proc/<pid>/stat), requests and the pod
//    updates it still received (cloneset_pod_events_total) over --idle-seconds with nothing changing;
// 3. heap per cached pod: an informer over the same pods in this process, with the controller's cache transform
//    (cloneset/cache-transforms.ts) and without it, heap measured after a full GC;
// 4. restart: the controller is stopped (SIGTERM) and a new one started: time to all caches synced (/readyz), to
//    all CloneSets reconciled (reconcile count ≥ M, queue empty, no worker busy), and the writes it made — ~0 when
//    nothing changed (no status or pod write storm). Its limit: one direct paginated list of the N pods.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { podTransform } from '../src/cloneset/cache-transforms.ts';
import { CLONESETS, PODS } from '../src/kube/resources.ts';
import type { Pod } from '../src/kube/types.ts';
import { systemClock } from '../src/runtime/clock.ts';
import { Informer } from '../src/runtime/informer.ts';
import { benchCloneSet, CloneSetView, fleet, isReady, statusSum } from './cloneset-view.ts';
import { diffCounts, eventWrites, peakRssMiB, requestCounters, requestSummary, startController, sumOf, type ControllerProcess } from './controller-process.ts';
import { controllerCounters, settled } from './status-changes.ts';
import {
  CLUSTER_OPTIONS,
  clusterArgs,
  createNamespace,
  DEFAULT_CONTROLLER_FLAGS,
  deleteNamespace,
  log,
  namespaceName,
  ROOT,
  runBenchmark,
  secs,
  until,
  type ClusterArgs,
} from './harness.ts';
import { withCluster } from './harness.ts';
import { measureLimit, ratio } from './limit.ts';
import type { KubeClient } from '../src/kube/client.ts';

const USAGE =
  'usage: node bench/fleet.ts [--pods N (1000)] [--clonesets M (10)] [--idle-seconds S (60)] [--unthrottled-setup] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]\n';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on every common kernel build. */
const CLOCK_TICKS_PER_SECOND = 100;
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'create', 'update', 'patch', 'delete']);

function parse(argv: readonly string[]): ClusterArgs & { readonly idleSeconds: number; readonly unthrottledSetup: boolean } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { ...CLUSTER_OPTIONS, 'idle-seconds': { type: 'string' }, 'unthrottled-setup': { type: 'boolean' } },
  });
  const common = clusterArgs({ ...values, clonesets: values.clonesets ?? '10' }, positionals, USAGE, 'bench');
  const idleSeconds = Number(values['idle-seconds'] ?? '60');
  if (!(idleSeconds > 0)) throw new Error(`--idle-seconds: not a positive number: ${values['idle-seconds'] ?? ''}`);
  return { ...common, idleSeconds, unthrottledSetup: values['unthrottled-setup'] === true };
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

function rssMiB(pid: number): string {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 'n/a' : `${(Number(m[1]) / 1024).toFixed(0)} MiB`;
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

const collectGarbage = ((): (() => void) => {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('no gc() available');
  return () => void gc();
})();

function heapUsedAfterGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
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

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  await withCluster(args, async (client, kubeconfig) => {
    const ns = namespaceName('fleet');
    const stop = new AbortController();
    let controller: ControllerProcess | undefined;
    try {
      await createNamespace(client, ns);
      const view = new CloneSetView(client, ns, stop.signal);
      const setupArgs = args.unthrottledSetup ? [...args.controllerArgs, '--kube-api-qps=0'] : args.controllerArgs;
      controller = await startController(kubeconfig, ns, setupArgs);
      const n = args.pods;
      const sets = fleet(n, args.cloneSets);
      const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : `(${DEFAULT_CONTROLLER_FLAGS})`;
      log(`namespace ${ns}; controller pid ${controller.pid}, flags ${flags}; log ${path.relative(ROOT, controller.logFile)}`);
      const timeout = 60_000 + n * 1_000;

      // 1. scale-up of the whole fleet
      const base = await requestCounters(controller.metricsUrl);
      const t0 = Date.now();
      for (const [name, replicas] of sets) await client.create(CLONESETS, ns, benchCloneSet(ns, replicas, undefined, name));
      const tReady = await until(`${n} Ready pods`, () => ([...view.pods.values()].filter(isReady).length >= n ? Date.now() - t0 : undefined), timeout);
      const tAvailable = await until(`status.availableReplicas == ${n}`, () => (statusSum(view, 'availableReplicas') === n ? Date.now() - t0 : undefined), timeout);
      const up = diffCounts(await requestCounters(controller.metricsUrl), base);
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

      await controller.stop();
      controller = undefined;
      stop.abort();
      await deleteNamespace(client, ns, true);
      log(`the limit: ${n} pods created and made Ready by a direct client…`);
      const limit = await measureLimit(kubeconfig, n, timeout);

      const row = (label: string, value: string): string => `  ${label.padEnd(40)}${value}`;
      const kib = (b: number): string => `${(b / 1024).toFixed(2)} KiB`;
      const lines = [
        `CloneSet fleet benchmark: ${n} pods in ${sets.size} CloneSets, controller ${flags}`,
        `scale-up of the fleet${args.unthrottledSetup ? ' (and idle: this controller runs with --kube-api-qps=0)' : ''}`,
        row(`${n} pods Ready`, `${secs(tReady)}  (${ratio(tReady, limit.readyMs)} the limit)`),
        row(`status.availableReplicas == ${n}`, `${secs(tAvailable)}  (${ratio(tAvailable, limit.readyMs)} the limit)`),
        row('controller API requests', requestSummary(up).text),
        row('  of which Events (POST + PATCH)', `${events.posts + events.patches} (${events.posts} + ${events.patches})`),
        row('requests per pod, without Events', ((requestSummary(up).total - events.posts - events.patches) / n).toFixed(2)),
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
        `the limit: a direct client, no controller, ${n} pods created + 1 status patch each, 64 in flight, no client limit`,
        row(`${n} pods exist`, secs(limit.existMs)),
        row(`${n} pods Ready`, secs(limit.readyMs)),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      stop.abort();
      await controller?.stop();
      if (controller !== undefined) await deleteNamespace(client, ns, false);
    }
  });
}

runBenchmark(main);
