// The Lease goes through a client of its own: a saturated pod client (its rate limiter queued for seconds) must
// not delay renewals. Client limits are per resource kind (kube/rate-limits.ts), so even the pod client's own
// limiter for pods leaves Lease requests alone; the control saturates the leases kind of the same client, and
// there the same leader loses its lease.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { isGone } from '../kube/api-error.ts';
import { KubeClient, LEASES, PODS, type ResourceRef } from '../kube/client.ts';
import { systemClock } from './clock.ts';
import { LeaderElector, type LeaseWatchEvent } from './leader-election.ts';
import { apiLeasePort } from './lease-port.ts';

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';
let stored: { metadata: { resourceVersion: string } } | undefined;
let rv = 0;
const watchUrls: string[] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = (code: number, body: unknown): void => void res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (!(req.url ?? '').startsWith(LEASE_PATH)) return reply(201, { metadata: { name: 'p' } }); // pods
    if (req.method === 'GET' && (req.url ?? '').includes('watch=true')) {
      watchUrls.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'ns', resourceVersion: '8' }, spec: { holderIdentity: 'a' } };
      for (const event of [
        { type: 'MODIFIED', object: lease },
        { type: 'BOOKMARK', object: { kind: 'Lease', metadata: { resourceVersion: '9' } } },
        { type: 'DELETED', object: { ...lease, metadata: { ...lease.metadata, resourceVersion: '10' } } },
        { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 7 (10)' } },
      ])
        res.write(`${JSON.stringify(event)}\n`);
      return void res.end();
    }
    if (req.method === 'GET') return stored === undefined ? reply(404, { kind: 'Status', code: 404, reason: 'NotFound' }) : reply(200, stored);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { metadata: Record<string, unknown> };
    stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } };
    return reply(req.method === 'POST' ? 201 : 200, stored);
  });
});
let kc: KubeConfig;
const clients: KubeClient[] = [];

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
});
after(() => {
  for (const c of clients) c.close();
  server.close();
  server.closeAllConnections();
});

async function newClient(qps: number, burst: number): Promise<KubeClient> {
  const c = await KubeClient.fromKubeConfig(kc, { qps, burst });
  clients.push(c);
  return c;
}

/**
 * Acquires the lease, then leads while 100 creates of `kind` (pods by default; leases go to another namespace,
 * which the fake server answers like pods) queue on `pods` (5 QPS); reports whether leadership held.
 */
async function leadWhileSaturated(pods: KubeClient, leaseClient: KubeClient, kind: ResourceRef = PODS): Promise<{ lost: boolean; renewals: number }> {
  stored = undefined;
  const abort = new AbortController();
  const saturate = new AbortController();
  let creates: Promise<unknown>[] = [];
  let lost = false;
  const elector = new LeaderElector({
    port: apiLeasePort(leaseClient),
    namespace: 'ns',
    name: 'l',
    identity: 'a',
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    leaseDurationMs: 1500,
    renewDeadlineMs: 1000,
    retryPeriodMs: 200,
  });
  const done = elector.run(abort.signal, {
    onStartedLeading: () => {
      // The controller starts a large scale-up as soon as it leads.
      creates = Array.from({ length: 100 }, () =>
        pods
          .fenced(saturate.signal)
          .create(kind, 'other', { metadata: { name: 'p' } })
          .catch(() => undefined),
      );
    },
    onStoppedLeading: (r) => {
      lost = r === 'lost';
    },
  });
  while (creates.length === 0) await new Promise((r) => setTimeout(r, 10));
  const rvBefore = rv;
  await new Promise((r) => setTimeout(r, 2500));
  abort.abort();
  await done;
  saturate.abort();
  await Promise.all(creates);
  return { lost, renewals: rv - rvBefore };
}

test('renewals use their own client and limiter, so a saturated pod client does not cost the lease', async () => {
  const pods = await newClient(5, 1);
  const { lost, renewals } = await leadWhileSaturated(pods, await newClient(5, 10));
  assert.equal(lost, false);
  assert.ok(renewals >= 8, `renewed ${renewals} times in 2.5 s at a 200 ms period`);
});

test('limits are per kind: renewing through the pod client, whose pod limiter is saturated, keeps the lease too', async () => {
  const pods = await newClient(5, 1);
  const { lost } = await leadWhileSaturated(pods, pods);
  assert.equal(lost, false);
});

test('control: the same leader renewing through a client whose leases limiter is saturated loses its lease', async () => {
  const pods = await newClient(5, 1);
  const { lost } = await leadWhileSaturated(pods, pods, LEASES);
  assert.equal(lost, true);
});

test('the watch asks for the one Lease from the given resourceVersion, reports changes, bookmarks and deletion, and fails on an ERROR event', async () => {
  const port = apiLeasePort(await newClient(5, 10));
  assert.ok(port.watch !== undefined);
  const seen: LeaseWatchEvent[] = [];
  await assert.rejects(
    port.watch('ns', 'l', '7', (e) => void seen.push(e), new AbortController().signal),
    (e: unknown) => isGone(e),
  );
  const url = new URL(watchUrls.at(-1) ?? '', 'http://x');
  assert.equal(url.searchParams.get('fieldSelector'), 'metadata.name=l');
  assert.equal(url.searchParams.get('resourceVersion'), '7');
  assert.deepEqual(
    seen.map((e) => (e.kind === 'changed' ? `changed ${e.lease.spec.holderIdentity ?? ''}@${e.lease.metadata.resourceVersion ?? ''}` : `${e.kind}@${e.resourceVersion ?? ''}`)),
    ['changed a@8', 'bookmark@9', 'deleted@10'],
  );
});
