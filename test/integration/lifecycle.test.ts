// Lifecycle hooks against the real control plane (docs/features.md#lifecycle-hooks, #scaling; Kruise pkg/util/lifecycle/lifecycle_utils.go; user manual "Lifecycle hook",
// "MarkPodNotReady", "Scaling with PreparingDelete"). The test plays the user controller: it adds and removes
// the handler labels and finalizers by hand. KWOK plays the kubelet (Ready = containers ready AND every
// readiness gate True).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { CloneSet, Lifecycle } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS, type ResourceRef } from '../../src/kube/resources.ts';
import type { Pod, PodCondition } from '../../src/kube/types.ts';
import { controllerPassed, isReady, names, newCloneSet } from '../helpers/cloneset.ts';
import { eventually, kubeconfigPath, newNamespace, ROOT, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const STATE = 'lifecycle.apps.kruise.io/state';
const BLOCKER = 'example.io/unready-blocker';
const TRAFFIC = 'example.io/ready-for-traffic';
const EXCLUDE = 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';
const DRAIN_FINALIZER = 'example.io/drain-blocker';
const SERVICES: ResourceRef = { group: '', version: 'v1', plural: 'services', namespaced: true };
const ENDPOINT_SLICES: ResourceRef = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true };

interface Options {
  readonly replicas: number;
  readonly lifecycle: Lifecycle;
  /** Template finalizers: every new pod carries them (hooked for preDelete from birth). */
  readonly finalizers?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
  readonly podsToDelete?: readonly string[];
  readonly updateType?: 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';
}

function cloneSetOf(ns: string, name: string, o: Options): CloneSet {
  return newCloneSet(ns, name, o.replicas, {
    labels: { app: name, ...o.labels },
    container: { name: 'main', image: 'nginx:alpine' },
    podFinalizers: o.finalizers,
    spec: {
      lifecycle: o.lifecycle,
      ...(o.podsToDelete !== undefined ? { scaleStrategy: { podsToDelete: [...o.podsToDelete] } } : {}),
      ...(o.updateType !== undefined ? { updateStrategy: { type: o.updateType } } : {}),
    },
  });
}

const condition = (p: Pod, type: string): PodCondition | undefined => p.status?.conditions?.find((c) => c.type === type);
const stateOf = (p: Pod): string => p.metadata.labels?.[STATE] ?? '';

describe('lifecycle hooks on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  const pods = async (app: string): Promise<Pod[]> => {
    const list = await client.list<Pod>(PODS, ns, { labelSelector: `app=${app}` });
    return list.items.filter((p) => p.metadata.deletionTimestamp === undefined);
  };
  const cs = (name: string): Promise<CloneSet> => client.get<CloneSet>(CLONESETS, ns, name);
  const create = (name: string, o: Options): Promise<CloneSet> => client.create<CloneSet>(CLONESETS, ns, cloneSetOf(ns, name, o));
  const patchSpec = (name: string, spec: Record<string, unknown>): Promise<unknown> => client.patch(CLONESETS, ns, name, { spec }, 'merge');
  const scale = (name: string, replicas: number, podsToDelete?: readonly string[]): Promise<unknown> =>
    patchSpec(name, { replicas, ...(podsToDelete !== undefined ? { scaleStrategy: { podsToDelete } } : {}) });
  const dropFinalizers = (pod: string): Promise<unknown> => client.patch(PODS, ns, pod, { metadata: { finalizers: null } }, 'merge');
  const label = (pod: string, labels: Record<string, string | null>): Promise<unknown> => client.patch(PODS, ns, pod, { metadata: { labels } }, 'merge');
  /** n active pods, all Running and Ready in state Normal. */
  const normalPods = (app: string, n: number): Promise<Pod[]> =>
    eventually(
      `${n} ready Normal pods of ${app}`,
      async () => {
        const all = await pods(app);
        return all.length === n && all.every((p) => isReady(p) && stateOf(p) === 'Normal') ? all : undefined;
      },
      { timeoutMs: 90_000 },
    );
  const waitingPod = (app: string, name?: string): Promise<Pod> =>
    eventually(`a PreparingDelete pod of ${app}`, async () => (await pods(app)).find((p) => stateOf(p) === 'PreparingDelete' && (name === undefined || p.metadata.name === name)));
  /** After the controller's passes over the CloneSet as it is now (controllerPassed), the pod count is still `n`. */
  const staysAt = async (app: string, n: number): Promise<void> => {
    await controllerPassed(client, ns, app);
    assert.equal((await pods(app)).length, n, `${app} keeps ${n} pods after the controller reconciled it`);
  };
  const gone = (name: string): Promise<true> =>
    eventually(`${name} deleted`, async () => {
      try {
        const p = await client.get<Pod>(PODS, ns, name);
        return p.metadata.deletionTimestamp !== undefined ? true : undefined;
      } catch {
        return true;
      }
    });

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'lifecycle');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    // Our finalizers would keep the namespace terminating for ever.
    for (const p of (await client.list<Pod>(PODS, ns)).items) {
      if ((p.metadata.finalizers ?? []).length > 0) await dropFinalizers(p.metadata.name ?? '').catch(() => undefined);
    }
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('preDelete finalizer: a scale-in victim stays PreparingDelete until its finalizer is removed, then is deleted', async () => {
    await create('pd', { replicas: 2, finalizers: [BLOCKER], lifecycle: { preDelete: { finalizersHandler: [BLOCKER] } } });
    await normalPods('pd', 2);
    await scale('pd', 1);
    const victim = await waitingPod('pd');
    const name = victim.metadata.name ?? '';
    assert.ok(victim.metadata.annotations?.['lifecycle.apps.kruise.io/timestamp']);
    await staysAt('pd', 2);
    assert.equal(stateOf(await client.get<Pod>(PODS, ns, name)), 'PreparingDelete');
    const s = (await cs('pd')).status;
    assert.equal(s?.availableReplicas, 1, 'a PreparingDelete pod is not available');
    await dropFinalizers(name);
    await gone(name);
    await eventually('1 pod and status replicas 1', async () => ((await pods('pd')).length === 1 && (await cs('pd')).status?.replicas === 1 ? true : undefined));
  });

  it('preNormal: a new pod is Ready but not available until the handler label / finalizer is present', async () => {
    await create('pnl', { replicas: 1, lifecycle: { preNormal: { labelsHandler: { [TRAFFIC]: 'true' } } } });
    await create('pnf', { replicas: 1, lifecycle: { preNormal: { finalizersHandler: [BLOCKER] } } });
    for (const app of ['pnl', 'pnf']) {
      const [pod] = await eventually(
        `a ready ${app} pod`,
        async () => {
          const all = await pods(app);
          return all.length === 1 && all.every(isReady) ? all : undefined;
        },
        { timeoutMs: 90_000 },
      );
      assert.ok(pod);
      await eventually(`${app} status ready 1`, async () => ((await cs(app)).status?.readyReplicas === 1 ? true : undefined));
      await controllerPassed(client, ns, app);
      assert.equal(stateOf(await client.get<Pod>(PODS, ns, pod.metadata.name ?? '')), 'PreparingNormal');
      assert.equal((await cs(app)).status?.availableReplicas, 0, `${app}: not available while the hook is missing`);
      if (app === 'pnl') await label(pod.metadata.name ?? '', { [TRAFFIC]: 'true' });
      else await client.patch(PODS, ns, pod.metadata.name ?? '', { metadata: { finalizers: [BLOCKER] } }, 'merge');
      await eventually(`${app} Normal and available`, async () => {
        const p = await client.get<Pod>(PODS, ns, pod.metadata.name ?? '');
        return stateOf(p) === 'Normal' && (await cs(app)).status?.availableReplicas === 1 ? true : undefined;
      });
    }
  });

  it('markPodNotReady on preDelete: KruisePodReady and Ready turn False while the pod waits, its containers keep running', async () => {
    await create('mk', { replicas: 2, finalizers: [BLOCKER], lifecycle: { preDelete: { finalizersHandler: [BLOCKER], markPodNotReady: true } } });
    const ready = await normalPods('mk', 2);
    for (const p of ready) {
      assert.ok(
        p.spec.readinessGates?.some((g) => g.conditionType === 'KruisePodReady'),
        'the KruisePodReady gate is injected',
      );
      assert.equal(condition(p, 'KruisePodReady')?.status, 'True', 'and initialised to True');
    }
    await scale('mk', 1);
    const victim = await eventually('the victim marked not ready', async () => {
      const p = (await pods('mk')).find((x) => stateOf(x) === 'PreparingDelete');
      return p !== undefined && condition(p, 'KruisePodReady')?.status === 'False' && condition(p, 'Ready')?.status === 'False' ? p : undefined;
    });
    assert.equal(condition(victim, 'KruisePodReady')?.message, '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]');
    assert.equal(victim.status?.phase, 'Running');
    assert.ok(
      (victim.status?.containerStatuses ?? []).every((c) => c.ready === true && (c.state as { running?: unknown } | undefined)?.running !== undefined),
      'containers still running',
    );
    assert.equal(condition(victim, 'ContainersReady')?.status, 'True');
    // markPodNotReady: scaling back up does not bring the pod back (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go)
    await scale('mk', 2);
    await controllerPassed(client, ns, 'mk');
    assert.equal(stateOf(await client.get<Pod>(PODS, ns, victim.metadata.name ?? '')), 'PreparingDelete');
    await dropFinalizers(victim.metadata.name ?? '');
    await gone(victim.metadata.name ?? '');
    await normalPods('mk', 2);
  });

  for (const exclude of [false, true]) {
    const tag = exclude ? 'exclude label' : 'default';
    const opts = (replicas: number): Options => ({
      replicas,
      finalizers: [BLOCKER],
      lifecycle: { preDelete: { finalizersHandler: [BLOCKER] } },
      ...(exclude ? { labels: { [EXCLUDE]: 'true' } } : {}),
    });

    it(`scaling with PreparingDelete (${tag}): N → N−1 → N while the victim waits → the victim is Normal again, no new pod`, async () => {
      const app = `s1${exclude ? 'x' : 'd'}`;
      await create(app, opts(3));
      const before = names(await normalPods(app, 3));
      await scale(app, 2);
      const victim = await waitingPod(app);
      await scale(app, 3);
      await eventually('the victim back to Normal', async () => (stateOf(await client.get<Pod>(PODS, ns, victim.metadata.name ?? '')) === 'Normal' ? true : undefined));
      await staysAt(app, 3);
      assert.deepEqual(names(await normalPods(app, 3)), before, 'the same pods');
    });

    it(`scaling with PreparingDelete (${tag}): N → N−1 with podsToDelete, then N → ${exclude ? 'a new pod at once' : 'no new pod until the pod terminates'}`, async () => {
      const app = `s2${exclude ? 'x' : 'd'}`;
      await create(app, opts(3));
      const [target] = names(await normalPods(app, 3));
      assert.ok(target);
      await scale(app, 2, [target]);
      await waitingPod(app, target);
      await staysAt(app, 3);
      await scale(app, 3);
      if (exclude) {
        await eventually('a 4th pod', async () => ((await pods(app)).length === 4 ? true : undefined));
      } else {
        await staysAt(app, 3);
      }
      assert.equal(stateOf(await client.get<Pod>(PODS, ns, target)), 'PreparingDelete', 'a specified pod is not brought back');
      await dropFinalizers(target);
      await gone(target);
      const after = await normalPods(app, 3);
      assert.ok(!names(after).includes(target));
    });

    it(`scaling with PreparingDelete (${tag}): a specified delete, replicas unchanged → ${exclude ? 'a new pod at once' : 'no new pod until the pod terminates'}`, async () => {
      const app = `s3${exclude ? 'x' : 'd'}`;
      await create(app, opts(3));
      const [target] = names(await normalPods(app, 3));
      assert.ok(target);
      await patchSpec(app, { scaleStrategy: { podsToDelete: [target] } });
      await waitingPod(app, target);
      if (exclude) {
        await eventually('a replacement while the pod waits', async () => ((await pods(app)).length === 4 ? true : undefined), { timeoutMs: 30_000 });
      } else {
        await staysAt(app, 3);
      }
      await dropFinalizers(target);
      await gone(target);
      const after = await normalPods(app, 3);
      assert.ok(!names(after).includes(target));
    });
  }

  it('in-place update with an inPlaceUpdate hook and markPodNotReady: PreparingUpdate (not Ready, still running) → released → Updated → Normal', async () => {
    await create('ip', {
      replicas: 1,
      finalizers: [BLOCKER],
      updateType: 'InPlaceIfPossible',
      lifecycle: { inPlaceUpdate: { finalizersHandler: [BLOCKER], markPodNotReady: true } },
    });
    const [pod] = await normalPods('ip', 1);
    assert.ok(pod);
    const name = pod.metadata.name ?? '';
    const uid = pod.metadata.uid;
    assert.equal(condition(pod, 'KruisePodReady')?.status, 'True');
    await patchSpec('ip', { template: { spec: { containers: [{ name: 'main', image: 'nginx:mainline' }] } } });
    const preparing = await eventually('PreparingUpdate, KruisePodReady and Ready False', async () => {
      const p = await client.get<Pod>(PODS, ns, name);
      return stateOf(p) === 'PreparingUpdate' && condition(p, 'KruisePodReady')?.status === 'False' && condition(p, 'Ready')?.status === 'False' ? p : undefined;
    });
    assert.equal(condition(preparing, 'KruisePodReady')?.message, '[{"userAgent":"Lifecycle","key":"preUpdateHook"}]');
    assert.equal(preparing.status?.phase, 'Running');
    assert.equal(condition(preparing, 'ContainersReady')?.status, 'True', 'containers keep running');
    // the update waits for the user controller
    await controllerPassed(client, ns, 'ip');
    const still = await client.get<Pod>(PODS, ns, name);
    assert.equal(stateOf(still), 'PreparingUpdate');
    assert.equal(still.spec.containers[0]?.image, 'nginx:alpine', 'not updated while hooked');
    // the user controller drained the pod: it releases the hook
    await dropFinalizers(name);
    const updated = await eventually(
      'updated in place, Updated, KruisePodReady True',
      async () => {
        const p = await client.get<Pod>(PODS, ns, name);
        return stateOf(p) === 'Updated' && condition(p, 'KruisePodReady')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(updated.metadata.uid, uid, 'the same pod: updated in place');
    assert.equal(updated.spec.containers[0]?.image, 'nginx:mainline');
    assert.equal(condition(updated, 'KruisePodReady')?.message, '[]');
    assert.equal((await cs('ip')).status?.availableReplicas, 0, 'Updated is not available');
    // the user controller takes the pod back (endpoints, finalizer): Normal, Ready, available
    await client.patch(PODS, ns, name, { metadata: { finalizers: [BLOCKER] } }, 'merge');
    await eventually(
      'Normal, Ready and available',
      async () => {
        const p = await client.get<Pod>(PODS, ns, name);
        return stateOf(p) === 'Normal' && isReady(p) && (await cs('ip')).status?.availableReplicas === 1 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  });

  it('the drain-on-predelete example drains pods from a Service before deletion and in-place update', async () => {
    await client.create(SERVICES, ns, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web', 'example.io/traffic': 'on' }, ports: [{ port: 80, targetPort: 80 }] },
    });
    const hook = { finalizersHandler: [DRAIN_FINALIZER] };
    await create('web', {
      replicas: 2,
      updateType: 'InPlaceIfPossible',
      lifecycle: { preNormal: hook, preDelete: { ...hook, markPodNotReady: true }, inPlaceUpdate: { ...hook, markPodNotReady: true } },
    });
    const drain = spawn(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        path.join(ROOT, 'examples/drain-on-predelete/drain.ts'),
        '--kubeconfig',
        kubeconfigPath(),
        '-n',
        ns,
        '-l',
        'app=web',
        '--service',
        'web',
        '--drain-seconds',
        '1',
        '--interval-ms',
        '250',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    drain.stdout.on('data', (b: Buffer) => (log += b.toString()));
    drain.stderr.on('data', (b: Buffer) => (log += b.toString()));
    const endpoints = async (): Promise<string[]> => {
      const slices = await client.list<{ endpoints?: { targetRef?: { name?: string } }[] | null }>(ENDPOINT_SLICES, ns, { labelSelector: 'kubernetes.io/service-name=web' });
      return slices.items.flatMap((x) => (x.endpoints ?? []).map((e) => e.targetRef?.name ?? '')).sort();
    };
    try {
      const serving = names(await normalPods('web', 2));
      await eventually('both pods in the endpoints', async () => (JSON.stringify(await endpoints()) === JSON.stringify(serving) ? true : undefined));
      await scale('web', 1);
      const victim = await waitingPod('web');
      const victimName = victim.metadata.name ?? '';
      await gone(victimName);
      assert.match(log, new RegExp(`drain ${victimName}[\\s\\S]*release ${victimName}`));
      const [left] = await normalPods('web', 1);
      assert.ok(left);
      await eventually('the endpoints list only the remaining pod', async () => (JSON.stringify(await endpoints()) === JSON.stringify([left.metadata.name]) ? true : undefined));
      await patchSpec('web', { template: { spec: { containers: [{ name: 'main', image: 'nginx:mainline' }] } } });
      await eventually(
        'updated in place, Normal and back in the endpoints',
        async () => {
          const p = await client.get<Pod>(PODS, ns, left.metadata.name ?? '');
          const ok = p.metadata.uid === left.metadata.uid && p.spec.containers[0]?.image === 'nginx:mainline' && stateOf(p) === 'Normal' && isReady(p);
          return ok && JSON.stringify(await endpoints()) === JSON.stringify([left.metadata.name]) ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      assert.match(log, new RegExp(`drain ${left.metadata.name ?? ''}[\\s\\S]*release ${left.metadata.name ?? ''}[\\s\\S]*admit ${left.metadata.name ?? ''}`));
    } finally {
      drain.kill('SIGTERM');
    }
  });

  it('cancelling a specified delete brings a PreparingDelete pod back to Normal (no new pod)', async () => {
    await create('cancel', { replicas: 2, finalizers: [BLOCKER], lifecycle: { preDelete: { finalizersHandler: [BLOCKER] } } });
    const before = names(await normalPods('cancel', 2));
    const [target] = before;
    assert.ok(target);
    await patchSpec('cancel', { scaleStrategy: { podsToDelete: [target] } });
    await waitingPod('cancel', target);
    await patchSpec('cancel', { scaleStrategy: { podsToDelete: [] } });
    await eventually('back to Normal', async () => (stateOf(await client.get<Pod>(PODS, ns, target)) === 'Normal' ? true : undefined));
    await staysAt('cancel', 2);
    assert.deepEqual(names(await normalPods('cancel', 2)), before);
  });
});
