import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiserverArgs, controllerManagerArgs, schedulerConfiguration, type ComponentPorts } from './components.ts';
import type { Pki } from './pki.ts';

const ports: ComponentPorts = { etcd: 1, etcdPeer: 2, apiserver: 3, kubeControllerManager: 4, kubeScheduler: 5, kwok: 6 };
const pair = { cert: 'c', key: 'k' };
const pki: Pki = { dir: '/s/pki', ca: pair, apiserver: pair, serviceAccount: { publicKey: 'p', privateKey: 'q' }, clients: {} };

describe('the control plane profiles', () => {
  it('large raises the scheduler client limit to 2000 QPS, the default profile keeps 500', () => {
    const qps = (c: unknown): unknown => (c as { clientConnection: { qps: number; burst: number } }).clientConnection;
    assert.deepEqual(qps(schedulerConfiguration('kc')), { kubeconfig: 'kc', qps: 500, burst: 1000 });
    assert.deepEqual(qps(schedulerConfiguration('kc', 'large')), { kubeconfig: 'kc', qps: 2000, burst: 4000 });
  });

  it('large gives the controller-manager 1000 QPS and the API server 8 collection-delete workers', () => {
    assert.ok(controllerManagerArgs('/s', ports, pki, 'kc').includes('--kube-api-qps=300'));
    assert.ok(controllerManagerArgs('/s', ports, pki, 'kc', 'large').includes('--kube-api-qps=1000'));
    assert.ok(!apiserverArgs('/s', ports, pki).some((a) => a.startsWith('--delete-collection-workers')));
    assert.ok(apiserverArgs('/s', ports, pki, 'large').includes('--delete-collection-workers=8'));
  });
});
