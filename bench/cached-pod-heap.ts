// The heap a CloneSet pod costs in the controller's pod cache, by the state of the pod: the pods are built as the
// API server returns them (JSON text, parsed in list pages of 500 as the informer's list does, so that every pod
// has its own copies of its strings), reduced by the informer's transform with one Interner
// (src/cloneset/cache-transforms.ts), and kept; the retained heap after full collections, over the pods, is the
// cache's cost per pod (the store's map entry and index aside). No cluster, no controller:
//
//   bash hack/node.sh bench/cached-pod-heap.ts [--pods 20000] [--ready-per-second 10] [--show]
//
// (plain `node` runs it too: bench/heap.ts exposes gc() itself; --show prints one cached status per state.)
//
// States:
//  - scheduled: bound to a node, the kubelet has not reported yet (what a kwok node shows before its start stage):
//    PodScheduled and the controller's InPlaceUpdateReady, phase Pending;
//  - creating: the kubelet reports the containers being created: phase Pending, Initialized True,
//    PodReadyToStartContainers/ContainersReady/Ready False (reason, message), a waiting container status;
//  - ready: Running, every condition True, a running container status (imageID, containerID, started, resources,
//    volume mounts, user), pod IPs and start time.
// Every state carries the labels and annotations the controller writes (revision, template hash, instance id,
// lifecycle state and timestamp) and managedFields. Timestamps advance by 1 s every `--ready-per-second` pods (the
// pace the 100 000-pod fleet made pods Ready, docs/performance.md): pods that turned Ready in the same second have
// equal timestamps, as in a cluster.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Interner, podTransform } from '../src/cloneset/cache-transforms.ts';
import type { Pod } from '../src/kube/types.ts';
import { heapUsedAfterGc } from './heap.ts';

type State = 'scheduled' | 'creating' | 'ready';

const PAGE = 500;
const IMAGE = 'docker.io/library/nginx:1.27.4';
const IMAGE_ID = `docker.io/library/nginx@sha256:${sha('nginx:1.27.4')}`;
const BASE_MS = Date.parse('2025-06-01T10:00:00Z');

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Pod `i` of CloneSet `web` in `state`, as JSON-compatible data (the API server's answer). */
function apiPod(i: number, state: State, perSecond: number): Record<string, unknown> {
  const at = (offsetS: number): string => rfc3339(BASE_MS + Math.floor(i / perSecond) * 1000 + offsetS * 1000);
  const u = sha(`uid-${i}`);
  const uid = `${u.slice(0, 8)}-${u.slice(8, 12)}-4${u.slice(13, 16)}-8${u.slice(17, 20)}-${u.slice(20, 32)}`;
  const instanceId = sha(`id-${i}`).slice(0, 5);
  const revision = 'web-6d8f7b9c5d';
  const condition = (type: string, status: string, extra: Record<string, string> = {}, t = 2): Record<string, unknown> => ({
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: at(t),
    ...extra,
  });
  const unready = { reason: 'ContainersNotReady', message: 'containers with unready status: [main]' };
  const conditions =
    state === 'scheduled'
      ? [condition('PodScheduled', 'True', {}, 0), condition('InPlaceUpdateReady', 'True', {}, 1)]
      : state === 'creating'
        ? [
            condition('PodReadyToStartContainers', 'False'),
            condition('Initialized', 'True'),
            condition('Ready', 'False', unready),
            condition('ContainersReady', 'False', unready),
            condition('PodScheduled', 'True', {}, 0),
            condition('InPlaceUpdateReady', 'True', {}, 1),
          ]
        : [
            condition('PodReadyToStartContainers', 'True'),
            condition('Initialized', 'True'),
            condition('Ready', 'True', {}, 4),
            condition('ContainersReady', 'True', {}, 4),
            condition('PodScheduled', 'True', {}, 0),
            condition('InPlaceUpdateReady', 'True', {}, 1),
          ];
  const resources = { limits: { cpu: '200m', memory: '128Mi' }, requests: { cpu: '100m', memory: '64Mi' } };
  const mounts = [{ name: `kube-api-access-${instanceId}`, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true, recursiveReadOnly: 'Disabled' }];
  const containerStatus =
    state === 'creating'
      ? {
          name: 'main',
          state: { waiting: { reason: 'ContainerCreating' } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: IMAGE,
          imageID: '',
          started: false,
          volumeMounts: mounts,
        }
      : {
          name: 'main',
          state: { running: { startedAt: at(3) } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: IMAGE,
          imageID: IMAGE_ID,
          containerID: `containerd://${sha(`container-${i}`)}`,
          started: true,
          resources,
          volumeMounts: mounts,
          user: { linux: { uid: 101, gid: 101, supplementalGroups: [101] } },
        };
  const podIP = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const node = `node-${i % 400}`;
  const status =
    state === 'scheduled'
      ? { phase: 'Pending', conditions, qosClass: 'Burstable' }
      : {
          phase: state === 'ready' ? 'Running' : 'Pending',
          conditions,
          hostIP: '192.168.0.10',
          hostIPs: [{ ip: '192.168.0.10' }],
          ...(state === 'ready' ? { podIP, podIPs: [{ ip: podIP }] } : {}),
          startTime: at(2),
          containerStatuses: [containerStatus],
          qosClass: 'Burstable',
        };
  const fieldsV1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {} } } } };
  return {
    metadata: {
      name: `web-${instanceId}`,
      generateName: 'web-',
      namespace: 'fleet-1',
      uid,
      resourceVersion: String(100_000 + i),
      creationTimestamp: at(0),
      labels: {
        app: 'web',
        'controller-revision-hash': revision,
        'pod-template-hash': '6d8f7b9c5d',
        'apps.kruise.io/cloneset-instance-id': instanceId,
        'lifecycle.apps.kruise.io/state': state === 'scheduled' ? 'PreparingNormal' : 'Normal',
      },
      annotations: { 'lifecycle.apps.kruise.io/timestamp': at(1) },
      ownerReferences: [
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'b7c1a2d4-3e5f-4a6b-8c7d-9e0f1a2b3c4d', controller: true, blockOwnerDeletion: true },
      ],
      managedFields: [
        { manager: 'cloneset-controller', operation: 'Update', apiVersion: 'v1', time: at(0), fieldsType: 'FieldsV1', fieldsV1 },
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: at(4), fieldsType: 'FieldsV1', subresource: 'status', fieldsV1 },
      ],
    },
    spec: {
      volumes: [{ name: `kube-api-access-${instanceId}`, projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }], defaultMode: 420 } }],
      containers: [
        {
          name: 'main',
          image: IMAGE,
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          resources,
          volumeMounts: mounts.map(({ recursiveReadOnly: _r, ...m }) => m),
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: node,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
    },
    status,
  };
}

interface Figures {
  /** heap retained per cached pod, bytes */
  readonly perPod: number;
  /** time of the transform per pod, µs */
  readonly transformUs: number;
  readonly sample: Pod | undefined;
}

/** What a cached pod of `state` costs (and one of the cached pods, for a look at what it keeps). */
function measure(state: State, n: number, perSecond: number): Figures {
  // Filled before the baseline: the array's backing store is the benchmark's, not the cache's.
  const cached = new Array<Pod | undefined>(n).fill(undefined);
  const transform = podTransform(new Interner());
  let transformMs = 0;
  const before = heapUsedAfterGc();
  for (let from = 0; from < n; from += PAGE) {
    const items: Record<string, unknown>[] = [];
    for (let i = from; i < Math.min(n, from + PAGE); i++) items.push(apiPod(i, state, perSecond));
    const page = JSON.parse(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', items })) as { items: Pod[] };
    const t0 = performance.now();
    page.items.forEach((p, k) => {
      cached[from + k] = transform(p);
    });
    transformMs += performance.now() - t0;
  }
  const after = heapUsedAfterGc();
  return { perPod: (after - before) / n, transformUs: (transformMs * 1000) / n, sample: cached[0] };
}

function main(): void {
  const { values } = parseArgs({
    options: { pods: { type: 'string', default: '20000' }, 'ready-per-second': { type: 'string', default: '10' }, show: { type: 'boolean', default: false } },
  });
  const n = Number(values.pods);
  const perSecond = Number(values['ready-per-second']);
  if (!Number.isInteger(n) || n <= 0 || !Number.isInteger(perSecond) || perSecond <= 0) throw new Error('--pods and --ready-per-second take positive integers');
  console.log(`cached pod heap: ${n} pods per state, one Interner, ${perSecond} pods per second of timestamps`);
  const perPod: Partial<Record<State, number>> = {};
  for (const state of ['scheduled', 'creating', 'ready'] as const) {
    const r = measure(state, n, perSecond);
    perPod[state] = r.perPod;
    console.log(`  ${state.padEnd(10)} ${r.perPod.toFixed(0).padStart(6)} bytes per pod  (transform ${r.transformUs.toFixed(1)} µs per pod)`);
    if (values.show) console.log(JSON.stringify(r.sample?.status));
  }
  const [scheduled, ready] = [perPod.scheduled, perPod.ready];
  if (scheduled !== undefined && ready !== undefined) console.log(`  ready − scheduled ${(ready - scheduled).toFixed(0).padStart(5)} bytes per pod`);
}

main();
