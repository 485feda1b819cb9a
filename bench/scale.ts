// Scale benchmark: how long the controller takes to bring a CloneSet from 0 to N pods (existing, Ready, counted in
// status) and back to 0, how many API requests it sends doing so, and its peak memory.
//
//   node bench/scale.ts [--pods 1000] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
//
// Without --kubeconfig it starts its own local control plane (state dir .cluster/bench, stopped at the end unless
// --keep-cluster). It installs the CRD, runs the real controller binary as a child process scoped to a fresh
// namespace (flags after `--` are passed to it, e.g. `-- --kube-api-qps=100 --kube-api-burst=200`), follows pods
// and the CloneSet with watches, reads the controller's request counters from its metrics endpoint and its peak
// RSS from /proc (Linux; VmHWM).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { CloneSet } from '../src/api/cloneset.ts';
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

interface Args {
  readonly pods: number;
  readonly kubeconfig: string | undefined;
  readonly stateDir: string;
  readonly keepCluster: boolean;
  readonly controllerArgs: readonly string[];
}

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      pods: { type: 'string' },
      kubeconfig: { type: 'string' },
      'state-dir': { type: 'string' },
      'keep-cluster': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write('usage: node bench/scale.ts [--pods N (1000)] [--kubeconfig PATH] [--state-dir DIR] [--keep-cluster] [-- controller flags…]\n');
    process.exit(0);
  }
  const pods = Number(values.pods ?? '1000');
  if (!Number.isInteger(pods) || pods <= 0) throw new Error(`--pods: not a positive count: ${values.pods ?? ''}`);
  return {
    pods,
    kubeconfig: values.kubeconfig,
    stateDir: path.resolve(values['state-dir'] ?? path.join(ROOT, '.cluster', 'bench')),
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
      rv = ''; // relist (e.g. 410 Gone, or a CRD whose storage is still initializing)
      await new Promise((res) => setTimeout(res, 500));
    }
  }
}

interface Controller {
  readonly pid: number;
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
  if (proc.pid === undefined) throw new Error('the controller did not start');
  return {
    pid: proc.pid,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    readyzUrl: `http://127.0.0.1:${probePort}/readyz`,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

async function requestCounts(metricsUrl: string): Promise<Map<string, number>> {
  const body = await (await fetch(metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const m of body.matchAll(/^rest_client_requests_total\{verb="(\w+)"\} (\d+)/gm)) counts.set(m[1] ?? '', Number(m[2]));
  return counts;
}

function diffCounts(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [verb, n] of after) if (n - (before.get(verb) ?? 0) > 0) d.set(verb, n - (before.get(verb) ?? 0));
  return d;
}

function formatCounts(c: Map<string, number>): string {
  const total = [...c.values()].reduce((a, b) => a + b, 0);
  const parts = [...c.entries()].sort((a, b) => b[1] - a[1]).map(([v, n]) => `${v} ${n}`);
  return `${total} (${parts.join(', ')})`;
}

function peakRssMiB(pid: number): string {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return 'n/a (no /proc)';
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(status, 'utf8'));
  return m === null ? 'n/a' : `${(Number(m[1]) / 1024).toFixed(0)} MiB`;
}

function isReady(p: Pod): boolean {
  return p.metadata.deletionTimestamp === undefined && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
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
  const ns = `bench-${randomBytes(3).toString('hex')}`;
  const stop = new AbortController();
  let controller: Controller | undefined;
  try {
    await installCrd(client);
    await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // ServiceAccount admission rejects pods until the namespace's default ServiceAccount exists.
    await until('the default ServiceAccount', () => client.get(SERVICE_ACCOUNTS, ns, 'default').catch(() => undefined), 60_000);

    // What the benchmark watches (its own client: none of this counts as controller requests).
    const pods = new Map<string, Pod>();
    let cloneSet: CloneSet | undefined;
    void follow(client, PODS, ns, `app=${APP}`, (e) => {
      const pod = e.object as Pod;
      if (e.type === 'DELETED') pods.delete(pod.metadata.name ?? '');
      else pods.set(pod.metadata.name ?? '', pod);
    }, stop.signal);
    void follow(client, CLONESETS, ns, undefined, (e) => {
      if (e.type !== 'DELETED') cloneSet = e.object as CloneSet;
    }, stop.signal);

    const logDir = path.join(ROOT, '.cluster', 'bench-logs');
    mkdirSync(logDir, { recursive: true });
    const logFile = path.join(logDir, `controller-${ns}.log`);
    const metricsPort = await freePort();
    const probePort = await freePort();
    controller = startController(kubeconfig, ns, metricsPort, probePort, args.controllerArgs, logFile);
    const readyzUrl = controller.readyzUrl;
    const metricsUrl = controller.metricsUrl;
    // Caches synced (readyz): the initial lists and watches are the baseline, not part of the scale-up.
    await until('the controller caches to sync', () => fetch(readyzUrl).then((r) => (r.ok ? true : undefined), () => undefined), 60_000);
    const idle = await requestCounts(metricsUrl);

    const n = args.pods;
    const flags = args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : '(defaults: --kube-api-qps=30 --kube-api-burst=50)';
    log(`namespace ${ns}; controller pid ${controller.pid}, flags ${flags}; log ${path.relative(ROOT, logFile)}`);
    const t0 = Date.now();
    await client.create(CLONESETS, ns, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: APP, namespace: ns },
      spec: {
        replicas: n,
        selector: { matchLabels: { app: APP } },
        template: { metadata: { labels: { app: APP } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
      },
    });
    const timeout = 60_000 + n * 1_000;
    const tExist = await until(`${n} pods`, () => (pods.size >= n ? Date.now() - t0 : undefined), timeout);
    const tReady = await until(`${n} Ready pods`, () => ([...pods.values()].filter(isReady).length >= n ? Date.now() - t0 : undefined), timeout);
    const tStatus = await until(`status.readyReplicas == ${n}`, () => (cloneSet?.status?.readyReplicas === n ? Date.now() - t0 : undefined), timeout);
    // Let the trailing writes (lifecycle Normal, status) settle before reading the counters.
    await until('status.availableReplicas', () => (cloneSet?.status?.availableReplicas === n ? true : undefined), timeout);
    const up = await requestCounts(metricsUrl);
    const rssUp = peakRssMiB(controller.pid);

    const t1 = Date.now();
    await client.patch(CLONESETS, ns, APP, { spec: { replicas: 0 } }, 'merge');
    const tGone = await until('0 pods', () => (pods.size === 0 ? Date.now() - t1 : undefined), timeout);
    const tStatus0 = await until('status.replicas == 0', () => (cloneSet?.status?.replicas === 0 ? Date.now() - t1 : undefined), timeout);
    const down = await requestCounts(metricsUrl);
    const rssEnd = peakRssMiB(controller.pid);

    const row = (label: string, value: string): string => `  ${label.padEnd(34)}${value}`;
    const lines = [
      `CloneSet scale benchmark: ${n} pods, controller ${flags}`,
      `(request counts are the controller's rest_client_requests_total by verb, its event writes included)`,
      `scale 0 → ${n}`,
      row(`${n} pods exist`, secs(tExist)),
      row(`${n} pods Ready`, secs(tReady)),
      row(`status.readyReplicas == ${n}`, secs(tStatus)),
      row('controller API requests', formatCounts(diffCounts(up, idle))),
      row('controller peak RSS so far', rssUp),
      `scale ${n} → 0`,
      row('all pods gone', secs(tGone)),
      row('status.replicas == 0', secs(tStatus0)),
      row('controller API requests', formatCounts(diffCounts(down, up))),
      `whole run`,
      row('startup requests (list + watch)', formatCounts(idle)),
      row('total API requests', formatCounts(down)),
      row('controller peak RSS (VmHWM)', rssEnd),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    stop.abort();
    await controller?.stop();
    await client.delete(NAMESPACES, undefined, ns).catch((e: unknown) => (isNotFound(e) ? undefined : log(`namespace ${ns} not deleted: ${String(e)}`)));
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
