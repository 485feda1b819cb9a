// Fencing: when the leader lease is lost, the abort reaches the executor, its slow-start batches and the HTTP
// request in flight (its socket is destroyed), so a former leader writes nothing while its successor leads.
// The elector runs on a fake clock with an in-memory Lease; the client talks to a small in-process HTTP server.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { RequestAbortedError } from '../kube/api-error.ts';
import { KubeClient } from '../kube/client.ts';
import type { Pod } from '../kube/types.ts';
import { FakeClock } from '../runtime/clock.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import { LeaderElector } from '../runtime/leader-election.ts';
import { Link, MemoryLeases } from '../runtime/testing/memory-leases.ts';
import { executePlan } from './execute.ts';
import { apiPorts } from './ports.ts';
import { cloneSet, SeenEvents } from './testing/executor-fixture.ts';

const silent = pino({ level: 'silent' });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const requests: string[] = [];
const closed: string[] = [];
const server = http.createServer((req) => {
  requests.push(`${req.method} ${req.url}`);
  req.socket.once('close', () => closed.push(`${req.method} ${req.url}`));
  req.resume(); // and never answer: the write is in flight when the lease is lost
});
let client: KubeClient;

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  client = await KubeClient.fromKubeConfig(kc, { qps: 100, burst: 100 });
});
after(() => {
  client.close();
  server.close();
  server.closeAllConnections();
});

const pod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [] } });

test('losing the lease aborts the executor: the in-flight create is cut, no later batch starts, expectations are lowered', async () => {
  const clock = new FakeClock(0);
  const link = new Link(new MemoryLeases());
  const elector = new LeaderElector({ port: link, namespace: 'ns', name: 'l', identity: 'a', clock, logger: silent, random: () => 0 });
  let leading: AbortSignal | undefined;
  const stopped: string[] = [];
  const done = elector.run(new AbortController().signal, {
    onStartedLeading: (s) => {
      leading = s;
    },
    onStoppedLeading: (reason) => void stopped.push(reason),
  });
  await flush();
  assert.ok(leading !== undefined, 'a leads');
  const scaleExpectations = new ScaleExpectations(clock, 60_000);
  const deps = {
    ports: apiPorts(client.fenced(leading)),
    scaleExpectations,
    rvExpectations: new ResourceVersionExpectations(clock, 60_000),
    recorder: new SeenEvents({ sink: { create: async () => undefined, patch: async () => undefined }, clock, logger: silent }),
    nowMs: () => clock.now(),
    sleep: async () => undefined,
    signal: leading,
  };
  const pods = ['sample-a', 'sample-b', 'sample-c'].map((name) => ({ pod: pod(name), pvcs: [], revision: 'r1' }));
  const outcome = executePlan(cloneSet, 'ns/sample', 'scale', [{ kind: 'CreatePods', pods }], deps);
  while (requests.length === 0) await new Promise((r) => setTimeout(r, 5));

  link.hang = true; // the API server stops answering this replica's renewals
  for (let t = 0; t < 15_000; t += 500) {
    clock.advance(500);
    await flush();
  }
  assert.deepEqual(stopped, ['lost']);
  const result = await outcome;
  assert.ok(result.failure?.error instanceof RequestAbortedError, `the write failed with the abort: ${String(result.failure?.error)}`);
  while (closed.length === 0) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(requests, ['POST /api/v1/namespaces/ns/pods'], 'one create was in flight; the next slow-start batch never started');
  assert.deepEqual(closed, ['POST /api/v1/namespaces/ns/pods'], 'its socket was destroyed');
  assert.equal(scaleExpectations.check('ns/sample').satisfied, true, 'no expectation is left waiting for pods that will not come');
  await assert.rejects(deps.ports.pods.patchPod('ns', 'sample-a', {}, 'merge'), RequestAbortedError, 'a fenced client refuses every later write');
  await done;
});

test('an executor whose signal has aborted starts no write at all', async () => {
  requests.length = 0;
  const clock = new FakeClock(0);
  const stopping = new AbortController();
  stopping.abort();
  const deps = {
    ports: apiPorts(client),
    scaleExpectations: new ScaleExpectations(clock, 60_000),
    rvExpectations: new ResourceVersionExpectations(clock, 60_000),
    recorder: new SeenEvents({ sink: { create: async () => undefined, patch: async () => undefined }, clock, logger: silent }),
    nowMs: () => clock.now(),
    sleep: async () => undefined,
    signal: stopping.signal,
  };
  const result = await executePlan(cloneSet, 'ns/sample', 'update', [{ kind: 'PatchPodLifecycle', pod: { name: 'sample-a', uid: 'u' }, state: 'Normal' }], deps);
  assert.match(String(result.failure?.error), /stopping or lost its leader lease/);
  assert.equal(result.writes, 0);
  assert.deepEqual(requests, []);
});
