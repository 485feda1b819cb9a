import assert from 'node:assert/strict';
import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { kubeConfigClass } from './client-node-config.ts';
import { authOnly, Transport } from './transport.ts';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function kubeConfig(user: Record<string, unknown>): InstanceType<ReturnType<typeof kubeConfigClass>> {
  const kc = new (kubeConfigClass())();
  kc.loadFromOptions({
    clusters: [{ name: 'k', server: 'https://127.0.0.1:6443', caData: b64('the CA'), skipTLSVerify: false }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'c', cluster: 'k', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

describe('the per-request auth hook (authOnly)', () => {
  it('adds the bearer token and impersonation headers without decoding the CA, certificate and key again', async () => {
    const kc = kubeConfig({ token: 'secret-token', impersonateUser: 'someone', certData: b64('the cert'), keyData: b64('the key') });
    const opts: https.RequestOptions = {};
    await authOnly(kc).applyToHTTPSOptions(opts);
    assert.deepEqual(opts.headers, { 'Impersonate-User': 'someone', Authorization: 'Bearer secret-token' });
    assert.equal(opts.ca, undefined);
    assert.equal(opts.cert, undefined);
    assert.equal(opts.key, undefined);
  });

  it('keeps basic auth', async () => {
    const opts: https.RequestOptions = {};
    await authOnly(kubeConfig({ username: 'admin', password: 'pw' })).applyToHTTPSOptions(opts);
    assert.equal(opts.auth, 'admin:pw');
  });

  it('leaves the kubeconfig it was given whole: the agent takes its TLS material from it', async () => {
    const kc = kubeConfig({ certData: b64('the cert'), keyData: b64('the key') });
    authOnly(kc);
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    assert.equal(String(opts.ca), 'the CA');
    assert.equal(String(opts.cert), 'the cert');
    assert.equal(String(opts.key), 'the key');
  });
});

describe('a response body read by the transport', () => {
  it('arrives whole when the server splits a multi-byte character across two chunks', async () => {
    const body = JSON.stringify({ metadata: { name: 'café-π' } });
    const bytes = Buffer.from(body, 'utf8');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(bytes.subarray(0, cut));
      // the second half in a later chunk
      setTimeout(() => res.end(bytes.subarray(cut)), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const kc = new (kubeConfigClass())();
    kc.loadFromOptions({
      clusters: [{ name: 'k', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'k', user: 'u' }],
      currentContext: 'c',
    });
    const transport = await Transport.create(kc, 'test');
    try {
      const res = await transport.request('GET', '/api/v1/namespaces/ns/pods/p', {});
      assert.equal(res.status, 200);
      assert.equal(res.body, body);
    } finally {
      transport.close();
      server.close();
    }
  });
});
