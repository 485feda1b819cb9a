// In-place update benchmark: an N-pod CloneSet (InPlaceIfPossible) gets a new image; every pod is updated in place
// (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update.go). Prints the rollout time (image patch → status reports every pod updated and Ready), the controller's
// API requests during it — writes per updated pod in particular — and checks that no pod was created or deleted,
// that every container restarted exactly once, and the largest number of not-Ready pods seen on the way.
//
//   node bench/inplace.ts [--pods 1000] [--max-unavailable 20%] [--grace 0] [--kubeconfig PATH] [--state-dir DIR]
//                         [--keep-cluster] [-- <controller flags>]
//
// Without --kubeconfig it starts its own local control plane (state dir .cluster/bench-inplace, stopped at the end
// unless --keep-cluster). The run gets a fresh namespace and its own controller process (the real binary, scoped
// to the namespace, metrics on a free local port); the shared machinery is in bench/harness.ts,
// bench/controller-process.ts and bench/cloneset-view.ts.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { IntOrString } from '../src/api/cloneset.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { CLONESETS } from '../src/kube/resources.ts';
import { benchCloneSet, CloneSetView, isActive, isReady, rollOutNewImage, waitForAvailable } from './cloneset-view.ts';
import { measureInPlaceLimit, ratio, type Limit } from './limit.ts';
import { diffCounts, eventWrites, requestCounters, requestSummary, startController, type ControllerProcess, type RequestSummary } from './controller-process.ts';
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

const WRITE_VERBS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Args extends ClusterArgs {
  readonly maxUnavailable: IntOrString;
  readonly grace: number;
}

const USAGE = `usage: node bench/inplace.ts [--pods N (1000)] [--max-unavailable V (20%)] [--grace SECONDS (0)]
                              [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]
`;

const intOrPercent = (v: string): IntOrString => (/^\d+$/.test(v) ? Number(v) : v);

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { ...CLUSTER_OPTIONS, 'max-unavailable': { type: 'string' }, grace: { type: 'string' } },
  });
  const common = clusterArgs(values, positionals, USAGE, 'bench-inplace');
  const grace = Number(values.grace ?? '0');
  if (!Number.isInteger(grace) || grace < 0) throw new Error(`--grace: not a number of seconds: ${values.grace ?? ''}`);
  return { ...common, maxUnavailable: intOrPercent(values['max-unavailable'] ?? '20%'), grace };
}

interface Result {
  readonly limit: Limit;
  readonly rolloutMs: number;
  readonly allUpdatedReadyMs: number;
  readonly requests: RequestSummary;
  readonly writes: number;
  /** PATCHes of pods (the rollout's writes less CloneSet status and Events) */
  readonly podWrites: number;
  readonly reconciles: number;
  readonly statusConflicts: number;
  readonly created: number;
  readonly deleted: number;
  readonly maxNotReady: number;
  readonly restarts: string;
  readonly scaleUpMs: number;
  readonly logFile: string;
}

async function run(client: KubeClient, kubeconfig: string, args: Args): Promise<Result> {
  const ns = namespaceName('bench-inplace');
  const stop = new AbortController();
  let controller: ControllerProcess | undefined;
  const n = args.pods;
  try {
    await createNamespace(client, ns);

    // The benchmark's own view (its requests are not the controller's).
    let measuring = false;
    let created = 0;
    let deleted = 0;
    let maxNotReady = 0;
    const view: CloneSetView = new CloneSetView(client, ns, stop.signal, (type) => {
      if (!measuring) return;
      if (type === 'ADDED') created++;
      if (type === 'DELETED') deleted++;
      let notReady = 0;
      for (const p of view.pods.values()) if (isActive(p) && !isReady(p)) notReady++;
      maxNotReady = Math.max(maxNotReady, notReady);
    });

    controller = await startController(kubeconfig, ns, args.controllerArgs);
    const logFile = controller.logFile;
    log(`namespace ${ns}; controller log ${path.relative(ROOT, logFile)}`);

    const t0 = Date.now();
    await client.create(
      CLONESETS,
      ns,
      benchCloneSet(ns, n, {
        type: 'InPlaceIfPossible',
        maxUnavailable: args.maxUnavailable,
        ...(args.grace > 0 ? { inPlaceUpdateStrategy: { gracePeriodSeconds: args.grace } } : {}),
      }),
    );
    const timeout = 120_000 + n * 1_000;
    await waitForAvailable(view, n, timeout);
    const scaleUpMs = Date.now() - t0;
    log(`${n} pods available after ${secs(scaleUpMs)}; rolling out a new image in place…`);

    const before = await requestCounters(controller.metricsUrl);
    const eventsBefore = await eventWrites(client, ns);
    measuring = true;
    const { allUpdatedReadyMs, rolloutMs } = await rollOutNewImage(client, ns, view, n, timeout);
    // Trailing writes (lifecycle Normal of the last pods, the final status) belong to the rollout.
    await until('status.updatedAvailableReplicas', () => (view.cloneSet?.status?.updatedAvailableReplicas === n ? true : undefined), timeout);
    measuring = false;
    const used = diffCounts(await requestCounters(controller.metricsUrl), before);
    const restartCounts = new Map<number, number>();
    for (const p of view.pods.values()) {
      const r = p.status?.containerStatuses?.[0]?.restartCount ?? 0;
      restartCounts.set(r, (restartCounts.get(r) ?? 0) + 1);
    }
    const restarts = [...restartCounts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([r, c]) => `${c}×${r}`)
      .join(', ');
    const writes = [...used.entries()].filter(([k]) => WRITE_VERBS.has(k)).reduce((a, [, v]) => a + v, 0);
    await controller.stop();
    controller = undefined;
    log('the limit: the same three writes per pod by a direct client, back to nginx:alpine…');
    const limit = await measureInPlaceLimit(kubeconfig, ns, () => [...view.pods.values()].filter(isActive), 'nginx:alpine', timeout);
    // Pods are only ever PATCHed here (no pod is created or deleted): PATCHes less the Events' own.
    const eventsAfter = await eventWrites(client, ns);
    const podWrites = (used.get('PATCH') ?? 0) - (eventsAfter.patches - eventsBefore.patches);
    return {
      limit,
      rolloutMs,
      allUpdatedReadyMs,
      requests: requestSummary(used),
      writes,
      podWrites,
      reconciles: used.get('#reconciles') ?? 0,
      statusConflicts: used.get('#PUT 409') ?? 0,
      created,
      deleted,
      maxNotReady,
      restarts,
      scaleUpMs,
      logFile,
    };
  } finally {
    stop.abort();
    await controller?.stop();
    await deleteNamespace(client, ns, true);
  }
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  await withCluster(args, async (client, kubeconfig) => {
    const r = await run(client, kubeconfig, args);
    const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : DEFAULT_CONTROLLER_FLAGS;
    const lines = [
      `CloneSet in-place update benchmark: ${args.pods} pods, InPlaceIfPossible, maxUnavailable ${String(args.maxUnavailable)}, gracePeriodSeconds ${args.grace}; controller ${flags}`,
      `rollout (image patch → status: every pod updated and Ready): ${secs(r.rolloutMs)} (all pods Ready on the new revision after ${secs(r.allUpdatedReadyMs)}, ${ratio(r.allUpdatedReadyMs, r.limit.readyMs)} the limit)`,
      `controller API requests during the rollout: ${r.requests.text}; ${r.reconciles} reconciles; ${r.statusConflicts} PUTs answered 409 Conflict (status writes on a stale CloneSet)`,
      `API writes: ${r.writes} = ${(r.writes / args.pods).toFixed(2)} per updated pod; pod writes: ${r.podWrites} = ${(r.podWrites / args.pods).toFixed(2)} per updated pod`,
      `pods created ${r.created}, deleted ${r.deleted}; container restarts per pod: ${r.restarts}; max not Ready at once ${r.maxNotReady}`,
      `(initial scale 0 → ${args.pods}: ${secs(r.scaleUpMs)}; controller log ${path.relative(ROOT, r.logFile)})`,
      `the limit: a direct client, controller stopped, the same 3 writes per pod (not ready, image, ready), 64 in flight, no client limit, no maxUnavailable: all ${args.pods} pods Ready on the new image after ${secs(r.limit.readyMs)} (writes sent after ${secs(r.limit.existMs)}; ${r.limit.requests} requests)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

runBenchmark(main);
