// The local control plane (tools/localcluster) behaves like a small real cluster: pods are scheduled onto the kwok
// nodes and "run", Ready follows the readiness gates, an in-place image change restarts the container the way a
// kubelet reports it, and deleted pods go away. Needs KUBECONFIG (hack/test.sh starts the cluster and sets it).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';

const TIMEOUT_MS = 30_000;

function kubeconfigPath(): string {
  const p = process.env['KUBECONFIG'];
  if (p === undefined || p === '') {
    throw new Error(
      'KUBECONFIG is not set. Run the integration tests through hack/test.sh (npm test), or start a cluster with ' + '`eval "$(node tools/localcluster/cli.ts up)"` first.',
    );
  }
  return p;
}

interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfigPath(), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

async function kubectlOk(args: readonly string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${String(r.code)}): ${r.stderr.trim()}`);
  return r.stdout;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
interface ContainerStatus {
  name: string;
  image: string;
  imageID?: string;
  containerID?: string;
  ready: boolean;
  restartCount: number;
}
interface Pod {
  metadata: { name: string; uid: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status?: { phase?: string; conditions?: Condition[]; containerStatuses?: ContainerStatus[] };
}

function condition(pod: Pod, type: string): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === type)?.status;
}

/** Polls `probe` until it returns something other than undefined; fails with `what` and the last observation. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
      last = 'condition not met';
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}; last observation: ${typeof last === 'string' ? last : JSON.stringify(last)}`);
    }
    await delay(100); // poll interval
  }
}

async function getPod(ns: string, name: string): Promise<Pod> {
  return JSON.parse(await kubectlOk(['get', 'pod', name, '-n', ns, '-o', 'json'])) as Pod;
}

/** Waits until the pod satisfies `pred`, returning it; the error message shows the last pod status seen. */
async function waitPod(ns: string, name: string, what: string, pred: (p: Pod) => boolean): Promise<Pod> {
  let seen: Pod | undefined;
  try {
    return await eventually(`pod ${ns}/${name}: ${what}`, async () => {
      seen = await getPod(ns, name);
      return pred(seen) ? seen : undefined;
    });
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\nlast status: ${JSON.stringify(seen?.status ?? null)}`);
  }
}

const namespaces: string[] = [];

/** A fresh namespace whose `default` ServiceAccount exists (pod admission needs it). */
async function newNamespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kubectlOk(['create', 'namespace', ns]);
  namespaces.push(ns);
  await eventually(`serviceaccount ${ns}/default`, async () => ((await kubectl(['get', 'serviceaccount', 'default', '-n', ns, '-o', 'name'])).code === 0 ? true : undefined));
  return ns;
}

function podManifest(name: string, opts: { readinessGates?: string[]; images?: Record<string, string> } = {}): string {
  const images = opts.images ?? { main: 'nginx:1.25.3' };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: 'control-plane' } },
    spec: {
      containers: Object.entries(images).map(([n, image]) => ({ name: n, image })),
      ...(opts.readinessGates === undefined ? {} : { readinessGates: opts.readinessGates.map((conditionType) => ({ conditionType })) }),
    },
  });
}

async function setGate(ns: string, name: string, type: string, status: 'True' | 'False'): Promise<void> {
  // strategic merge on pods/status: conditions merge by type, the kwok-owned ones are kept
  const patch = JSON.stringify({ status: { conditions: [{ type, status, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } });
  await kubectlOk(['patch', 'pod', name, '-n', ns, '--subresource=status', '--type=strategic', '-p', patch]);
}

const isRunningReady = (p: Pod): boolean => p.spec.nodeName !== undefined && p.status?.phase === 'Running' && condition(p, 'Ready') === 'True';

describe('local control plane', () => {
  before(() => {
    kubeconfigPath(); // fail every test clearly when the cluster is not there
  });

  after(async () => {
    await Promise.all(namespaces.map((ns) => kubectl(['delete', 'namespace', ns, '--wait=false'])));
  });

  test('a plain pod is scheduled onto a kwok node, Running and Ready', async () => {
    const ns = await newNamespace('cp-plain');
    await kubectlOk(['apply', '-n', ns, '-f', '-'], podManifest('plain'));
    const pod = await waitPod(ns, 'plain', 'scheduled, Running, Ready', isRunningReady);
    assert.match(pod.spec.nodeName ?? '', /^kwok-node-\d+$/);
    assert.equal(condition(pod, 'ContainersReady'), 'True');
    assert.equal(condition(pod, 'PodScheduled'), 'True');
    const cs = pod.status?.containerStatuses ?? [];
    assert.equal(cs.length, 1);
    assert.equal(cs[0]?.image, 'nginx:1.25.3');
    assert.equal(cs[0]?.ready, true);
    assert.equal(cs[0]?.restartCount, 0);
    assert.ok((cs[0]?.imageID ?? '') !== '', 'imageID is reported');
  });

  test('Ready follows the InPlaceUpdateReady readiness gate', async () => {
    const ns = await newNamespace('cp-gate');
    await kubectlOk(['apply', '-n', ns, '-f', '-'], podManifest('gated', { readinessGates: ['InPlaceUpdateReady'] }));
    const running = await waitPod(ns, 'gated', 'Running with ready containers', (p) => p.status?.phase === 'Running' && condition(p, 'ContainersReady') === 'True');
    assert.equal(condition(running, 'Ready'), 'False', 'not Ready while the gate condition is missing');
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'ReadinessGatesNotReady');

    await setGate(ns, 'gated', 'InPlaceUpdateReady', 'True');
    await waitPod(ns, 'gated', 'Ready after the gate turned True', (p) => condition(p, 'Ready') === 'True');

    await setGate(ns, 'gated', 'InPlaceUpdateReady', 'False');
    const notReady = await waitPod(ns, 'gated', 'not Ready after the gate turned False', (p) => condition(p, 'Ready') === 'False');
    assert.equal(condition(notReady, 'InPlaceUpdateReady'), 'False', 'our condition was kept');
    assert.equal(condition(notReady, 'ContainersReady'), 'True');

    await setGate(ns, 'gated', 'InPlaceUpdateReady', 'True');
    await waitPod(ns, 'gated', 'Ready again', (p) => condition(p, 'Ready') === 'True');
  });

  test('an in-place image change restarts the container like a kubelet reports it', async () => {
    const ns = await newNamespace('cp-image');
    await kubectlOk(['apply', '-n', ns, '-f', '-'], podManifest('inplace', { images: { main: 'nginx:1.25.3', side: 'busybox:1.36' } }));
    const before = await waitPod(ns, 'inplace', 'Running and Ready', isRunningReady);
    const oldMain = before.status?.containerStatuses?.find((c) => c.name === 'main');
    const oldSide = before.status?.containerStatuses?.find((c) => c.name === 'side');
    assert.ok(oldMain !== undefined && oldSide !== undefined);

    const patch = JSON.stringify({ spec: { containers: [{ name: 'main', image: 'nginx:1.26.0' }] } });
    await kubectlOk(['patch', 'pod', 'inplace', '-n', ns, '--type=strategic', '-p', patch]);
    const after = await waitPod(ns, 'inplace', 'new image reported, container ready again', (p) => {
      const main = p.status?.containerStatuses?.find((c) => c.name === 'main');
      return main?.image === 'nginx:1.26.0' && main.ready && condition(p, 'Ready') === 'True';
    });
    const main = after.status?.containerStatuses?.find((c) => c.name === 'main');
    const side = after.status?.containerStatuses?.find((c) => c.name === 'side');
    assert.ok(main !== undefined && side !== undefined);
    assert.notEqual(main.imageID, oldMain.imageID, 'a new imageID');
    assert.notEqual(main.containerID, oldMain.containerID, 'a new container');
    assert.equal(main.restartCount, 1);
    assert.deepEqual(side, oldSide, 'the unchanged container is untouched');
    assert.equal(after.metadata.uid, before.metadata.uid, 'same pod (in place)');
  });

  test('a deleted pod disappears', async () => {
    const ns = await newNamespace('cp-delete');
    await kubectlOk(['apply', '-n', ns, '-f', '-'], podManifest('doomed'));
    await waitPod(ns, 'doomed', 'Running and Ready', isRunningReady);
    await kubectlOk(['delete', 'pod', 'doomed', '-n', ns, '--wait=false']);
    await eventually('pod doomed to be gone', async () => {
      const r = await kubectl(['get', 'pod', 'doomed', '-n', ns, '-o', 'name']);
      if (r.code !== 0 && r.stderr.includes('NotFound')) return true;
      if (r.code !== 0) throw new Error(r.stderr.trim());
      return undefined;
    });
  });

  test('the kubeconfig works with @kubernetes/client-node over node:https', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath());
    const cluster = kc.getCurrentCluster();
    assert.ok(cluster !== null, 'kubeconfig has a current cluster');
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.request(new URL('/api/v1/nodes', cluster.server), { ...opts, method: 'GET' }, (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(data) : reject(new Error(`HTTP ${String(res.statusCode)}: ${data}`))));
      });
      req.on('error', reject);
      req.end();
    });
    const nodes = JSON.parse(body) as { items: { metadata: { name: string }; spec?: { taints?: unknown[] } }[] };
    const kwokNodes = nodes.items.filter((n) => n.metadata.name.startsWith('kwok-node-'));
    assert.ok(kwokNodes.length >= 1, 'fake nodes exist');
    for (const n of kwokNodes) assert.equal(n.spec?.taints, undefined, `${n.metadata.name} has no taints`);
  });
});
