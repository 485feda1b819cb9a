import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { CONFIGMAPS, KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import { systemClock } from './clock.ts';
import { Informer } from './informer.ts';
import { indexByOwnerUid } from './store.ts';

const cm = (name: string, rv: string, owner = 'o1'): KubeObject => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: owner }] },
});
const line = (type: string, object: unknown): string => JSON.stringify({ type, object }) + '\n';

/**
 * A scripted fake API server: the first list has a, b and d; the first watch modifies a without a new RV (no
 * update expected), then with one, deletes b, and expires (410). The relist has a (newer) and c: d vanished.
 */
let lists = 0;
let watches = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '', 'http://x');
  res.writeHead(200, { 'Content-Type': 'application/json' });
  if (url.searchParams.get('watch') !== 'true') {
    lists++;
    const items = lists === 1 ? [cm('a', '1'), cm('b', '2'), cm('d', '3')] : [cm('a', '12'), cm('c', '13', 'o2')];
    res.end(JSON.stringify({ metadata: { resourceVersion: lists === 1 ? '5' : '20' }, items }));
    return;
  }
  watches++;
  if (watches === 1) {
    res.write(line('MODIFIED', cm('a', '1')));
    res.write(line('MODIFIED', cm('a', '6')));
    res.write(line('DELETED', cm('b', '7')));
    res.write(line('BOOKMARK', { metadata: { resourceVersion: '9' } }));
    res.end(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 9 (15)' }));
    return;
  }
  req.on('close', () => res.end()); // a quiet watch until the client goes away
});
let client: KubeClient;

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  client = await KubeClient.fromKubeConfig(kc, { qps: 100, burst: 100 });
});
after(() => {
  client.close();
  server.closeAllConnections();
  server.close();
});

describe('Informer against a scripted API server', () => {
  it('delivers adds, (old, new) updates, deletes; relists after 410 with tombstones; keeps indexes', async () => {
    const seen: string[] = [];
    const informer = new Informer<KubeObject>({
      client,
      resource: CONFIGMAPS,
      namespace: 'ns',
      indexers: { owner: indexByOwnerUid },
      clock: systemClock,
      logger: pino({ level: 'silent' }),
    });
    informer.addHandlers({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
      onUpdate: (a, b) => seen.push(`update ${a.metadata?.name}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
      onDelete: (o, info) => seen.push(`delete ${o.metadata?.name}${info.finalStateUnknown ? ' (tombstone)' : ''}`),
    });
    const ac = new AbortController();
    assert.equal(informer.hasSynced(), false);
    informer.start(ac.signal);
    await informer.waitForSync(AbortSignal.timeout(5000));
    assert.ok(informer.hasSynced());
    const deadline = Date.now() + 5000;
    while (informer.stats.lists < 2 || informer.store.get('ns/c') === undefined) {
      assert.ok(Date.now() < deadline, `no relist: ${JSON.stringify(informer.stats)} ${seen.join(', ')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    ac.abort();
    assert.deepEqual(seen, ['add a@1', 'add b@2', 'add d@3', 'update a@1->6', 'delete b', 'update a@6->12', 'add c@13', 'delete d (tombstone)']);
    assert.deepEqual(
      informer.store
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
      ['a', 'c'],
    );
    assert.deepEqual(
      informer.store.byIndex('owner', 'o2').map((o) => o.metadata?.name),
      ['c'],
    );
  });

  it('stores and delivers objects as `transform` maps them (the CloneSet cache holds the internal model)', async () => {
    const informer = new Informer<KubeObject>({
      client,
      resource: CONFIGMAPS,
      namespace: 'ns',
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      transform: (o) => ({ ...o, metadata: { ...o.metadata, labels: { mapped: 'yes' } } }),
    });
    const added: string[] = [];
    informer.addHandlers({ onAdd: (o) => added.push(`${o.metadata?.name}:${o.metadata?.labels?.['mapped']}`) });
    const ac = new AbortController();
    informer.start(ac.signal);
    await informer.waitForSync(AbortSignal.timeout(5000));
    ac.abort();
    assert.deepEqual(added.sort(), ['a:yes', 'c:yes']); // the scripted server's relist contents
    assert.ok(informer.store.list().every((o) => o.metadata?.labels?.['mapped'] === 'yes'));
  });

  it('a transform that throws is counted and the object cached untransformed: the informer still syncs', async () => {
    const informer = new Informer<KubeObject>({
      client,
      resource: CONFIGMAPS,
      namespace: 'ns',
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      transform: (o) => {
        if (o.metadata?.name === 'a') throw new Error('cannot map a');
        return { ...o, metadata: { ...o.metadata, labels: { mapped: 'yes' } } };
      },
    });
    const ac = new AbortController();
    informer.start(ac.signal);
    await informer.waitForSync(AbortSignal.timeout(5000));
    ac.abort();
    assert.equal(informer.stats.transformErrors, 1);
    assert.deepEqual(informer.store.get('ns/a')?.metadata?.labels, undefined, 'a is kept as listed');
    assert.equal(informer.store.get('ns/c')?.metadata?.labels?.['mapped'], 'yes');
  });

  it('waitForSync rejects when its signal aborts first', async () => {
    const informer = new Informer<KubeObject>({ client, resource: CONFIGMAPS, clock: systemClock, logger: pino({ level: 'silent' }) });
    await assert.rejects(informer.waitForSync(AbortSignal.timeout(10)));
  });
});

describe('Informer relist after a 410', () => {
  /** First list a@1 and b@2; the watch expires at once; the relist has a unchanged (@1) and b changed (@3). */
  let relists = 0;
  const relisting = http.createServer((req, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (url.searchParams.get('watch') !== 'true') {
      relists++;
      const items = relists === 1 ? [cm('a', '1'), cm('b', '2')] : [cm('a', '1'), cm('b', '3')];
      res.end(JSON.stringify({ metadata: { resourceVersion: relists === 1 ? '2' : '3' }, items }));
      return;
    }
    if (relists === 1) {
      res.end(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 2 (3)' }));
      return;
    }
    req.on('close', () => res.end());
  });
  let relistClient: KubeClient;
  before(async () => {
    relisting.listen(0, '127.0.0.1');
    await once(relisting, 'listening');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(relisting.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    relistClient = await KubeClient.fromKubeConfig(kc, { qps: 100, burst: 100 });
  });
  after(() => {
    relistClient.close();
    relisting.closeAllConnections();
    relisting.close();
  });

  it('keeps the cached object of an unchanged resourceVersion instead of a second copy, and transforms only what changed', async () => {
    const transformed: string[] = [];
    const informer = new Informer<KubeObject>({
      client: relistClient,
      resource: CONFIGMAPS,
      namespace: 'ns',
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      transform: (o) => {
        transformed.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`);
        return { ...o };
      },
    });
    const ac = new AbortController();
    informer.start(ac.signal);
    await informer.waitForSync(AbortSignal.timeout(5000));
    assert.equal(informer.stats.listsDone, 1, 'the first list is done once the informer has synced');
    const aBefore = informer.store.get('ns/a');
    const deadline = Date.now() + 5000;
    while (informer.store.get('ns/b')?.metadata?.resourceVersion !== '3') {
      assert.ok(Date.now() < deadline, `no relist: ${JSON.stringify(informer.stats)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    ac.abort();
    assert.equal(informer.stats.lists, 2);
    assert.equal(informer.stats.listsDone, 2, 'the relist is done once its objects are in the cache');
    assert.ok(aBefore !== undefined && informer.store.get('ns/a') === aBefore, 'a is the very object cached before the relist');
    assert.deepEqual(transformed, ['a@1', 'b@2', 'b@3']);
  });
});
