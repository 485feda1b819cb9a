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
import { KubeClient, LEASES, PODS, type ResourceRef } from '../kube/client.ts';
import { systemClock } from './clock.ts';
import { LeaderElector } from './leader-election.ts';
import { apiLeasePort } from './lease-port.ts';

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';
let stored: { metadata: { resourceVersion: string } } | undefined;
let rv = 0;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = (code: number, body: unknown): void => void res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (!(req.url ?? '').startsWith(LEASE_PATH)) return reply(201, { metadata: { name: 'p' } }); // pods
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
    port: apiLeasePort(leaseClient), namespace: 'ns', name: 'l', identity: 'a', clock: systemClock, logger: pino({ level: 'silent' }),
    leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200,
  });
  const done = elector.run(abort.signal, {
    onStartedLeading: () => {
      // The controller starts a large scale-up as soon as it leads.
      creates = Array.from({ length: 100 }, () => pods.withSignal(saturate.signal).create(kind, 'other', { metadata: { name: 'p' } }).catch(() => undefined));
    },
    onStoppedLeading: (r) => { lost = r === 'lost'; },
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
