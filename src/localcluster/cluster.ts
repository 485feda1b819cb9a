// The embedded local control plane used by the demo and every integration test.
//
// What runs (all on 127.0.0.1, free ports, one state dir per cluster: <repo>/.cluster/<name>):
//   etcd                     storage; throw-away data dir <state>/data/etcd, --unsafe-no-fsync (nothing to keep).
//   kube-apiserver           the real API server: secure port only, client-certificate authn (admin = system:masters),
//                            RBAC authz, service-account signing keys; default admission (ServiceAccount included).
//                            APF off and generous in-flight limits so a 1000-pod benchmark is not throttled.
//                            TaintNodesByCondition admission is off: nobody would remove its not-ready taint.
//   kube-controller-manager  only what CloneSet tests need from a cluster: garbage collector (ownerReference
//                            cascades when a CloneSet is deleted), namespace controller (namespace deletion), the
//                            service-account controllers (the `default` ServiceAccount that pod admission requires)
//                            and the kube-root-ca.crt publisher, the PVC-protection controller (removes the
//                            kubernetes.io/pvc-protection finalizer so deleted PVCs go away), the EndpointSlice
//                            controller (Services' endpoints, for the lifecycle-hook example that drains pods).
//                            No workload controllers: the CloneSet is ours.
//   kube-scheduler           binds pods to nodes (kwok only acts on bound pods), with a high client QPS; the
//                            VolumeBinding/VolumeZone plugins are off (no storage: PVCs stay Pending).
//   kwok                     out-of-cluster "kubelet" for fake Nodes annotated kwok.x-k8s.io/node=fake: keeps them
//                            Ready (leases) and plays the pod Stages of config/kwok/ (Running, readiness gates,
//                            in-place image restarts, deletion).
// N fake Nodes (default 3) without taints and with a large allocatable (cpu 1000, memory 4Ti, pods 10000).
//
// Processes are detached (own session/process group) so they outlive `cli.ts up`; pids and ports are in
// <state>/state.json, logs in <state>/logs/*.log, the admin kubeconfig is <state>/kubeconfig.
// `down` stops them (SIGTERM, then SIGKILL), also finds strays by command line, and deletes the data.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify as toYaml } from 'yaml';
import { BINARY_NAMES, ensureBinaries, findBinary, repoRoot, type BinaryName, type BinaryPaths } from './binaries.ts';
import { request, type HttpResponse, type TlsMaterial } from './http.ts';
import { generatePki, type CertPair, type Pki } from './pki.ts';
import { findProcesses, isAlive, isOurProcess, startDetached, stopProcess, tail, type Started } from './processes.ts';

export interface Progress {
  write(chunk: string): unknown;
}

export interface LocalClusterOptions {
  /** default: <repo>/.cluster/default */
  readonly stateDir?: string;
  /** fake kwok nodes, default 3 */
  readonly nodes?: number;
  /** progress lines ("starting etcd… ok (1.2s)"); default process.stderr */
  readonly progress?: Progress;
  /** overall start-up deadline per wait, default 120 s */
  readonly timeoutMs?: number;
  /** environment for binary lookup and the child processes; default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface LocalCluster {
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  stop(): Promise<void>;
}

export interface ComponentState {
  readonly name: BinaryName;
  readonly pid: number;
  /** the executable started (TEST_ASSET_* may name it differently) */
  readonly binary: string;
  readonly logFile: string;
}

export interface ClusterState {
  readonly version: 1;
  readonly stateDir: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly nodes: number;
  readonly createdAt: string;
  readonly ports: Readonly<Record<string, number>>;
  readonly components: readonly ComponentState[];
}

export interface ComponentStatus {
  readonly name: BinaryName;
  readonly pid: number | undefined;
  readonly running: boolean;
}

export interface ClusterStatus {
  readonly stateDir: string;
  readonly state: ClusterState | undefined;
  readonly components: readonly ComponentStatus[];
  readonly apiserverReady: boolean;
  /** every component runs and the API server is ready */
  readonly running: boolean;
}

export const NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const DEFAULT_NODES = 3;
const STOP_TIMEOUT_MS = 10_000;
const SERVICE_CIDR = '10.96.0.0/16';

export function defaultStateDir(name = 'default'): string {
  return join(repoRoot(), '.cluster', name);
}

export function kubeconfigPathOf(stateDir: string): string {
  return join(resolve(stateDir), 'kubeconfig');
}

function statePath(stateDir: string): string {
  return join(stateDir, 'state.json');
}

/** The marker every component command line contains (like `pgrep -f <state dir>/`). */
function processMarker(stateDir: string): string {
  return `${resolve(stateDir)}/`;
}

export function readState(stateDir: string): ClusterState | undefined {
  const p = statePath(resolve(stateDir));
  if (!existsSync(p)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(p, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'version' in parsed && parsed.version === 1) {
      const st = parsed as ClusterState;
      // tolerate files written by older versions: a component without `binary` ran under its own name
      const components = (Array.isArray(st.components) ? st.components : []).map((c: Partial<ComponentState>) => ({
        name: c.name ?? 'etcd',
        pid: typeof c.pid === 'number' ? c.pid : -1,
        binary: typeof c.binary === 'string' ? c.binary : (c.name ?? ''),
        logFile: c.logFile ?? '',
      }));
      return { ...st, components: components.filter((c) => c.pid > 0) };
    }
  } catch {
    // unreadable: treated as absent
  }
  return undefined;
}

async function writeState(state: ClusterState): Promise<void> {
  const p = statePath(state.stateDir);
  await writeFile(`${p}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${p}.tmp`, p);
}

// ---------------------------------------------------------------------------------------------------------------
// state-dir lock (mkdir is atomic): one up/down at a time per state dir

async function withLock<T>(stateDir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  await mkdir(stateDir, { recursive: true });
  const lockDir = join(stateDir, '.lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(await readFile(join(lockDir, 'pid'), 'utf8'));
      } catch {
        // being created or removed right now
      }
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
        await rm(lockDir, { recursive: true, force: true }); // stale
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${stateDir} is locked by process ${String(holder)} (${lockDir})`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// helpers

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolvePort(port) : reject(new Error('no free port'))));
    });
  });
}

async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** Polls `check` until it returns true; rejects on deadline or when `died` rejects. */
async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, died?: Promise<never>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  const poll = async (): Promise<void> => {
    let delay = 50;
    for (;;) {
      try {
        if (await check()) return;
        lastError = '';
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${String(timeoutMs / 1000)}s waiting for ${what}${lastError === '' ? '' : ` (last error: ${lastError})`}`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  };
  await (died === undefined ? poll() : Promise.race([poll(), died]));
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

async function step<T>(progress: Progress, label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  progress.write(`${label}… `);
  try {
    const v = await fn();
    progress.write(`ok (${seconds(Date.now() - t0)})\n`);
    return v;
  } catch (e) {
    progress.write(`FAILED (${seconds(Date.now() - t0)})\n`);
    throw e;
  }
}

/** Like step, for steps running in parallel: the whole line is written at the end. */
async function stepLine<T>(progress: Progress, label: string, fn: () => Promise<T>, cancelled?: AbortSignal): Promise<T> {
  const t0 = Date.now();
  try {
    const v = await fn();
    progress.write(`${label}… ok (${seconds(Date.now() - t0)})\n`);
    return v;
  } catch (e) {
    // when a sibling step failed first, this one was only cancelled: say nothing
    if (cancelled?.aborted !== true || (e instanceof Error && e.message !== 'aborted')) {
      progress.write(`${label}… FAILED (${seconds(Date.now() - t0)})\n`);
    }
    throw e;
  }
}

interface Kubeconfig {
  readonly path: string;
  readonly tls: TlsMaterial;
}

async function writeKubeconfig(path: string, server: string, ca: string, client: CertPair, user: string): Promise<Kubeconfig> {
  const [caPem, certPem, keyPem] = await Promise.all([readFile(ca), readFile(client.cert), readFile(client.key)]);
  const b64 = (b: Buffer): string => b.toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cloneset-local', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) } }],
    contexts: [{ name: 'cloneset-local', context: { cluster: 'cloneset-local', user, namespace: 'default' } }],
    'current-context': 'cloneset-local',
    preferences: {},
  };
  await writeFile(path, toYaml(doc), { mode: 0o600 });
  return { path, tls: { ca: caPem, cert: certPem, key: keyPem } };
}

function fakeNode(name: string, index: number): unknown {
  const resources = { cpu: '1000', memory: '4Ti', pods: '10000', 'ephemeral-storage': '10Ti' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [NODE_ANNOTATION]: 'fake' },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'topology.kubernetes.io/zone': `zone-${String.fromCharCode(97 + (index % 3))}`,
        type: 'kwok',
      },
    },
    spec: {},
    status: {
      allocatable: resources,
      capacity: resources,
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'fake', kubeProxyVersion: 'fake' },
      phase: 'Running',
    },
  };
}

interface NodeList {
  items?: { metadata?: { name?: string }; status?: { conditions?: { type?: string; status?: string }[] } }[];
}

function isJsonOk(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

// ---------------------------------------------------------------------------------------------------------------
// status / stop

export async function clusterStatus(stateDir: string = defaultStateDir()): Promise<ClusterStatus> {
  const dir = resolve(stateDir);
  const state = readState(dir);
  const marker = processMarker(dir);
  const components: ComponentStatus[] = BINARY_NAMES.map((name) => {
    const c = state?.components.find((x) => x.name === name);
    return { name, pid: c?.pid, running: c !== undefined && isOurProcess(c.pid, basename(c.binary), marker) };
  });
  let apiserverReady = false;
  if (state !== undefined && components.some((c) => c.name === 'kube-apiserver' && c.running)) {
    try {
      const ca = await readFile(join(dir, 'pki', 'ca.crt'));
      const res = await request(`${state.server}/readyz`, { tls: { ca }, timeoutMs: 2000 });
      apiserverReady = res.status === 200;
    } catch {
      apiserverReady = false;
    }
  }
  return { stateDir: dir, state, components, apiserverReady, running: apiserverReady && components.every((c) => c.running) };
}

/** Executable base names a component of this cluster may run under. */
function executableNames(state: ClusterState | undefined): string[] {
  const names = new Set<string>(BINARY_NAMES);
  for (const c of state?.components ?? []) names.add(basename(c.binary));
  for (const n of BINARY_NAMES) {
    const p = findBinary(n);
    if (p !== undefined) names.add(basename(p));
  }
  return [...names];
}

async function stopUnlocked(dir: string, progress: Progress): Promise<void> {
  const state = readState(dir);
  const marker = processMarker(dir);
  const byName = (n: BinaryName): ComponentState | undefined => state?.components.find((c) => c.name === n);
  const stopGroup = async (names: readonly BinaryName[]): Promise<void> => {
    await Promise.all(
      names.map(async (n) => {
        const c = byName(n);
        if (c === undefined || !isOurProcess(c.pid, basename(c.binary), marker)) return;
        const t0 = Date.now();
        const how = await stopProcess(c.pid, STOP_TIMEOUT_MS);
        progress.write(`stopped ${n} (pid ${String(c.pid)}, ${how}, ${seconds(Date.now() - t0)})\n`);
      }),
    );
  };
  // clients first, then the API server, then its storage
  await stopGroup(['kwok', 'kube-scheduler', 'kube-controller-manager']);
  await stopGroup(['kube-apiserver']);
  await stopGroup(['etcd']);
  // strays: a lost state file, a crashed `up`…
  const strays = findProcesses(executableNames(state), marker);
  await Promise.all(
    strays.map(async (pid) => {
      const how = await stopProcess(pid, STOP_TIMEOUT_MS);
      progress.write(`stopped stray process ${String(pid)} (${how})\n`);
    }),
  );
  await Promise.all(
    ['data', 'pki', 'config', 'kwok-home', 'kubeconfig', 'state.json'].map((p) => rm(join(dir, p), { recursive: true, force: true })),
  );
}

/** Stops every process of the state dir and removes its data (logs are kept). Idempotent. */
export async function stopLocalCluster(stateDir: string = defaultStateDir(), progress: Progress = process.stderr): Promise<void> {
  const dir = resolve(stateDir);
  if (!existsSync(dir)) return;
  await withLock(dir, 60_000, () => stopUnlocked(dir, progress));
}

// ---------------------------------------------------------------------------------------------------------------
// start

function handle(dir: string, server: string): LocalCluster {
  return {
    stateDir: dir,
    kubeconfigPath: kubeconfigPathOf(dir),
    server,
    stop: () => stopLocalCluster(dir, { write: () => true }),
  };
}

/**
 * Starts (or reuses, when it already runs) the local control plane of `opts.stateDir` and resolves once it is
 * usable: /readyz ok, default + kube-system namespaces, default/default ServiceAccount, every node Ready.
 */
export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const dir = resolve(opts.stateDir ?? defaultStateDir());
  const progress = opts.progress ?? process.stderr;
  const env = opts.env ?? process.env;
  const nodes = opts.nodes ?? DEFAULT_NODES;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  if (!Number.isInteger(nodes) || nodes < 0) throw new Error(`--nodes must be a non-negative integer, got ${String(nodes)}`);

  return withLock(dir, 15 * 60_000, async () => {
    const status = await clusterStatus(dir);
    if (status.running && status.state !== undefined) {
      progress.write(`cluster in ${dir} is already running (${status.state.server})\n`);
      return handle(dir, status.state.server);
    }
    if (status.state !== undefined || findProcesses(executableNames(undefined), processMarker(dir)).length > 0) {
      progress.write(`cleaning up a previous, incomplete cluster in ${dir}\n`);
      await stopUnlocked(dir, progress);
    }
    const t0 = Date.now();
    const bins = await ensureBinaries((l) => progress.write(`${l}\n`), env);
    try {
      const cluster = await bringUp(dir, bins, nodes, timeoutMs, progress, env);
      progress.write(`cluster ready in ${seconds(Date.now() - t0)}: ${cluster.server}, kubeconfig ${cluster.kubeconfigPath}\n`);
      return cluster;
    } catch (e) {
      progress.write(`start-up failed; stopping what was started (logs kept in ${join(dir, 'logs')})\n`);
      await stopUnlocked(dir, progress).catch(() => {});
      throw e;
    }
  });
}

async function bringUp(
  dir: string,
  bins: BinaryPaths,
  nodes: number,
  timeoutMs: number,
  progress: Progress,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LocalCluster> {
  const logs = join(dir, 'logs');
  const data = join(dir, 'data');
  const cfg = join(dir, 'config');
  const kwokHome = join(dir, 'kwok-home');
  await Promise.all([logs, data, cfg, kwokHome].map((d) => mkdir(d, { recursive: true })));

  const pki: Pki = await step(progress, 'generating certificates', () =>
    generatePki(join(dir, 'pki'), [
      { name: 'admin', user: 'kubernetes-admin', groups: ['system:masters'] },
      { name: 'kube-controller-manager', user: 'system:kube-controller-manager', groups: [] },
      { name: 'kube-scheduler', user: 'system:kube-scheduler', groups: [] },
      { name: 'kwok', user: 'kwok-controller', groups: ['system:masters'] },
    ]),
  );
  const client = (n: string): CertPair => {
    const c = pki.clients[n];
    if (c === undefined) throw new Error(`missing client certificate ${n}`);
    return c;
  };

  const [etcdPort, etcdPeerPort, apiPort, kcmPort, schedPort, kwokPort] = await freePorts(6);
  if (etcdPort === undefined || etcdPeerPort === undefined || apiPort === undefined || kcmPort === undefined || schedPort === undefined || kwokPort === undefined) {
    throw new Error('could not allocate ports');
  }
  const server = `https://127.0.0.1:${String(apiPort)}`;
  const components: ComponentState[] = [];
  const baseState = {
    version: 1 as const,
    stateDir: dir,
    server,
    kubeconfigPath: kubeconfigPathOf(dir),
    nodes,
    createdAt: new Date().toISOString(),
    ports: { etcd: etcdPort, etcdPeer: etcdPeerPort, apiserver: apiPort, kubeControllerManager: kcmPort, kubeScheduler: schedPort, kwok: kwokPort },
  };
  const childEnv: Record<string, string | undefined> = { ...env };
  delete childEnv['KUBECONFIG'];
  const launch = async (name: BinaryName, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Started> => {
    const logFile = join(logs, `${name}.log`);
    const started = startDetached(bins[name], args, logFile, { ...childEnv, ...extraEnv }, name);
    components.push({ name, pid: started.pid, binary: bins[name], logFile });
    await writeState({ ...baseState, components: [...components] });
    return started;
  };

  // etcd
  await step(progress, 'starting etcd', async () => {
    const peer = `http://127.0.0.1:${String(etcdPeerPort)}`;
    const clientUrl = `http://127.0.0.1:${String(etcdPort)}`;
    const etcd = await launch('etcd', [
      '--name=default',
      `--data-dir=${join(data, 'etcd')}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      '--unsafe-no-fsync=true',
      '--quota-backend-bytes=8589934592',
      '--log-level=warn',
    ]);
    await waitFor('etcd /health', timeoutMs, async () => {
      const r = await request(`${clientUrl}/health`, { timeoutMs: 2000 });
      return r.status === 200 && r.body.includes('"true"');
    }, etcd.exited);
  });

  // kubeconfigs (the server URL is known before the API server starts)
  const admin = await writeKubeconfig(kubeconfigPathOf(dir), server, pki.ca.cert, client('admin'), 'admin');
  const kcmKc = await writeKubeconfig(join(cfg, 'kube-controller-manager.kubeconfig'), server, pki.ca.cert, client('kube-controller-manager'), 'kube-controller-manager');
  const schedKc = await writeKubeconfig(join(cfg, 'kube-scheduler.kubeconfig'), server, pki.ca.cert, client('kube-scheduler'), 'kube-scheduler');
  const kwokKc = await writeKubeconfig(join(cfg, 'kwok.kubeconfig'), server, pki.ca.cert, client('kwok'), 'kwok');
  const api = (path: string, o: { method?: string; body?: unknown } = {}): Promise<HttpResponse> =>
    request(`${server}${path}`, { ...o, tls: admin.tls, timeoutMs: 10_000 });

  // kube-apiserver
  await step(progress, 'starting kube-apiserver', async () => {
    const apiserver = await launch('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${String(etcdPort)}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${String(apiPort)}`,
      `--cert-dir=${join(dir, 'pki', 'apiserver-generated')}`,
      `--tls-cert-file=${pki.apiserver.cert}`,
      `--tls-private-key-file=${pki.apiserver.key}`,
      `--client-ca-file=${pki.ca.cert}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccount.publicKey}`,
      `--service-account-signing-key-file=${pki.serviceAccount.privateKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      // TaintNodesByCondition would put node.kubernetes.io/not-ready:NoSchedule on every new Node, and only the
      // node-lifecycle controller (not run: kwok nodes never fail) removes it
      '--disable-admission-plugins=TaintNodesByCondition',
      // a single local API server: no Endpoints for the `kubernetes` Service (127.0.0.1 is not a valid endpoint)
      '--endpoint-reconciler-type=none',
      // throughput for benchmarks: no API Priority and Fairness queuing, generous in-flight limits
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=3000',
      '--max-mutating-requests-inflight=1500',
      '--profiling=false',
    ]);
    await waitFor('kube-apiserver /readyz', timeoutMs, async () => (await api('/readyz')).status === 200, apiserver.exited);
    await waitFor('namespaces default and kube-system', timeoutMs, async () =>
      isJsonOk(await api('/api/v1/namespaces/default')) && isJsonOk(await api('/api/v1/namespaces/kube-system')), apiserver.exited);
  });

  // kube-controller-manager, kube-scheduler, kwok: started together, waited for separately
  const schedulerConfig = join(cfg, 'kube-scheduler.yaml');
  await writeFile(schedulerConfig, toYaml({
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    clientConnection: { kubeconfig: schedKc.path, qps: 500, burst: 1000 },
    leaderElection: { leaderElect: false },
    // No storage backend here: PVCs stay Pending (unbound), so the volume plugins would keep every pod with a
    // PVC unschedulable. Without them such pods are scheduled and run like any other (the claims stay Pending).
    profiles: [{ schedulerName: 'default-scheduler', plugins: { multiPoint: { disabled: [{ name: 'VolumeBinding' }, { name: 'VolumeZone' }] } } }],
  }));
  const kcm = await launch('kube-controller-manager', [
    `--kubeconfig=${kcmKc.path}`,
    '--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,persistentvolumeclaim-protection-controller,endpointslice-controller',
    '--leader-elect=false',
    // each controller acts as its own service account (kube-system/generic-garbage-collector…), as in kubeadm
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.serviceAccount.privateKey}`,
    `--root-ca-file=${pki.ca.cert}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(kcmPort)}`,
    `--cert-dir=${join(dir, 'pki', 'kcm-generated')}`,
    '--kube-api-qps=300',
    '--kube-api-burst=600',
  ]);
  const scheduler = await launch('kube-scheduler', [
    `--config=${schedulerConfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(schedPort)}`,
    `--cert-dir=${join(dir, 'pki', 'scheduler-generated')}`,
  ]);
  const kwokConfigDir = join(repoRoot(), 'config', 'kwok');
  const kwok = await launch('kwok', [
    `--kubeconfig=${kwokKc.path}`,
    `--manage-nodes-with-annotation-selector=${NODE_ANNOTATION}=fake`,
    `--config=${join(kwokConfigDir, 'kwok.yaml')}`,
    `--config=${join(kwokConfigDir, 'node-stages.yaml')}`,
    `--config=${join(kwokConfigDir, 'pod-stages.yaml')}`,
    `--server-address=127.0.0.1:${String(kwokPort)}`,
  ], { HOME: kwokHome }); // kwok also loads ~/.kwok/kwok.yaml when present: isolate it
  // the first failure stops the other waits quietly (their processes are about to be stopped anyway)
  const parallel = new AbortController();
  const aborted = new Promise<never>((_resolve, reject) => {
    parallel.signal.addEventListener('abort', () => reject(new Error('aborted')));
  });
  aborted.catch(() => {});
  const healthz = (url: string, died: Promise<never>): Promise<void> =>
    waitFor(url, timeoutMs, async () => {
      const r = await request(url, { tls: { insecure: true }, timeoutMs: 2000 });
      return r.status === 200;
    }, Promise.race([died, aborted])).catch((e: unknown) => {
      parallel.abort();
      throw e;
    });
  await Promise.all([
    stepLine(progress, 'starting kube-controller-manager', () => healthz(`https://127.0.0.1:${String(kcmPort)}/healthz`, kcm.exited), parallel.signal),
    stepLine(progress, 'starting kube-scheduler', () => healthz(`https://127.0.0.1:${String(schedPort)}/healthz`, scheduler.exited), parallel.signal),
    stepLine(progress, 'starting kwok', () => healthz(`http://127.0.0.1:${String(kwokPort)}/healthz`, kwok.exited), parallel.signal),
  ]);

  const allDied = Promise.race([kcm.exited, scheduler.exited, kwok.exited]);
  allDied.catch(() => {});
  const nodeNames = Array.from({ length: nodes }, (_, i) => `kwok-node-${String(i)}`);
  await step(progress, `creating ${String(nodes)} fake nodes`, async () => {
    for (const [i, name] of nodeNames.entries()) {
      const r = await api('/api/v1/nodes', { method: 'POST', body: fakeNode(name, i) });
      if (!isJsonOk(r) && r.status !== 409) throw new Error(`creating node ${name}: HTTP ${String(r.status)} ${r.body}`);
    }
    await waitFor('nodes Ready', timeoutMs, async () => {
      const r = await api('/api/v1/nodes');
      if (!isJsonOk(r)) return false;
      const list = JSON.parse(r.body) as NodeList;
      const ready = new Set((list.items ?? [])
        .filter((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))
        .map((n) => n.metadata?.name ?? ''));
      return nodeNames.every((n) => ready.has(n));
    }, allDied);
  });
  await step(progress, 'waiting for the default ServiceAccount', () =>
    waitFor('serviceaccount default/default', timeoutMs, async () => isJsonOk(await api('/api/v1/namespaces/default/serviceaccounts/default')), allDied));

  return handle(dir, server);
}

/** Last lines of a component's log (for error messages and `status`). */
export function componentLogTail(stateDir: string, name: BinaryName, lines = 20): string {
  return tail(join(resolve(stateDir), 'logs', `${name}.log`), lines);
}
