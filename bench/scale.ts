// Scale benchmark: how long the controller takes to bring CloneSets from 0 to N pods in all (existing, Ready,
// counted in status) and back to 0, how many API requests it sends doing so, and its peak memory; then the limit
// (limit.ts): the same number of pods created and made Ready by a direct client, and each time's ratio to it.
//
//   node bench/scale.ts [--pods 1000] [--clonesets 1] [--status-change-pods K] [--idle-seconds S] [--kruise] [--limit-order at-create|after-scheduling] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
//
// --limit-order: when the limit writes each pod's InPlaceUpdateReady (limit.ts LimitOrder): right after the create
// (default), or once the pod is scheduled, the controller's order and so the same work for kwok.
//
// With --kruise, OpenKruise's own manager (hack/build-kruise.sh, built from the Go module proxy) is the controller
// under benchmark, on a control plane with Kruise's own CRDs (kruise-process.ts); flags after `--` go to it
// (unthrottled: `-- --rest-config-qps=100000 --rest-config-burst=100000`). Everything else is measured the same way.
//
// After the scale-up, with the pods Ready and the controller settled, K pods (default min(N, 1000); 0 = skip) get
// pod status changes as a kubelet writes them, and the reconciles per change are counted (status-changes.ts).
//
// Per phase it prints the controller's reconciles and CPU (user + system, from /proc/<pid>/stat): in all, per pod
// and per reconcile. Between the scale-up and the status changes, once the controller has been quiet for 5 s, its
// idle CPU over S seconds (default 30; 0 = skip) with every pod present, from 10 s after the controller settled
// (its last reconcile and the scrapes that watched for it). The scale-up's time breakdown
// (scale-breakdown.ts) is printed next to the limit's, and so is the CPU of every process of the test bed over the
// scale-up and over the limit (process-cpu.ts): on a 2-core machine both keep the cores busy, so the ratio of the
// times follows the ratio of the test bed's CPU.
//
// Without --kubeconfig it starts its own local control plane (state dir .cluster/bench, stopped at the end unless
// --keep-cluster). It installs the CRD, runs the real controller binary as a child process scoped to a fresh
// namespace (flags after `--` are passed to it, e.g. `-- --kube-api-qps=100 --kube-api-burst=200`), follows pods
// and the CloneSet with watches, reads the controller's request counters from its metrics endpoint and its peak
// RSS from /proc (Linux; VmHWM).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CLONESETS } from '../src/kube/resources.ts';
import { benchCloneSet, CloneSetView, fleet, isReady, statusSum } from './cloneset-view.ts';
import { measureLimit, ratio, type LimitOrder } from './limit.ts';
import { scrapeApiServerWrites, writesPerPod } from './apiserver-writes.ts';
import { measureStatusChanges, settled, statusChangeLines } from './status-changes.ts';
import { kruiseCrdFiles, kruiseDir, startKruiseManager } from './kruise-process.ts';
import { diffCounts, eventWrites, peakRssMiB, processCpuSeconds, requestCounters, requestSummary, startController, type ControllerProcess } from './controller-process.ts';
import { controllerTimeLines, controllerTimes, ScaleTimeline } from './scale-breakdown.ts';
import { cpuLines, cpuSpent, type CpuReading, readCpu } from './process-cpu.ts';
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
  withCluster,
  type ClusterArgs,
} from './harness.ts';

const USAGE =
  'usage: node bench/scale.ts [--pods N (1000)] [--clonesets M (1)] [--status-change-pods K (min(N, 1000); 0 = none)] [--idle-seconds S (30; 0 = none)] [--kruise] [--limit-order at-create|after-scheduling] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]\n';

type ScaleArgs = ClusterArgs & { readonly statusChangePods: number; readonly idleSeconds: number; readonly kruise: boolean; readonly limitOrder: LimitOrder };

function parse(argv: readonly string[]): ScaleArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { ...CLUSTER_OPTIONS, 'status-change-pods': { type: 'string' }, 'idle-seconds': { type: 'string' }, kruise: { type: 'boolean' }, 'limit-order': { type: 'string' } },
  });
  const kruise = values.kruise === true;
  // Kruise's CRD replaces ours whole: its own control plane, so that the next run of ours starts from ours.
  const common = clusterArgs(values, positionals, USAGE, kruise ? 'bench-kruise' : 'bench');
  const statusChangePods = Number(values['status-change-pods'] ?? String(Math.min(common.pods, 1000)));
  if (!Number.isInteger(statusChangePods) || statusChangePods < 0 || statusChangePods > common.pods)
    throw new Error(`--status-change-pods: not a count between 0 and --pods (${common.pods}): ${values['status-change-pods'] ?? ''}`);
  const idleSeconds = Number(values['idle-seconds'] ?? '30');
  if (!(idleSeconds >= 0)) throw new Error(`--idle-seconds: not a number of seconds ≥ 0: ${values['idle-seconds'] ?? ''}`);
  const limitOrder = values['limit-order'] ?? 'at-create';
  if (limitOrder !== 'at-create' && limitOrder !== 'after-scheduling') throw new Error(`--limit-order: at-create or after-scheduling, not ${limitOrder}`);
  return { ...common, statusChangePods, idleSeconds, kruise, limitOrder };
}

/** The pause between the controller settling and the idle window (see there). */
const IDLE_LEAD_IN_MS = 10_000;

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const kruise = args.kruise ? kruiseDir() : undefined;
  await withCluster(
    args,
    async (client, kubeconfig) => {
      const ns = namespaceName('bench');
      const stop = new AbortController();
      let controller: ControllerProcess | undefined;
      try {
        await createNamespace(client, ns);
        let modified = 0; // pod updates the view's watch saw: the status changes of the scenario below
        const timeline = new ScaleTimeline();
        let following = true; // the timeline follows the scale-up only
        const view = new CloneSetView(client, ns, stop.signal, (type, pod) => {
          if (type === 'MODIFIED') modified++;
          if (following) timeline.observe(type, pod);
        });
        controller =
          kruise === undefined ? await startController(kubeconfig, ns, args.controllerArgs) : await startKruiseManager(client, kruise, kubeconfig, ns, args.controllerArgs);
        // Caches synced (readyz): the initial lists and watches are the baseline, not part of the scale-up.
        const metricsUrl = controller.metricsUrl;
        const idle = await requestCounters(metricsUrl);

        const n = args.pods;
        const sets = fleet(n, args.cloneSets);
        const who = kruise === undefined ? '' : `Kruise's manager (${kruise}) `;
        const flags = `${who}${args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : kruise === undefined ? `(${DEFAULT_CONTROLLER_FLAGS})` : '(its defaults: --rest-config-qps=30 --rest-config-burst=50)'}`;
        log(`namespace ${ns}; controller pid ${controller.pid}, flags ${flags}; log ${path.relative(ROOT, controller.logFile)}`);
        const times0 = await controllerTimes(metricsUrl);
        const writes0 = await scrapeApiServerWrites(kubeconfig);
        const cpu0 = processCpuSeconds(controller.pid);
        // The test bed's processes when this benchmark started the control plane (not on a cluster of --kubeconfig).
        // The controller by its pid: Kruise's manager does not name the state dir on its command line.
        const controllerPid = new Map([[controller.pid, kruise === undefined ? 'controller' : 'kruise-manager']]);
        const testBedCpu = args.kubeconfig === undefined ? (): CpuReading => readCpu(args.stateDir, controllerPid) : undefined;
        const testBed0 = testBedCpu?.();
        timeline.start();
        const t0 = Date.now();
        for (const [name, replicas] of sets) await client.create(CLONESETS, ns, benchCloneSet(ns, replicas, undefined, name));
        const timeout = 60_000 + n * 1_000;
        const tExist = await until(`${n} pods`, () => (view.pods.size >= n ? Date.now() - t0 : undefined), timeout);
        const tReady = await until(`${n} Ready pods`, () => ([...view.pods.values()].filter(isReady).length >= n ? Date.now() - t0 : undefined), timeout);
        const testBedUp = testBed0 === undefined || testBedCpu === undefined ? undefined : cpuSpent(testBed0, testBedCpu());
        const tStatus = await until(`status.readyReplicas == ${n}`, () => (statusSum(view, 'readyReplicas') === n ? Date.now() - t0 : undefined), timeout);
        // Let the trailing writes (lifecycle Normal, status) settle before reading the counters.
        await until('status.availableReplicas', () => (statusSum(view, 'availableReplicas') === n ? true : undefined), timeout);
        following = false;
        const times1 = await controllerTimes(metricsUrl);
        // The trailing passes (kwok's last status writes, the controller's last status write) belong to the scale-up.
        await settled(metricsUrl, 3_000, timeout).catch(() => log('the controller did not settle after the scale-up; counting on'));
        const up = await requestCounters(metricsUrl);
        const cpuUp = processCpuSeconds(controller.pid) - cpu0;
        const writesUp = diffCounts(await scrapeApiServerWrites(kubeconfig), writes0);
        const rssUp = peakRssMiB(controller.pid);

        // idle, with every pod present
        let idleMilliCpu: number | undefined;
        let idleReconciles = 0;
        const idleSlices: number[] = [];
        if (args.idleSeconds > 0) {
          await settled(metricsUrl, 5_000, timeout).catch(() => log('the controller did not settle; measuring the idle window anyway'));
          // settled() scrapes /metrics every 200 ms, and each scrape leaves garbage in proportion to the pods: a
          // pause without scrapes lets the collection it causes fall before the window, which then measures the
          // controller alone.
          await new Promise((r) => setTimeout(r, IDLE_LEAD_IN_MS));
          const r0 = (await requestCounters(metricsUrl)).get('#reconciles') ?? 0;
          const c0 = processCpuSeconds(controller.pid);
          // By 10 s slices too: a garbage collection of the heap the scale-up left shows in the first ones only.
          let last = c0;
          for (let left = args.idleSeconds; left > 0; left -= 10) {
            const slice = Math.min(10, left);
            await new Promise((r) => setTimeout(r, slice * 1000));
            const now = processCpuSeconds(controller.pid);
            idleSlices.push(((now - last) / slice) * 1000);
            last = now;
          }
          idleMilliCpu = ((processCpuSeconds(controller.pid) - c0) / args.idleSeconds) * 1000;
          idleReconciles = ((await requestCounters(metricsUrl)).get('#reconciles') ?? 0) - r0;
        }
        const events = await eventWrites(client, ns);
        const upTotal = requestSummary(diffCounts(up, idle)).total;

        // pod status changes, as a kubelet writes them, on the settled fleet
        const beforeChanges = await requestCounters(metricsUrl);
        const cpuChanges0 = processCpuSeconds(controller.pid);
        const changes = args.statusChangePods > 0 ? await measureStatusChanges(client, ns, view, args.statusChangePods, metricsUrl, () => modified) : [];
        const afterChanges = await requestCounters(metricsUrl);
        const cpuChanges = processCpuSeconds(controller.pid) - cpuChanges0;

        const t1 = Date.now();
        for (const name of sets.keys()) await client.patch(CLONESETS, ns, name, { spec: { replicas: 0 } }, 'merge');
        const tGone = await until('0 pods', () => (view.pods.size === 0 ? Date.now() - t1 : undefined), timeout);
        const tStatus0 = await until('status.replicas == 0', () => ([...view.cloneSets.values()].every((cs) => cs.status?.replicas === 0) ? Date.now() - t1 : undefined), timeout);
        await settled(metricsUrl, 3_000, timeout).catch(() => log('the controller did not settle after the scale-in; counting on'));
        const down = await requestCounters(metricsUrl);
        const cpuDown = processCpuSeconds(controller.pid) - cpuChanges0 - cpuChanges;
        const rssEnd = peakRssMiB(controller.pid);
        stop.abort();
        await controller.stop();
        controller = undefined;
        await deleteNamespace(client, ns, true);

        log(`the limit: ${n} pods created and made Ready by a direct client…`);
        const limitTimeline = new ScaleTimeline();
        const limit = await measureLimit(kubeconfig, n, timeout, false, limitTimeline, args.limitOrder, testBedCpu);

        const requests = (c: Map<string, number>): string => requestSummary(c).text;
        const row = (label: string, value: string): string => `  ${label.padEnd(42)}${value}`;
        const reconciles = (after: Map<string, number>, before: Map<string, number>): number => (after.get('#reconciles') ?? 0) - (before.get('#reconciles') ?? 0);
        const cpuRows = (cpu: number, recs: number, pods: number): string[] => [
          row('reconciles', String(recs)),
          row(
            'controller CPU',
            `${cpu.toFixed(2)} s  (${pods > 0 ? ((cpu / pods) * 1000).toFixed(2) : 'n/a'} ms per pod, ${recs > 0 ? ((cpu / recs) * 1000).toFixed(2) : 'n/a'} ms per reconcile)`,
          ),
        ];
        const lines = [
          `CloneSet scale benchmark: ${n} pods in ${sets.size} CloneSet(s), controller ${flags}`,
          `(request counts are the controller's rest_client_requests_total by verb, its event writes included)`,
          `scale 0 → ${n}`,
          row(`${n} pods exist`, `${secs(tExist)}  (${ratio(tExist, limit.existMs)} the limit)`),
          row(`${n} pods Ready`, `${secs(tReady)}  (${ratio(tReady, limit.readyMs)} the limit)`),
          row(`status.readyReplicas == ${n}`, `${secs(tStatus)}  (${ratio(tStatus, limit.readyMs)} the limit)`),
          row('controller API requests', requests(diffCounts(up, idle))),
          row('  of which Events (POST + PATCH)', `${events.posts + events.patches} (${events.posts} + ${events.patches})`),
          row('requests per pod, without Events', ((upTotal - events.posts - events.patches) / n).toFixed(2)),
          row("every client's writes per pod", writesPerPod(writesUp, n)),
          row("  the limit's", writesPerPod(limit.apiWrites, n)),
          ...cpuRows(cpuUp, reconciles(up, idle), n),
          row('controller peak RSS so far', rssUp),
          `scale 0 → ${n}: where the time goes (this run / the limit; watch receive times)`,
          ...timeline.lines(row),
          ...controllerTimeLines(times0, times1, row),
          `  the limit:`,
          ...limitTimeline.lines(row),
          ...(testBedUp === undefined || limit.testBedCpu === undefined
            ? []
            : [`scale 0 → ${n}: where the CPU goes (the create of the CloneSet to every pod Ready)`, ...cpuLines(testBedUp, limit.testBedCpu, row)]),
          ...(idleMilliCpu === undefined
            ? []
            : [
                `idle with ${n} pods (${args.idleSeconds} s, after 5 s quiet and ${IDLE_LEAD_IN_MS / 1000} s without scrapes)`,
                row('controller CPU', `${idleMilliCpu.toFixed(1)} mCPU  (by 10 s: ${idleSlices.map((m) => m.toFixed(1)).join(', ')})`),
                row('reconciles', String(idleReconciles)),
              ]),
          ...statusChangeLines(changes, row),
          ...(changes.length > 0
            ? [
                `pod status changes, both kinds`,
                ...cpuRows(
                  cpuChanges,
                  reconciles(afterChanges, beforeChanges),
                  changes.reduce((a, f) => a + f.changes, 0),
                ).map((l) => l.replace('per pod', 'per change')),
              ]
            : []),
          `scale ${n} → 0`,
          row('all pods gone', secs(tGone)),
          row('status.replicas == 0', secs(tStatus0)),
          row('controller API requests', requests(diffCounts(down, afterChanges))),
          ...cpuRows(cpuDown, reconciles(down, afterChanges), n),
          `whole run`,
          row('startup requests (list + watch)', requests(idle)),
          row('total API requests', requests(down)),
          row('controller peak RSS (VmHWM)', rssEnd),
          `the limit: a direct client, no controller, ${n} pods created + 1 status patch each (${args.limitOrder === 'at-create' ? 'right after the create' : 'once the pod is scheduled'}), 64 in flight, no client limit`,
          row(`${n} pods exist`, secs(limit.existMs)),
          row(`${n} pods Ready`, secs(limit.readyMs)),
          row('API requests', String(limit.requests)),
          row(
            'client CPU (this process, /proc)',
            `${limit.cpuSeconds.toFixed(2)} s  (${((limit.cpuSeconds / n) * 1000).toFixed(2)} ms per pod; the controller's scale-up: ${ratio(cpuUp, limit.cpuSeconds)} this)`,
          ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        stop.abort();
        await controller?.stop();
        if (controller !== undefined) await deleteNamespace(client, ns, false);
      }
    },
    { kruiseCrds: kruise === undefined ? undefined : kruiseCrdFiles(kruise) },
  );
}

runBenchmark(main);
