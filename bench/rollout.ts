// Rollout benchmark: how long a ReCreate rollout of an N-pod CloneSet takes (new image → every pod on the new
// revision, Ready, and the status saying so), how many API requests the controller sends for it, and the largest
// number of pods / unavailable pods seen on the way — with Kruise's surge arithmetic and with ours
// (--cloneset-surge-rule, see src/cloneset/plan/replica-diff.ts SurgeRule; kruise#1442, kruise#2491).
//
//   node bench/rollout.ts [--pods 1000] [--max-unavailable 20%] [--max-surge 20%] [--surge-rule both|sustained|kruise]
//                         [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
//
// Without --kubeconfig it starts its own local control plane (state dir .cluster/bench-rollout, stopped at the end
// unless --keep-cluster). Each run gets a fresh namespace and its own controller process (the real binary, scoped
// to the namespace, metrics on a free local port). With a maxSurge the default is to run both surge rules; without
// one the rules are identical (the rule only changes how a surge is sized) and a single run is made.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { IntOrString } from '../src/api/cloneset.ts';
import type { SurgeRule } from '../src/cloneset/plan/replica-diff.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { CLONESETS } from '../src/kube/resources.ts';
import { benchCloneSet, CloneSetView, isActive, isReady, rollOutNewImage, waitForAvailable } from './cloneset-view.ts';
import { diffCounts, requestCounters, requestSummary, startController, type ControllerProcess, type RequestSummary } from './controller-process.ts';
import { measureLimit, ratio } from './limit.ts';
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

interface Args extends ClusterArgs {
  readonly maxUnavailable: IntOrString | undefined;
  readonly maxSurge: IntOrString | undefined;
  readonly rules: readonly SurgeRule[];
}

const USAGE = `usage: node bench/rollout.ts [--pods N (1000)] [--max-unavailable V (20%)] [--max-surge V] [--surge-rule both|sustained|kruise]
                             [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]
`;

const intOrPercent = (v: string | undefined): IntOrString | undefined => (v === undefined ? undefined : /^\d+$/.test(v) ? Number(v) : v);

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { ...CLUSTER_OPTIONS, 'max-unavailable': { type: 'string' }, 'max-surge': { type: 'string' }, 'surge-rule': { type: 'string' } },
  });
  const common = clusterArgs(values, positionals, USAGE, 'bench-rollout');
  const maxSurge = intOrPercent(values['max-surge']);
  const rule = values['surge-rule'] ?? (maxSurge === undefined ? 'sustained' : 'both');
  if (rule !== 'both' && rule !== 'sustained' && rule !== 'kruise') throw new Error(`--surge-rule: both, sustained or kruise, not ${rule}`);
  return {
    ...common,
    maxUnavailable: intOrPercent(values['max-unavailable'] ?? '20%'),
    maxSurge,
    rules: rule === 'both' ? ['kruise', 'sustained'] : [rule],
  };
}

interface Result {
  readonly rule: SurgeRule;
  readonly rolloutMs: number;
  readonly allUpdatedReadyMs: number;
  readonly requests: RequestSummary;
  readonly reconciles: number;
  readonly created: number;
  readonly maxPods: number;
  readonly maxUnavailable: number;
  readonly scaleUpMs: number;
}

async function runOnce(client: KubeClient, kubeconfig: string, args: Args, rule: SurgeRule): Promise<Result> {
  const ns = namespaceName('bench-rollout');
  const stop = new AbortController();
  let controller: ControllerProcess | undefined;
  const n = args.pods;
  try {
    await createNamespace(client, ns);

    // The benchmark's own view (its requests are not the controller's).
    let measuring = false;
    let created = 0;
    let maxPods = 0;
    let maxUnavailable = 0;
    const view: CloneSetView = new CloneSetView(client, ns, stop.signal, (type) => {
      if (!measuring) return;
      if (type === 'ADDED') created++;
      let active = 0;
      let ready = 0;
      for (const p of view.pods.values()) {
        if (isActive(p)) active++;
        if (isReady(p)) ready++;
      }
      maxPods = Math.max(maxPods, active);
      maxUnavailable = Math.max(maxUnavailable, n - ready);
    });

    controller = await startController(kubeconfig, ns, [`--cloneset-surge-rule=${rule}`, ...args.controllerArgs]);
    log(`[${rule}] namespace ${ns}; controller log ${path.relative(ROOT, controller.logFile)}`);

    const updateStrategy = {
      ...(args.maxUnavailable !== undefined ? { maxUnavailable: args.maxUnavailable } : {}),
      ...(args.maxSurge !== undefined ? { maxSurge: args.maxSurge } : {}),
    };
    const t0 = Date.now();
    await client.create(CLONESETS, ns, benchCloneSet(ns, n, updateStrategy));
    const timeout = 120_000 + n * 1_000;
    await waitForAvailable(view, n, timeout);
    const scaleUpMs = Date.now() - t0;
    log(`[${rule}] ${n} pods available after ${secs(scaleUpMs)}; rolling out a new image…`);

    const before = await requestCounters(controller.metricsUrl);
    measuring = true;
    const { allUpdatedReadyMs, rolloutMs } = await rollOutNewImage(client, ns, view, n, timeout);
    measuring = false;
    // Trailing writes (lifecycle Normal of the last pods, the final status) belong to the rollout.
    await until('status.updatedAvailableReplicas', () => (view.cloneSet?.status?.updatedAvailableReplicas === n ? true : undefined), timeout);
    const used = diffCounts(await requestCounters(controller.metricsUrl), before);
    return { rule, rolloutMs, allUpdatedReadyMs, requests: requestSummary(used), reconciles: used.get('#reconciles') ?? 0, created, maxPods, maxUnavailable, scaleUpMs };
  } finally {
    stop.abort();
    await controller?.stop();
    await deleteNamespace(client, ns, true);
  }
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  await withCluster(args, async (client, kubeconfig) => {
    const results: Result[] = [];
    for (const rule of args.rules) results.push(await runOnce(client, kubeconfig, args, rule));
    // The limit (limit.ts): the API server creating and readying as many pods, with no controller. A ReCreate rollout
    // also deletes every old pod, so the ratio says how far the rollout is from the cost of its creates alone.
    log(`the limit: ${args.pods} pods created and made Ready by a direct client…`);
    const limit = await measureLimit(kubeconfig, args.pods, 60_000 + args.pods * 1_000);
    const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : DEFAULT_CONTROLLER_FLAGS;
    const strategy = [`maxUnavailable ${String(args.maxUnavailable ?? '20%')}`, ...(args.maxSurge !== undefined ? [`maxSurge ${String(args.maxSurge)}`] : [])].join(', ');
    const lines = [
      `CloneSet ReCreate rollout benchmark: ${args.pods} pods, ${strategy}; controller ${flags}`,
      `(rollout = image patch → status reports every pod updated and Ready; requests = the controller's rest_client_requests_total during it)`,
      `${'surge rule'.padEnd(12)}${'rollout'.padStart(10)}${'× limit'.padStart(9)}${'pods ready'.padStart(12)}${'requests'.padStart(10)}${'reconciles'.padStart(12)}${'created'.padStart(9)}${'max pods'.padStart(10)}${'max unavail'.padStart(13)}   requests by verb`,
      ...results.map(
        (r) =>
          `${r.rule.padEnd(12)}${secs(r.rolloutMs).padStart(10)}${ratio(r.rolloutMs, limit.readyMs).padStart(9)}${secs(r.allUpdatedReadyMs).padStart(12)}${String(r.requests.total).padStart(10)}` +
          `${String(r.reconciles).padStart(12)}${String(r.created).padStart(9)}${String(r.maxPods).padStart(10)}${String(r.maxUnavailable).padStart(13)}   ${r.requests.text}`,
      ),
      `(initial scale 0 → ${args.pods}: ${results.map((r) => `${r.rule} ${secs(r.scaleUpMs)}`).join(', ')})`,
      `the limit: a direct client, no controller, ${args.pods} pods created + 1 status patch each, 64 in flight, no client limit: all Ready after ${secs(limit.readyMs)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

runBenchmark(main);
