// Two replicas under leader election, as the Helm chart deploys them: the standby answers /readyz 200 too, so a
// rolling update of the controller's Deployment (whose surge pod starts as a standby) and node drains under its
// PodDisruptionBudget are not blocked by a replica that can never become Ready.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { KubeClient } from '../../src/kube/client.ts';
import { LEASES, NAMESPACES } from '../../src/kube/resources.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const addr = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  assert.ok(addr !== null && typeof addr === 'object');
  return addr.port;
}

describe('readiness of a standby replica', () => {
  let client: KubeClient;
  let ns: string;
  const replicas: { controller: ControllerProcess; port: number }[] = [];

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'standby');
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      replicas.push({ port, controller: startController(ns, ['--leader-elect', `--leader-election-namespace=${ns}`, `--health-probe-bind-address=127.0.0.1:${port}`]) });
    }
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.controller.stop()));
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('both the leader and the standby answer /readyz 200, and only one holds the Lease', async () => {
    await eventually('a leader holds the Lease', async () => {
      const l = await client.get<{ spec?: { holderIdentity?: string } }>(LEASES, ns, 'cloneset-controller').catch(() => undefined);
      return (l?.spec?.holderIdentity ?? '') !== '' ? true : undefined;
    });
    for (const { port } of replicas) {
      await eventually(`/readyz 200 on :${port}`, async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      });
    }
    const leading = replicas.filter((r) => readFileSync(r.controller.logFile, 'utf8').includes('became leader'));
    assert.equal(leading.length, 1, 'exactly one replica leads; the other is a ready standby');
    assert.ok(replicas.every((r) => r.controller.proc.exitCode === null), 'both replicas keep running');
  });
});
