// The client and the informer against the real kube-apiserver of the local control plane.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino, type Logger } from 'pino';
import { ApiError, isAlreadyExists, isConflict, isInvalid, isNotFound } from '../../src/kube/api-error.ts';
import { CONFIGMAPS, CRDS, NAMESPACES, NODES, PODS, type KubeClient, type ResourceRef } from '../../src/kube/client.ts';
import type { KubeList, KubeObject, Pod } from '../../src/kube/types.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { Informer } from '../../src/runtime/informer.ts';
import { apiPorts } from '../../src/cloneset/ports.ts';
import { indexByOwnerUid } from '../../src/runtime/store.ts';
import { eventually, newNamespace, testClient } from '../helpers/kube.ts';

interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

let client: KubeClient;
let ns: string;
const stops: AbortController[] = [];

/** A logger whose lines the test can read. */
function capturingLogger(): { logger: Logger; lines: () => { level: number; msg: string }[] } {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void raw.push(s) });
  return { logger, lines: () => raw.map((s) => JSON.parse(s) as { level: number; msg: string }) };
}

function startInformer(): Informer<ConfigMap> {
  const informer = new Informer<ConfigMap>({
    client,
    resource: CONFIGMAPS,
    namespace: ns,
    indexers: { owner: indexByOwnerUid },
    clock: systemClock,
    logger: pino({ level: 'silent' }),
  });
  const ac = new AbortController();
  stops.push(ac);
  informer.start(ac.signal);
  return informer;
}

const configMap = (name: string, data: Record<string, string>, owner?: ConfigMap): object => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  data,
  metadata: {
    name,
    ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata?.name, uid: owner.metadata?.uid }] }),
  },
});

before(async () => {
  client = await testClient();
  ns = await newNamespace(client, 'informer');
});
after(async () => {
  for (const ac of stops) ac.abort();
  await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
  client.close();
});

describe('Informer on ConfigMaps', () => {
  it('lists existing objects, then sees creates, updates (old and new) and deletes', async () => {
    await client.create(CONFIGMAPS, ns, configMap('before', { k: '1' }));
    const events: string[] = [];
    const informer = startInformer();
    informer.addHandlers({
      onAdd: (o) => events.push(`add ${o.metadata?.name}`),
      onUpdate: (a, b) => events.push(`update ${a.metadata?.name} ${a.data?.['k']}->${b.data?.['k']}`),
      onDelete: (o) => events.push(`delete ${o.metadata?.name} ${o.data?.['k']}`),
    });
    await informer.waitForSync(AbortSignal.timeout(10_000));
    assert.ok(informer.hasSynced());
    assert.equal(informer.store.get(`${ns}/before`)?.data?.['k'], '1');

    await client.create(CONFIGMAPS, ns, configMap('after', { k: 'a' }));
    await client.patch(CONFIGMAPS, ns, 'after', { data: { k: 'b' } }, 'merge');
    await client.patch(CONFIGMAPS, ns, 'after', { data: { k: 'b' } }, 'merge'); // no-op: no new RV, no event
    await client.delete(CONFIGMAPS, ns, 'before');
    await eventually('the informer to see the delete', async () => (events.includes('delete before 1') ? true : undefined), { timeoutMs: 10_000 });
    assert.deepEqual(
      events.filter((e) => !e.startsWith('add kube-root-ca.crt')),
      ['add before', 'add after', 'update after a->b', 'delete before 1'],
    );
    const cached = informer.store.get(`${ns}/after`);
    assert.ok(cached !== undefined && Object.isFrozen(cached) && cached.metadata?.managedFields === undefined);
  });

  it('indexes by owner UID and follows ownerReference changes', async () => {
    const owner = await client.create<ConfigMap>(CONFIGMAPS, ns, configMap('owner', {}));
    const uid = owner.metadata?.uid ?? '';
    await client.create(CONFIGMAPS, ns, configMap('child-1', {}, owner));
    await client.create(CONFIGMAPS, ns, configMap('child-2', {}, owner));
    const informer = startInformer();
    await informer.waitForSync(AbortSignal.timeout(10_000));
    const children = (): string[] =>
      informer.store
        .byIndex('owner', uid)
        .map((o) => o.metadata?.name ?? '')
        .sort();
    assert.deepEqual(children(), ['child-1', 'child-2']);
    await client.patch(CONFIGMAPS, ns, 'child-1', [{ op: 'remove', path: '/metadata/ownerReferences' }], 'json');
    await client.create(CONFIGMAPS, ns, configMap('child-3', {}, owner));
    await eventually('the index to follow', async () => (children().join() === 'child-2,child-3' ? true : undefined), { timeoutMs: 10_000 });
  });

  it('relists after a 410 (watch from resourceVersion "1", older than the watch cache window) and stays correct', async () => {
    // ConfigMaps cannot show this on a fresh cluster: their watch cache was filled from etcd revision 1, so
    // RV "1" is still in its window. A CRD's cache starts when the CRD is established, so "1" is too old.
    await ensureWidgetCrd();
    await client.create(WIDGETS, ns, { apiVersion: 'informer.test.dev/v1', kind: 'Widget', metadata: { name: 'w1' }, size: 1 });
    await client.create(WIDGETS, ns, { apiVersion: 'informer.test.dev/v1', kind: 'Widget', metadata: { name: 'w2' }, size: 2 });
    const { logger, lines } = capturingLogger();
    const informer = new Informer<KubeObject>({ client, resource: WIDGETS, namespace: ns, clock: systemClock, logger, resumeFrom: '1' });
    const ac = new AbortController();
    stops.push(ac);
    informer.start(ac.signal);
    await informer.waitForSync(AbortSignal.timeout(20_000));
    const msgs = (): string =>
      lines()
        .map((l) => l.msg)
        .join(' | ');
    assert.equal(lines().filter((l) => /watch expired at resourceVersion 1 \(410: too old resource version/.test(l.msg)).length, 1, msgs());
    assert.equal(informer.stats.lists, 1);
    const names = (xs: readonly KubeObject[]): string =>
      xs
        .map((o) => o.metadata?.name)
        .sort()
        .join();
    assert.equal(names(informer.store.list()), 'w1,w2');
    await client.create(WIDGETS, ns, { apiVersion: 'informer.test.dev/v1', kind: 'Widget', metadata: { name: 'w3' } });
    await client.delete(WIDGETS, ns, 'w1');
    await eventually('the watch after the relist to deliver', async () => (names(informer.store.list()) === 'w2,w3' ? true : undefined), { timeoutMs: 10_000 });
  });
});

const WIDGETS: ResourceRef = { group: 'informer.test.dev', version: 'v1', plural: 'widgets', namespaced: true };

/** A throwaway CRD (cluster-scoped, kept across runs: re-creating it is idempotent). */
async function ensureWidgetCrd(): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.informer.test.dev' },
    spec: {
      group: 'informer.test.dev',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  await client.create(CRDS, undefined, crd).catch((e: unknown) => {
    if (!isAlreadyExists(e)) throw e;
  });
  await eventually('the Widget CRD to be established and served', async () => {
    const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(CRDS, undefined, crd.metadata.name);
    if (!(got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')) return undefined;
    await client.list(WIDGETS, ns, { limit: 1 });
    return true;
  });
}

describe('KubeClient against the API server', () => {
  it('applies merge, json and strategic patches (strategic merges containers by name) and subresources', async () => {
    const cm = await client.create<ConfigMap>(CONFIGMAPS, ns, configMap('patched', { a: '1' }));
    const merged = await client.patch<ConfigMap>(CONFIGMAPS, ns, 'patched', { data: { b: '2' } }, 'merge');
    assert.deepEqual(merged.data, { a: '1', b: '2' });
    const rv = merged.metadata?.resourceVersion;
    const jsonPatched = await client.patch<ConfigMap>(
      CONFIGMAPS,
      ns,
      'patched',
      [
        { op: 'test', path: '/metadata/resourceVersion', value: rv },
        { op: 'replace', path: '/data/a', value: 'x' },
      ],
      'json',
    );
    assert.deepEqual(jsonPatched.data, { a: 'x', b: '2' });
    assert.notEqual(cm.metadata?.resourceVersion, jsonPatched.metadata?.resourceVersion);

    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1' },
      spec: {
        schedulerName: 'nobody',
        containers: [
          { name: 'a', image: 'img-a:1' },
          { name: 'b', image: 'img-b:1' },
        ],
      },
    };
    await client.create(PODS, ns, pod);
    const sp = await client.patch<Pod>(PODS, ns, 'p1', { spec: { containers: [{ name: 'b', image: 'img-b:2' }] } }, 'strategic');
    assert.deepEqual(
      sp.spec.containers.map((c) => `${c.name}=${c.image}`),
      ['a=img-a:1', 'b=img-b:2'],
    );

    const withStatus = await client.patch<Pod>(PODS, ns, 'p1', { status: { conditions: [{ type: 'Custom', status: 'True' }] } }, 'strategic', { subresource: 'status' });
    assert.ok(withStatus.status?.conditions?.some((c) => c.type === 'Custom'));

    const nodes = await client.list<KubeObject>(NODES, undefined);
    const node = nodes.items[0]?.metadata?.name;
    assert.ok(node !== undefined, 'the local cluster has fake nodes');
    await client.create(
      PODS,
      ns,
      { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p1' }, target: { apiVersion: 'v1', kind: 'Node', name: node } },
      { subresource: 'binding' },
    );
    assert.equal((await client.get<Pod>(PODS, ns, 'p1')).spec.nodeName, node);
  });

  it("answers the executor's pod writes with the pod's metadata only, at the resourceVersion the server stored", async () => {
    const pods = apiPorts(client).pods;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'meta-only' }, spec: { schedulerName: 'nobody', containers: [{ name: 'a', image: 'img-a:1' }] } };
    const created = await pods.createPod(ns, pod as Pod);
    const labelled = await pods.patchPod(ns, 'meta-only', { metadata: { labels: { step: 'two' } } }, 'strategic');
    const conditioned = await pods.patchPodStatus(ns, 'meta-only', { status: { conditions: [{ type: 'Custom', status: 'True' }] } }, 'strategic');
    for (const answer of [created, labelled, conditioned]) {
      assert.equal(answer.kind, 'PartialObjectMetadata');
      assert.deepEqual(Object.keys(answer).sort(), ['apiVersion', 'kind', 'metadata'], 'no spec or status in the answer');
    }
    assert.equal(labelled.metadata.labels?.['step'], 'two');
    const live = await client.get<Pod>(PODS, ns, 'meta-only');
    assert.equal(conditioned.metadata.resourceVersion, live.metadata.resourceVersion);
    assert.ok(
      live.status?.conditions?.some((c) => c.type === 'Custom'),
      'the status write landed',
    );
    // Never bound to a node, so deleted at once: the delete's answer (not parsed) is the last the pod is seen.
    await pods.deletePod(ns, 'meta-only', live.metadata.uid ?? '');
    await assert.rejects(client.get(PODS, ns, 'meta-only'), (e: unknown) => isNotFound(e));
  });

  it('streams a watch that ends at timeoutSeconds; bookmarks, when the server sends them, carry a resourceVersion', async (t) => {
    const listed = await client.list<ConfigMap>(CONFIGMAPS, ns, { limit: 1 });
    const rv = listed.metadata.resourceVersion ?? '';
    await client.create(CONFIGMAPS, ns, configMap('watched', {}));
    const types: string[] = [];
    let bookmarkRv = '';
    const started = Date.now();
    await client.watch(
      CONFIGMAPS,
      ns,
      { resourceVersion: rv, timeoutSeconds: 5, allowWatchBookmarks: true },
      (e) => {
        types.push(e.type === 'ERROR' ? 'ERROR' : `${e.type}:${e.object.metadata?.name ?? ''}`);
        if (e.type === 'BOOKMARK') bookmarkRv = e.object.metadata?.resourceVersion ?? '';
      },
      AbortSignal.timeout(20_000),
    );
    assert.ok(Date.now() - started < 15_000, 'the server ended the watch at its timeoutSeconds');
    assert.ok(types.includes('ADDED:watched'), types.join());
    // Bookmarks are at the server's discretion (about once a minute; on short watches only sometimes).
    t.diagnostic(bookmarkRv === '' ? 'no bookmark on this short watch' : `bookmark at resourceVersion ${bookmarkRv}`);
    if (bookmarkRv !== '') assert.ok(BigInt(bookmarkRv) > BigInt(rv));
  });

  it('reports NotFound, AlreadyExists, Conflict and Invalid as typed ApiErrors', async () => {
    const reasonOf = async (p: Promise<unknown>): Promise<string> => {
      try {
        await p;
        return 'no error';
      } catch (e) {
        assert.ok(e instanceof ApiError, String(e));
        return `${e.reason}/${e.code}`;
      }
    };
    assert.equal(await reasonOf(client.get(CONFIGMAPS, ns, 'missing')), 'NotFound/404');
    await assert.rejects(client.delete(CONFIGMAPS, ns, 'missing'), isNotFound);

    const cm = await client.create<ConfigMap>(CONFIGMAPS, ns, configMap('dup', { k: '1' }));
    await assert.rejects(client.create(CONFIGMAPS, ns, configMap('dup', {})), isAlreadyExists);

    await client.patch(CONFIGMAPS, ns, 'dup', { data: { k: '2' } }, 'merge');
    await assert.rejects(client.update(CONFIGMAPS, ns, 'dup', { ...cm, data: { k: 'stale' } }), isConflict);
    assert.equal(await reasonOf(client.delete(CONFIGMAPS, ns, 'dup', { preconditionUid: 'not-the-uid' })), 'Conflict/409');

    try {
      await client.create(CONFIGMAPS, ns, configMap('Not_A_Valid_Name', {}));
      assert.fail('invalid name accepted');
    } catch (e) {
      assert.ok(isInvalid(e) && e instanceof ApiError);
      assert.equal(e.code, 422);
      assert.ok(
        e.causes.some((c) => c.field === 'metadata.name'),
        JSON.stringify(e.causes),
      );
    }
    const list = await client.list<ConfigMap>(CONFIGMAPS, ns, { limit: 1 });
    assert.equal((list as KubeList<ConfigMap>).items.length, 1);
  });
});
