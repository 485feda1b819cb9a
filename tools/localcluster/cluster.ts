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
//                            VolumeBinding/VolumeZone/VolumeRestrictions/NodeVolumeLimits plugins are off (no storage: PVCs stay Pending).
//   kwok                     out-of-cluster "kubelet" for fake Nodes annotated kwok.x-k8s.io/node=fake: keeps them
//                            Ready (leases) and plays the pod Stages of config/kwok/ (Running, readiness gates,
//                            in-place image restarts, deletion).
// N fake Nodes (default 3) without taints and with a large allocatable (cpu 1000, memory 4Ti, pods 10000).
//
// Processes are detached (own session/process group) so they outlive `cli.ts up`; pids and ports are in
// <state>/state.json, logs in <state>/logs/*.log, the admin kubeconfig is <state>/kubeconfig.
// `down` stops them (SIGTERM, then SIGKILL), also finds strays by command line, and deletes the data.
//
// Modules: components.ts (command lines, ports), bring-up.ts (start order and waits), nodes.ts, kubeconfig.ts,
// readiness.ts, progress.ts, state-dir.ts (state.json, lock), status.ts, stop.ts. This file is the entry point.
import { join, resolve } from 'node:path';
import { ensureBinaries } from './binaries.ts';
import { bringUp } from './bring-up.ts';
import { DEFAULT_NODES } from './nodes.ts';
import { LARGE_PROFILE_NODES, type ClusterProfile } from './components.ts';
import { findProcesses } from './processes.ts';
import { seconds, type Progress } from './progress.ts';
import { defaultStateDir, kubeconfigPathOf, processMarker, withLock } from './state-dir.ts';
import { clusterStatus } from './status.ts';
import { executableNames, stopLocalCluster, stopUnlocked } from './stop.ts';

export { DEFAULT_NODES, NODE_ANNOTATION } from './nodes.ts';
export { LARGE_PROFILE_NODES, type ClusterProfile } from './components.ts';
export type { Progress } from './progress.ts';
export { defaultStateDir, kubeconfigPathOf, readState, type ClusterState, type ComponentState } from './state-dir.ts';
export { clusterStatus, type ClusterStatus, type ComponentStatus } from './status.ts';
export { stopLocalCluster } from './stop.ts';
export { auditLogPathOf } from './audit.ts';
export { restartComponent, pauseComponent } from './restart.ts';

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
  /** kube-apiserver audit log of pod, PVC and Lease writes in <state>/logs/audit.log (audit.ts); default off */
  readonly auditLog?: boolean;
  /**
   * `large`: tuned for 100 000 pods (components.ts ClusterProfile), and LARGE_PROFILE_NODES fake nodes unless
   * `nodes` is given; default `default`
   */
  readonly profile?: ClusterProfile;
}

export interface LocalCluster {
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  stop(): Promise<void>;
}

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
  const profile = opts.profile ?? 'default';
  const nodes = opts.nodes ?? (profile === 'large' ? LARGE_PROFILE_NODES : DEFAULT_NODES);
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
      const cluster = handle(dir, await bringUp(dir, bins, { nodes, timeoutMs, progress, env, auditLog: opts.auditLog === true, profile }));
      progress.write(`cluster ready in ${seconds(Date.now() - t0)}: ${cluster.server}, kubeconfig ${cluster.kubeconfigPath}\n`);
      return cluster;
    } catch (e) {
      progress.write(`start-up failed; stopping what was started (logs kept in ${join(dir, 'logs')})\n`);
      await stopUnlocked(dir, progress).catch(() => {});
      throw e;
    }
  });
}
