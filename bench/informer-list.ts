// What the controller's first list of N pods costs under a set of node flags: the pod informer of a controller
// start-up (its paginated list, the cache transform of src/cloneset/cache-transforms.ts, the store), in a fresh
// node process per measurement, against a plain paginated list of the same pods (the baseline: no transform, no
// cache). Printed per flag set: wall time (and its ratio to the plain list of the same round), CPU, full garbage
// collections, peak RSS, V8 heap used after the list.
//
//   node bench/informer-list.ts [--pods N (10000)] [--rounds R (2)] [--flags 'A|B|…'] [--kubeconfig PATH [--namespace NS]] [--state-dir DIR] [--keep-cluster]
//
// --namespace: list the pods of that namespace as they are (one made by an earlier run kept with --keep-cluster,
// whose first line names it) instead of creating N pods: the same pods measured again after a change.
// --flags: the node flag sets to compare, separated by '|' (default: the controller's, CONTROLLER_NODE_FLAGS of
// tools/localcluster/controller-build.ts; those with --heap-growing-percent=50; none). Each round measures the plain
// list, then every flag set once, so a change of the machine's load shows up across rounds instead of in one flag set.
// The pods (one namespace, owned by a CloneSet that no controller runs, bound to the nodes in turn) are created
// first, 64 in flight, and made Running by kwok; they are left to the cluster's deletion.
// docs/performance.md, "Node flags", has the figures at 100 000 pods.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { podTransform } from '../src/cloneset/cache-transforms.ts';
import { KubeClient } from '../src/kube/client.ts';
import { loadKubeConfig } from '../src/kube/kubeconfig.ts';
import { CLONESETS, NODES, PODS } from '../src/kube/resources.ts';
import type { Pod } from '../src/kube/types.ts';
import { runBounded } from '../src/runtime/bounded-parallel.ts';
import { systemClock } from '../src/runtime/clock.ts';
import { Informer } from '../src/runtime/informer.ts';
import { indexByOwnerUid } from '../src/runtime/store.ts';
import { CONTROLLER_NODE_FLAGS } from '../tools/localcluster/controller-build.ts';
import { APP, benchCloneSet } from './cloneset-view.ts';
import { CLUSTER_OPTIONS, clusterArgs, createNamespace, log, namespaceName, runBenchmark, secs, until, withCluster } from './harness.ts';

const USAGE = "usage: node bench/informer-list.ts [--pods N (10000)] [--rounds R (2)] [--flags 'A|B|…'] [--kubeconfig PATH [--namespace NS]] [--state-dir DIR] [--keep-cluster]\n";

/** The CloneSet that owns the listed pods (no controller runs it). */
const OWNER = 'listed';

/** What one measuring process prints, as one JSON line. */
interface Measured {
  readonly pods: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly fullGcs: number;
  readonly maxRssMiB: number;
  readonly heapUsedMiB: number;
}

/** The child: one list of the namespace's pods, `plain` (listAll alone) or as the controller's pod informer. */
async function measureOnce(kubeconfig: string, ns: string, mode: 'plain' | 'informer'): Promise<Measured> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { qps: 0, burst: 0 });
  let fullGcs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++;
  });
  gcs.observe({ entryTypes: ['gc'] });
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const t0 = performance.now();
  const c0 = cpu();
  let pods: number;
  // What was listed stays referenced until the heap is measured below.
  let keep: unknown;
  if (mode === 'plain') {
    const listed = await client.listAll<Pod>(PODS, ns);
    pods = listed.items.length;
    keep = listed;
  } else {
    const informer = new Informer<Pod>({
      client,
      clock: systemClock,
      logger: pino({ level: 'warn' }),
      resource: PODS,
      namespace: ns,
      indexers: { owner: indexByOwnerUid },
      transform: podTransform(),
    });
    const stop = new AbortController();
    informer.start(stop.signal);
    await informer.waitForSync();
    pods = informer.store.list().length;
    keep = informer;
    stop.abort();
  }
  const wallMs = performance.now() - t0;
  const cpuMs = cpu() - c0;
  // The gc entries of the list are delivered asynchronously.
  await new Promise((r) => setImmediate(r));
  gcs.disconnect();
  client.close();
  void keep;
  return { pods, wallMs, cpuMs, fullGcs, maxRssMiB: process.resourceUsage().maxRSS / 1024, heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20 };
}

/** Runs this file as a child under `nodeFlags` and returns what it measured. */
function measureInChild(nodeFlags: readonly string[], kubeconfig: string, ns: string, mode: 'plain' | 'informer'): Promise<Measured> {
  const self = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, self, '--measure', mode, '--kubeconfig', kubeconfig, '--namespace', ns], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the measuring process (node ${nodeFlags.join(' ')}) exited with ${String(code)}`));
      try {
        resolve(JSON.parse(out) as Measured);
      } catch {
        reject(new Error(`the measuring process printed no figures: ${out.slice(0, 200)}`));
      }
    });
  });
}

/** N pods owned by a CloneSet of the namespace (no controller runs it), bound to the nodes in turn; waits for kwok to make them Running. */
async function createPods(client: KubeClient, ns: string, n: number): Promise<void> {
  const cloneSet = await client.create<{ metadata: { uid?: string } }>(CLONESETS, ns, benchCloneSet(ns, 0, undefined, OWNER));
  const uid = cloneSet.metadata.uid ?? '';
  const nodes = (await client.listAll<{ metadata: { name?: string } }>(NODES, undefined)).items.map((x) => x.metadata.name ?? '').filter((x) => x !== '');
  if (nodes.length === 0) throw new Error('no nodes to bind the pods to');
  const t0 = Date.now();
  let created = 0;
  const { error } = await runBounded(
    Array.from({ length: n }, (_, i) => async () => {
      const name = `listed-${i.toString(36).padStart(5, '0')}`;
      await client.create(PODS, ns, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          labels: {
            app: APP,
            cloneset: OWNER,
            'apps.kruise.io/cloneset-instance-id': name,
            'controller-revision-hash': 'listed-7d9f8c6b5',
            'lifecycle.apps.kruise.io/state': 'Normal',
          },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: OWNER, uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: { nodeName: nodes[i % nodes.length], containers: [{ name: 'nginx', image: 'nginx:alpine' }], readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
      });
      if (++created % 10_000 === 0) log(`${created} pods created (${secs(Date.now() - t0)})`);
    }),
    64,
  );
  if (error !== undefined) throw error;
  log(`${n} pods created in ${secs(Date.now() - t0)}; waiting for kwok to make them Running…`);
  await until(
    `${n} pods Running`,
    async () => {
      const { items } = await client.listAll<Pod>(PODS, ns);
      return items.filter((p) => p.status?.phase === 'Running').length >= n ? true : undefined;
    },
    3_600_000,
    10_000,
  );
  log(`${n} pods Running after ${secs(Date.now() - t0)}`);
}

const fmt = (m: Measured, plainMs: number): string =>
  `${secs(m.wallMs).padStart(8)} (${(m.wallMs / plainMs).toFixed(2)}× plain)  CPU ${secs(m.cpuMs).padStart(8)}  full GCs ${String(m.fullGcs).padStart(4)}  peak RSS ${m.maxRssMiB.toFixed(0).padStart(4)} MiB  heap ${m.heapUsedMiB.toFixed(0).padStart(4)} MiB`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { ...CLUSTER_OPTIONS, rounds: { type: 'string' }, flags: { type: 'string' }, measure: { type: 'string' }, namespace: { type: 'string' } },
    allowPositionals: true,
  });
  if (values.measure !== undefined) {
    // the child
    const mode = values.measure === 'plain' ? 'plain' : 'informer';
    process.stdout.write(JSON.stringify(await measureOnce(values.kubeconfig ?? '', values.namespace ?? '', mode)));
    return;
  }
  const args = clusterArgs({ ...values, pods: values.pods ?? '10000' }, positionals, USAGE, 'bench-list');
  const rounds = Number(values.rounds ?? '2');
  if (!Number.isInteger(rounds) || rounds <= 0) throw new Error(`--rounds: not a positive count: ${values.rounds ?? ''}`);
  const withGrowth = [...CONTROLLER_NODE_FLAGS, '--heap-growing-percent=50'];
  const flagSets = values.flags === undefined ? [CONTROLLER_NODE_FLAGS, withGrowth, []] : values.flags.split('|').map((s) => s.split(' ').filter((f) => f !== ''));
  await withCluster(
    args,
    async (client, kubeconfig) => {
      // --namespace with --kubeconfig: a namespace of an earlier run (--keep-cluster), its pods listed again as they are.
      const ns = values.namespace ?? namespaceName('list');
      if (values.namespace === undefined) {
        log(`creating ${args.pods} pods in namespace ${ns}…`);
        await createNamespace(client, ns);
        await createPods(client, ns, args.pods);
      }
      const lines: string[] = [];
      let listed = args.pods;
      for (let r = 1; r <= rounds; r++) {
        log(`round ${r}/${rounds}: the plain list, then ${flagSets.length} flag sets…`);
        const plain = await measureInChild([], kubeconfig, ns, 'plain');
        listed = plain.pods;
        lines.push(`round ${r}: plain list (no transform, no cache, V8's defaults)`.padEnd(84) + fmt(plain, plain.wallMs));
        for (const flags of flagSets) {
          const m = await measureInChild(flags, kubeconfig, ns, 'informer');
          lines.push(`round ${r}: informer, node ${flags.length === 0 ? "(V8's defaults)" : flags.join(' ')}`.padEnd(84) + fmt(m, plain.wallMs));
        }
      }
      process.stdout.write(`the pod informer's first list of ${listed} pods (list pages of 500)\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    },
    { profile: args.pods > 30_000 ? 'large' : 'default' },
  );
}

runBenchmark(main);
