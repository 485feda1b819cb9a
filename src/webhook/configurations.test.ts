import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientConfig, mutatingWebhooks, servingHosts, validatingWebhooks, webhookNames } from './configurations.ts';

describe('webhook configurations', () => {
  const svc = { mode: 'service', namespace: 'cloneset-system', service: 'cloneset-controller-webhook-service' } as const;
  const url = { mode: 'url', host: '127.0.0.1', port: 9443 } as const;

  test('Service mode points at the Service on 443; URL mode at https://host:port (IPv6 in brackets); caBundle base64', () => {
    assert.deepEqual(clientConfig(svc, '/convert', undefined), {
      service: { namespace: 'cloneset-system', name: 'cloneset-controller-webhook-service', path: '/convert', port: 443 },
    });
    assert.deepEqual(clientConfig(url, '/convert', 'PEM'), { url: 'https://127.0.0.1:9443/convert', caBundle: Buffer.from('PEM').toString('base64') });
    assert.equal(clientConfig({ mode: 'url', host: '::1', port: 1 }, '/x', undefined).url, 'https://[::1]:1/x');
  });

  test('the serving certificate covers the Service names, and in URL mode the host and localhost too', () => {
    assert.deepEqual(servingHosts(svc, 'ns'), [
      'cloneset-controller-webhook-service',
      'cloneset-controller-webhook-service.ns',
      'cloneset-controller-webhook-service.ns.svc',
      'cloneset-controller-webhook-service.ns.svc.cluster.local',
    ]);
    assert.deepEqual(servingHosts(url, 'ns').slice(0, 2), ['127.0.0.1', 'localhost']);
  });

  test('a name prefix (one per Helm release) names the Service, the Secret and both configurations', () => {
    assert.deepEqual(webhookNames('blue-cloneset-controller'), {
      service: 'blue-cloneset-controller-webhook-service',
      secret: 'blue-cloneset-controller-webhook-certs',
      mutating: 'blue-cloneset-controller-mutating-webhook-configuration',
      validating: 'blue-cloneset-controller-validating-webhook-configuration',
    });
    assert.equal(servingHosts({ mode: 'service', namespace: 'ns', service: 'blue-cloneset-controller-webhook-service' }, 'ns')[0], 'blue-cloneset-controller-webhook-service');
  });

  test('one webhook per version, Exact match, Fail, no side effects, 10 s; validating also on DELETE', () => {
    const m = mutatingWebhooks(url, undefined);
    const v = validatingWebhooks(url, undefined);
    assert.deepEqual(
      m.map((w) => w.name),
      ['mcloneset.kb.io', 'mcloneset-v1beta1.kb.io'],
    );
    assert.deepEqual(
      v.map((w) => w.name),
      ['vcloneset.kb.io', 'vcloneset-v1beta1.kb.io'],
    );
    for (const w of [...m, ...v]) {
      assert.deepEqual([w.failurePolicy, w.matchPolicy, w.sideEffects, w.timeoutSeconds, w.admissionReviewVersions], ['Fail', 'Exact', 'None', 10, ['v1']]);
    }
    assert.deepEqual((m[1]?.rules as { apiVersions: string[]; operations: string[] }[] | undefined)?.[0], {
      apiGroups: ['apps.kruise.io'],
      apiVersions: ['v1beta1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['clonesets'],
      scope: '*',
    });
    assert.deepEqual((v[0]?.rules as { operations: string[] }[] | undefined)?.[0]?.operations, ['CREATE', 'UPDATE', 'DELETE']);
  });
});
