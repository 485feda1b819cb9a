// In-place update benchmark: an N-pod CloneSet (InPlaceIfPossible) gets a new image; every pod is updated in place
// (spec §12). Prints the rollout time (image patch → status reports every pod updated and Ready), the controller's
// API requests during it — writes per updated pod in particular — and checks that no pod was created or deleted,
// that every container restarted exactly once, and the largest number of not-Ready pods seen on the way.
//
//   node bench/inplace.ts [--pods 1000] [--max-unavailable 20%] [--grace 0] [--kubeconfig PATH] [--state-dir DIR]
//                         [--keep-cluster] [-- <controller flags>]
//
// Without --kubeconfig it starts its own local control plane (state dir .cluster/bench-inplace, stopped at the end
// unless --keep-cluster). The run gets a fresh namespace and its own controller process (the real binary, scoped
// to the namespace, metrics on a free local port). Self-contained (bench/rollout.ts runs on import).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { CloneSet, IntOrString } from '../src/api/cloneset.ts';
import { isAlreadyExists, isNotFound } from '../src/kube/api-error.ts';
import { KubeClient, type WatchEvent } from '../src/kube/client.ts';
import { loadKubeConfig } from '../src/kube/kubeconfig.ts';
import { CLONESETS, CRDS, NAMESPACES, PODS, type ResourceRef } from '../src/kube/resources.ts';
import type { KubeObject, Pod } from '../src/kube/types.ts';
import { kubeconfigPathOf, startLocalCluster, stopLocalCluster } from '../src/localcluster/cluster.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CRD_FILE = path.join(ROOT, 'config/crd/apps.kruise.io_clonesets.yaml');
const APP = 'bench';
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true };
const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete']);

interface Args {
  readonly pods: number;
  readonly maxUnavailable: IntOrString;
  readonly grace: number;
  readonly kubeconfig: string | undefined;
  readonly stateDir: string;
  readonly keepCluster: boolean;
  readonly controllerArgs: readonly string[];
}

const USAGE = `usage: node bench/inplace.ts [--pods N (1000)] [--max-unavailable V (20%)] [--grace SECONDS (0)]
                              [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]
`;

const intOrPercent = (v: string): IntOrString => (/^\d+$/.test(v) ? Number(v) : v);

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      pods: { type: 'string' },
      'max-unavailable': { type: 'string' },
      grace: { type: 'string' },
      kubeconfig: { type: 'string' },
      'state-dir': { type: 'string' },
      'keep-cluster': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const pods = Number(values.pods ?? '1000');
  if (!Number.isInteger(pods) || pods <= 0) throw new Error(`--pods: not a positive count: ${values.pods ?? ''}`);
  const grace = Number(values.grace ?? '0');
  if (!Number.isInteger(grace) || grace < 0) throw new Error(`--grace: not a number of seconds: ${values.grace ?? ''}`);
  return {
    pods,
    maxUnavailable: intOrPercent(values['max-unavailable'] ?? '20%'),
    grace,
    kubeconfig: values.kubeconfig,
    stateDir: path.resolve(values['state-dir'] ?? path.join(ROOT, '.cluster', 'bench-inplace')),
    keepCluster: values['keep-cluster'] === true,
    controllerArgs: positionals,
  };
}

const log = (msg: string): void => void process.stderr.write(`${msg}\n`);
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${secs(timeoutMs)} waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

async function installCrd(client: KubeClient): Promise<void> {
  const crd = parseYaml(readFileSync(CRD_FILE, 'utf8')) as KubeObject;
  const name = crd.metadata?.name ?? '';
  try {
    await client.create(CRDS, undefined, crd);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const live = await client.get<KubeObject>(CRDS, undefined, name);
    await client.update(CRDS, undefined, name, { ...crd, metadata: { ...crd.metadata, resourceVersion: live.metadata?.resourceVersion } });
  }
  await until('the CRD to be established', async () => {
    const live = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(CRDS, undefined, name);
    return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true ? true : undefined;
  }, 60_000);
}

/** List then watch `r`, resuming after each stream end, until `signal` aborts. */
async function follow(client: KubeClient, r: ResourceRef, ns: string, labelSelector: string | undefined, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
  const sel = labelSelector !== undefined ? { labelSelector } : {};
  let rv = '';
  while (!signal.aborted) {
    try {
      if (rv === '') {
        const list = await client.list<KubeObject>(r, ns, sel);
        for (const object of list.items) onEvent({ type: 'ADDED', object });
        rv = list.metadata.resourceVersion ?? '';
      }
      await client.watch(r, ns, { resourceVersion: rv, timeoutSeconds: 300, allowWatchBookmarks: true, ...sel }, (e) => {
        if (e.type === 'ERROR') return;
        rv = e.object.metadata?.resourceVersion ?? rv;
        if (e.type !== 'BOOKMARK') onEvent(e);
      }, signal);
    } catch (e) {
      if (signal.aborted) return;
      log(`watch ${r.plural} restarted: ${e instanceof Error ? e.message : String(e)}`);
      rv = '';
      await new Promise((res) => setTimeout(res, 500));
    }
  }
}

interface Controller {
  readonly metricsUrl: string;
  readonly readyzUrl: string;
  stop(): Promise<void>;
}

function startController(kubeconfig: string, ns: string, metricsPort: number, probePort: number, extra: readonly string[], logFile: string): Controller {
  const out = createWriteStream(logFile);
  const proc = spawn(process.execPath, [
    '--disable-warning=ExperimentalWarning', path.join(ROOT, 'src/main.ts'), '--kubeconfig', kubeconfig, '-n', ns,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`, `--health-probe-bind-address=127.0.0.1:${probePort}`, '--log-level=info', ...extra,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.pipe(out);
  proc.stderr.pipe(out);
  const exited = once(proc, 'exit');
  return {
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    readyzUrl: `http://127.0.0.1:${probePort}/readyz`,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** rest_client_requests_total by verb (a metric without labels counts as verb "all"), plus reconciles. */
async function counters(metricsUrl: string): Promise<Map<string, number>> {
  const body = await (await fetch(metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const m of body.matchAll(/^rest_client_requests_total(?:\{[^}]*verb="(\w+)"[^}]*\})? (\d+)/gm)) counts.set(m[1] ?? 'all', Number(m[2]));
  const reconciles = /^controller_runtime_reconcile_total(?:\{[^}]*\})? (\d+)/m.exec(body);
  if (reconciles !== null) counts.set('#reconciles', Number(reconciles[1]));
  return counts;
}

function diffCounts(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [k, n] of after) if (n - (before.get(k) ?? 0) > 0) d.set(k, n - (before.get(k) ?? 0));
  return d;
}

function requestSummary(c: Map<string, number>): { total: number; text: string } {
  const verbs = [...c.entries()].filter(([k]) => !k.startsWith('#'));
  const total = verbs.reduce((a, [, n]) => a + n, 0);
  const parts = verbs.sort((a, b) => b[1] - a[1]).map(([v, n]) => `${v} ${n}`);
  return { total, text: `${total} (${parts.join(', ')})` };
}

const isActive = (p: Pod): boolean => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded';
const isReady = (p: Pod): boolean => isActive(p) && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

interface Result {
  readonly rolloutMs: number;
  readonly allUpdatedReadyMs: number;
  readonly requests: { total: number; text: string };
  readonly writes: number;
  readonly reconciles: number;
  readonly created: number;
  readonly deleted: number;
  readonly maxNotReady: number;
  readonly restarts: string;
  readonly scaleUpMs: number;
  readonly logFile: string;
}

async function run(client: KubeClient, kubeconfig: string, args: Args): Promise<Result> {
  const ns = `bench-inplace-${randomBytes(3).toString('hex')}`;
  const stop = new AbortController();
  let controller: Controller | undefined;
  const n = args.pods;
  try {
    await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await until('the default ServiceAccount', () => client.get(SERVICE_ACCOUNTS, ns, 'default').catch(() => undefined), 60_000);

    // The benchmark's own view (its requests are not the controller's).
    const pods = new Map<string, Pod>();
    let cloneSet: CloneSet | undefined;
    let measuring = false;
    let created = 0;
    let deleted = 0;
    let maxNotReady = 0;
    const sample = (): void => {
      if (!measuring) return;
      let notReady = 0;
      for (const p of pods.values()) if (isActive(p) && !isReady(p)) notReady++;
      maxNotReady = Math.max(maxNotReady, notReady);
    };
    void follow(client, PODS, ns, `app=${APP}`, (e) => {
      const pod = e.object as Pod;
      if (e.type === 'DELETED') {
        pods.delete(pod.metadata.name ?? '');
        if (measuring) deleted++;
      } else {
        if (e.type === 'ADDED' && measuring) created++;
        pods.set(pod.metadata.name ?? '', pod);
      }
      sample();
    }, stop.signal);
    void follow(client, CLONESETS, ns, undefined, (e) => {
      if (e.type !== 'DELETED') cloneSet = e.object as CloneSet;
    }, stop.signal);

    const logDir = path.join(ROOT, '.cluster', 'bench-logs');
    mkdirSync(logDir, { recursive: true });
    const logFile = path.join(logDir, `controller-${ns}.log`);
    controller = startController(kubeconfig, ns, await freePort(), await freePort(), args.controllerArgs, logFile);
    const { readyzUrl, metricsUrl } = controller;
    await until('the controller caches to sync', () => fetch(readyzUrl).then((r) => (r.ok ? true : undefined), () => undefined), 60_000);
    log(`namespace ${ns}; controller log ${path.relative(ROOT, logFile)}`);

    const t0 = Date.now();
    await client.create(CLONESETS, ns, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: APP, namespace: ns },
      spec: {
        replicas: n,
        selector: { matchLabels: { app: APP } },
        template: { metadata: { labels: { app: APP } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
        updateStrategy: {
          type: 'InPlaceIfPossible',
          maxUnavailable: args.maxUnavailable,
          ...(args.grace > 0 ? { inPlaceUpdateStrategy: { gracePeriodSeconds: args.grace } } : {}),
        },
      },
    });
    const timeout = 120_000 + n * 1_000;
    await until(`${n} available pods`, () => {
      const s = cloneSet?.status;
      return s?.availableReplicas === n && s.updatedReadyReplicas === n && s.replicas === n ? true : undefined;
    }, timeout);
    const scaleUpMs = Date.now() - t0;
    log(`${n} pods available after ${secs(scaleUpMs)}; rolling out a new image in place…`);

    const before = await counters(metricsUrl);
    measuring = true;
    const t1 = Date.now();
    const patched = await client.patch<CloneSet>(CLONESETS, ns, APP, { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } }, 'merge');
    const generation = patched.metadata.generation;
    const allUpdatedReadyMs = await until('every pod on the new revision and Ready', () => {
      const rev = cloneSet?.status?.updateRevision;
      if (cloneSet?.status?.observedGeneration !== generation || rev === undefined) return undefined;
      const active = [...pods.values()].filter(isActive);
      return active.length === n && active.every((p) => isReady(p) && p.metadata.labels?.['controller-revision-hash'] === rev) ? Date.now() - t1 : undefined;
    }, timeout, 50);
    const rolloutMs = await until('the status to report the rollout complete', () => {
      const s = cloneSet?.status;
      return s !== undefined && s.observedGeneration === generation && s.updatedReadyReplicas === n && s.replicas === n && s.currentRevision === s.updateRevision
        ? Date.now() - t1
        : undefined;
    }, timeout, 50);
    // Trailing writes (lifecycle Normal of the last pods, the final status) belong to the rollout.
    await until('status.updatedAvailableReplicas', () => (cloneSet?.status?.updatedAvailableReplicas === n ? true : undefined), timeout);
    measuring = false;
    const used = diffCounts(await counters(metricsUrl), before);
    const restartCounts = new Map<number, number>();
    for (const p of pods.values()) {
      const r = p.status?.containerStatuses?.[0]?.restartCount ?? 0;
      restartCounts.set(r, (restartCounts.get(r) ?? 0) + 1);
    }
    const restarts = [...restartCounts.entries()].sort((a, b) => a[0] - b[0]).map(([r, c]) => `${c}×${r}`).join(', ');
    const writes = [...used.entries()].filter(([k]) => WRITE_VERBS.has(k)).reduce((a, [, v]) => a + v, 0);
    return { rolloutMs, allUpdatedReadyMs, requests: requestSummary(used), writes, reconciles: used.get('#reconciles') ?? 0, created, deleted, maxNotReady, restarts, scaleUpMs, logFile };
  } finally {
    stop.abort();
    await controller?.stop();
    await client.delete(NAMESPACES, undefined, ns).catch((e: unknown) => (isNotFound(e) ? undefined : log(`namespace ${ns} not deleted: ${String(e)}`)));
    await until(`namespace ${ns} to be gone`, () => client.get(NAMESPACES, undefined, ns).then(() => undefined, (e: unknown) => (isNotFound(e) ? true : undefined)), 600_000, 500)
      .catch((e: unknown) => log(String(e)));
  }
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  let kubeconfig = args.kubeconfig;
  const ownCluster = kubeconfig === undefined;
  if (kubeconfig === undefined) {
    log(`starting a local control plane in ${args.stateDir}…`);
    await stopLocalCluster(args.stateDir).catch(() => undefined);
    await startLocalCluster({ stateDir: args.stateDir });
    kubeconfig = kubeconfigPathOf(args.stateDir);
  }
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { qps: 1000, burst: 2000 });
  try {
    await installCrd(client);
    const r = await run(client, kubeconfig, args);
    const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : 'defaults: --kube-api-qps=30 --kube-api-burst=50';
    const lines = [
      `CloneSet in-place update benchmark: ${args.pods} pods, InPlaceIfPossible, maxUnavailable ${String(args.maxUnavailable)}, gracePeriodSeconds ${args.grace}; controller ${flags}`,
      `rollout (image patch → status: every pod updated and Ready): ${secs(r.rolloutMs)} (all pods Ready on the new revision after ${secs(r.allUpdatedReadyMs)})`,
      `controller API requests during the rollout: ${r.requests.text}; ${r.reconciles} reconciles`,
      `API writes: ${r.writes} = ${(r.writes / args.pods).toFixed(2)} per updated pod`,
      `pods created ${r.created}, deleted ${r.deleted}; container restarts per pod: ${r.restarts}; max not Ready at once ${r.maxNotReady}`,
      `(initial scale 0 → ${args.pods}: ${secs(r.scaleUpMs)}; controller log ${path.relative(ROOT, r.logFile)})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    client.close();
    if (ownCluster && !args.keepCluster) {
      log('stopping the local control plane…');
      await stopLocalCluster(args.stateDir);
    }
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
