import assert from 'node:assert/strict';
import type https from 'node:https';
import { describe, it } from 'node:test';
import { kubeConfigClass } from './client-node-config.ts';
import { authOnly } from './transport.ts';

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
