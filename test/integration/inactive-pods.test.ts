// Clean-up of Failed/evicted pods beyond cloneset-controller.io/inactive-pods-limit (docs/features.md#inactive-pod-clean-up;
// kruise#947, kruise#925), on a real API server: pods fail the way a kubelet's node-pressure eviction leaves them
// (a pods/status patch: phase Failed, reason Evicted, Ready False), the controller replaces them, and deletes
// the oldest beyond the limit once replaced — also when it is SIGKILLed half-way through.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';
import { activePods, allPods, eventsOf, isReady, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

const isInactive = (p: Pod): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

/** What the kubelet writes when it evicts a pod under node pressure. */
async function evict(client: KubeClient, ns: string, pod: Pod): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.patch(
    PODS,
    ns,
    pod.metadata.name ?? '',
    {
      status: {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        conditions: [{ type: 'Ready', status: 'False', reason: 'PodFailed', lastTransitionTime: now }],
      },
    },
    'strategic',
    { subresource: 'status' },
  );
}

describe('inactive pod clean-up on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'inactive');
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('keeps the newest inactive pod of three evicted ones, deletes the two oldest once replaced (an event each), and a SIGKILL half-way changes nothing', async () => {
    controller = startController(ns);
    const cs = newCloneSet(ns, 'web', 3, { annotations: { 'cloneset-controller.io/inactive-pods-limit': '1' } });
    await client.create<CloneSet>(CLONESETS, ns, cs);
    const first = await eventually('3 ready pods', () => readyPods(client, ns, 'web', 3), { timeoutMs: 90_000 });
    const victims = [...first].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    for (const pod of victims) await evict(client, ns, pod);
    // Half-way: the controller has started replacing (a new pod exists) — kill it without a chance to finish.
    await eventually(
      'a replacement pod',
      async () => {
        const pods = await activePods(client, ns, 'web');
        return pods.length > 0 ? pods : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await controller.kill9();
    controller = startController(ns);

    // All pods were created in the same second or close: the oldest are the first by (creation time, name).
    const byAge = (a: Pod, b: Pod): number =>
      Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
    const [oldest, middle, newest] = [...victims].sort(byAge);
    const final = await eventually(
      '3 ready replacements and 1 inactive pod left',
      async () => {
        const pods = await allPods(client, ns, 'web');
        const inactive = pods.filter(isInactive);
        const ready = pods.filter((p) => !isInactive(p) && isReady(p));
        return inactive.length === 1 && ready.length === 3 && pods.length === 4 ? { inactive, ready } : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.equal(final.inactive[0]?.metadata.name, newest?.metadata.name, 'the newest evicted pod is the one kept');
    assert.equal(final.inactive[0]?.status?.reason, 'Evicted');
    // An event each (execute-extensions.test.ts pins it), never two for one pod; a SIGKILL may lose the event of a
    // delete that landed just before it.
    const events = (await eventsOf(client, ns, 'web')).filter((e) => e.reason === 'DeletedInactivePod');
    assert.ok(events.length >= 1, 'DeletedInactivePod events');
    const deletedNames = events.map((e) => /^deleted Failed pod (\S+):/.exec(e.message ?? '')?.[1] ?? '');
    assert.equal(new Set(deletedNames).size, deletedNames.length, `one event per pod: ${deletedNames.join(', ')}`);
    for (const name of deletedNames) assert.ok([oldest?.metadata.name, middle?.metadata.name].includes(name), `${name} is one of the two oldest`);
    for (const e of events) {
      assert.equal(e.count ?? 1, 1);
      assert.match(
        e.message ?? '',
        /more than 1 inactive pods \(cloneset-controller\.io\/inactive-pods-limit\) and (its replacement web-\w{5} is Ready|the CloneSet has all its replicas Ready)$/,
      );
    }
    // No replacement was deleted: the 3 Ready pods are each a pod the controller created after the evictions.
    assert.ok(final.ready.every((p) => !victims.some((v) => v.metadata.uid === p.metadata.uid)));
    const status = (await client.get<CloneSet>(CLONESETS, ns, 'web')).status;
    assert.equal(status?.replicas, 3);
  });
});
