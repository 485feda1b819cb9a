// The command lines of the control-plane components (see cluster.ts for why each flag is there) and the ports
// they listen on, all on 127.0.0.1.
import { join } from 'node:path';
import { repoRoot } from './binaries.ts';
import { NODE_ANNOTATION } from './nodes.ts';
import type { Pki } from './pki.ts';
import { freePort } from './free-port.ts';

const SERVICE_CIDR = '10.96.0.0/16';

/**
 * `default`: enough for every test and a 10 000-pod benchmark. `large`: what a real cluster of 100 000 pods tunes
 * (docs/performance.md, "100 000 pods"): more fake nodes, parallel collection deletes in the API server, and the
 * client limits of the components that write once per pod (the scheduler's binding, the garbage collector's and the
 * namespace controller's deletes) raised so that they are not what a 100 000-pod run waits for.
 */
export type ClusterProfile = 'default' | 'large';

/** Fake nodes of the large profile: 20 × 10 000 allocatable pods leaves room for 100 000 pods plus the limit's. */
export const LARGE_PROFILE_NODES = 20;

export interface ComponentPorts {
  readonly etcd: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly kubeControllerManager: number;
  readonly kubeScheduler: number;
  readonly kwok: number;
}

/** Six distinct free local ports. */
export async function allocatePorts(): Promise<ComponentPorts> {
  const ports = new Set<number>();
  while (ports.size < 6) ports.add(await freePort());
  const [etcd, etcdPeer, apiserver, kubeControllerManager, kubeScheduler, kwok] = [...ports];
  if (etcd === undefined || etcdPeer === undefined || apiserver === undefined || kubeControllerManager === undefined || kubeScheduler === undefined || kwok === undefined) {
    throw new Error('could not allocate ports');
  }
  return { etcd, etcdPeer, apiserver, kubeControllerManager, kubeScheduler, kwok };
}

export const etcdClientUrl = (ports: ComponentPorts): string => `http://127.0.0.1:${String(ports.etcd)}`;

export function etcdArgs(ports: ComponentPorts, dataDir: string): string[] {
  const peer = `http://127.0.0.1:${String(ports.etcdPeer)}`;
  const clientUrl = etcdClientUrl(ports);
  return [
    '--name=default',
    `--data-dir=${join(dataDir, 'etcd')}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    '--unsafe-no-fsync=true',
    '--quota-backend-bytes=8589934592',
    '--log-level=warn',
  ];
}

export function apiserverArgs(stateDir: string, ports: ComponentPorts, pki: Pki, profile: ClusterProfile = 'default'): string[] {
  // Large: a namespace of 100 000 pods is deleted by DeleteCollection calls, each served by this many workers
  // (default 1: 100 000 deletes in a row kept the API server busy for minutes after a run).
  const large = profile === 'large' ? ['--delete-collection-workers=8'] : [];
  return [
    `--etcd-servers=http://127.0.0.1:${String(ports.etcd)}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${String(ports.apiserver)}`,
    `--cert-dir=${join(stateDir, 'pki', 'apiserver-generated')}`,
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
    ...large,
  ];
}

export function controllerManagerArgs(stateDir: string, ports: ComponentPorts, pki: Pki, kubeconfig: string, profile: ClusterProfile = 'default'): string[] {
  // Large: the garbage collector and the namespace controller delete once per pod (1 000 QPS: 100 000 pods in
  // under 2 minutes instead of 6).
  const [qps, burst] = profile === 'large' ? [1000, 2000] : [300, 600];
  return [
    `--kubeconfig=${kubeconfig}`,
    '--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,persistentvolumeclaim-protection-controller,endpointslice-controller,resourcequota-controller',
    '--leader-elect=false',
    // each controller acts as its own service account (kube-system/generic-garbage-collector…), as in kubeadm
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.serviceAccount.privateKey}`,
    `--root-ca-file=${pki.ca.cert}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(ports.kubeControllerManager)}`,
    `--cert-dir=${join(stateDir, 'pki', 'kcm-generated')}`,
    `--kube-api-qps=${String(qps)}`,
    `--kube-api-burst=${String(burst)}`,
  ];
}

/** The KubeSchedulerConfiguration document (written as YAML, passed with --config). */
export function schedulerConfiguration(kubeconfig: string, profile: ClusterProfile = 'default'): unknown {
  // kube-scheduler's own default is 50 QPS: one binding per pod, 100 000 pods would take 33 minutes to bind.
  // Large: 2 000 QPS, so that binding is never the bottleneck of a 100 000-pod scale-out.
  const [qps, burst] = profile === 'large' ? [2000, 4000] : [500, 1000];
  return {
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    clientConnection: { kubeconfig, qps, burst },
    leaderElection: { leaderElect: false },
    // No storage backend here: PVCs stay Pending (unbound), so the volume plugins would keep every pod with a
    // PVC unschedulable. Without them such pods are scheduled and run like any other (the claims stay Pending).
    // VolumeRestrictions and NodeVolumeLimits read each claim from the scheduler's PVC informer: when that lags
    // (it backs off after an API server restart) the pod is marked unschedulable ("persistentvolumeclaim … not
    // found") and parked for minutes, though its claim was created first (seen in `npm run chaos`).
    profiles: [
      {
        schedulerName: 'default-scheduler',
        plugins: { multiPoint: { disabled: [{ name: 'VolumeBinding' }, { name: 'VolumeZone' }, { name: 'VolumeRestrictions' }, { name: 'NodeVolumeLimits' }] } },
      },
    ],
  };
}

export function schedulerArgs(stateDir: string, ports: ComponentPorts, configFile: string): string[] {
  return [`--config=${configFile}`, '--bind-address=127.0.0.1', `--secure-port=${String(ports.kubeScheduler)}`, `--cert-dir=${join(stateDir, 'pki', 'scheduler-generated')}`];
}

export function kwokArgs(ports: ComponentPorts, kubeconfig: string): string[] {
  const kwokConfigDir = join(repoRoot(), 'config', 'kwok');
  return [
    `--kubeconfig=${kubeconfig}`,
    `--manage-nodes-with-annotation-selector=${NODE_ANNOTATION}=fake`,
    `--config=${join(kwokConfigDir, 'kwok.yaml')}`,
    `--config=${join(kwokConfigDir, 'node-stages.yaml')}`,
    `--config=${join(kwokConfigDir, 'pod-stages.yaml')}`,
    `--server-address=127.0.0.1:${String(ports.kwok)}`,
  ];
}
