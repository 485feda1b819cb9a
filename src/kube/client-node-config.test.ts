// KubeConfig loaded without client-node's generated API and proxy libraries (client-node-config.ts). This file
// imports no '@kubernetes/client-node' module itself, so it sees the stubbed load.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kubeConfigClass } from './client-node-config.ts';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

function kubeconfigFile(extraCluster = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'kc-'));
  const file = join(dir, 'config');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: c',
      'clusters:',
      '- name: k',
      '  cluster:',
      '    server: https://127.0.0.1:6443',
      `    certificate-authority-data: ${CA}`,
      extraCluster,
      'users:',
      '- name: u',
      '  user:',
      '    token: secret-token',
      'contexts:',
      '- name: c',
      '  context: {cluster: k, user: u}',
    ]
      .filter((l) => l !== '')
      .join('\n'),
  );
  return file;
}

describe('KubeConfig without the generated API', () => {
  it('loads a kubeconfig and gives the TLS options and the bearer token the transport uses', async () => {
    const KubeConfig = kubeConfigClass();
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigFile());
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    assert.match(String(opts.ca), /BEGIN CERTIFICATE/);
    assert.equal(JSON.stringify(opts.headers), JSON.stringify({ Authorization: 'Bearer secret-token' }));
  });

  for (const [proxy, agentClass] of [
    ['socks5://127.0.0.1:1080', 'SocksProxyAgent'],
    ['http://127.0.0.1:3128', 'HttpsProxyAgent'],
  ] as const) {
    it(`accepts a cluster with proxy-url ${proxy}: the proxy agent is an inert stub, TLS and token still apply`, async () => {
      const kc = new (kubeConfigClass())();
      kc.loadFromFile(kubeconfigFile(`    proxy-url: ${proxy}`));
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      // The stub class has no body: a real agent (http.Agent and its proxy subclasses) has addRequest and options.
      const agent: unknown = opts.agent;
      assert.ok(typeof agent === 'object' && agent !== null, 'applyToHTTPSOptions sets an agent for a proxy-url');
      assert.equal(agent.constructor.name, agentClass);
      assert.deepEqual(Object.keys(agent), []);
      assert.equal('addRequest' in agent, false, 'the real proxy library was loaded');
      assert.match(String(opts.ca), /BEGIN CERTIFICATE/);
      assert.deepEqual(opts.headers, { Authorization: 'Bearer secret-token' });
    });
  }

  it('refuses makeApiClient with a message that names the client to use', () => {
    const kc = new (kubeConfigClass())();
    kc.loadFromFile(kubeconfigFile());
    class AnyApi {}
    assert.throws(() => kc.makeApiClient(AnyApi as never), /makeApiClient is not available in cloneset-controller/);
  });

  it('loads once', () => {
    assert.equal(kubeConfigClass(), kubeConfigClass());
  });
});
