import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { pino } from 'pino';
import { FEATURE_GATE_DEFAULTS } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import { generateCA, issueServingCertificate } from './cert-issuer.ts';
import type { CertAndKey } from './certificates.ts';
import type { AdmissionHandlers } from './contracts.ts';
import { formatInvalid } from '../admission/field-errors.ts';
import { MAX_BODY_BYTES, WebhookServer } from './server.ts';

/** Small test handlers: default replicas to 1; reject replicas < 0; pod "missing" does not exist. */
const fetched: string[][] = [];
const handlers: AdmissionHandlers = {
  defaultCloneSet: (obj) => ({ ...obj, spec: { replicas: 1, ...(obj.spec as Record<string, unknown>) } }),
  validateCloneSet: (req, ctx) => {
    const spec = req.object?.spec as { replicas?: number; scaleStrategy?: { podsToDelete?: string[] } } | undefined;
    const errs = [];
    if ((spec?.replicas ?? 0) < 0) errs.push({ type: 'Invalid' as const, field: 'spec.replicas', value: spec?.replicas, detail: 'must be greater than or equal to 0' });
    const old = (req.oldObject?.spec as typeof spec)?.scaleStrategy?.podsToDelete ?? [];
    for (const [i, n] of (spec?.scaleStrategy?.podsToDelete ?? []).entries()) {
      if (!old.includes(n) && !ctx.pods.has(n)) errs.push({ type: 'Invalid' as const, field: `spec.scaleStrategy.podsToDelete[${i}]`, value: n, detail: 'pod does not exist' });
    }
    return errs;
  },
  formatInvalid,
  convertCloneSet: (obj, v) => ({ ...obj, apiVersion: v }),
};

let ca: CertAndKey;
let server: WebhookServer;

function call(path: string, body: unknown, method = 'POST', caPem = ca.cert): Promise<{ status: number; body: string; peerSerial: string }> {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port: server.port, path, method, ca: caPem, servername: 'localhost', headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            peerSerial: res.socket && 'getPeerCertificate' in res.socket ? (res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber : '',
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(method === 'GET' ? undefined : data);
  });
}

const review = (request: Record<string, unknown>): unknown => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u1', kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'CloneSet' }, operation: 'CREATE', namespace: 'ns', name: 'web', ...request },
});

describe('WebhookServer (HTTPS)', () => {
  before(async () => {
    const now = Date.now();
    ca = await generateCA(now, 3_600_000);
    server = new WebhookServer({
      handlers,
      gates: FEATURE_GATE_DEFAULTS,
      logger: pino({ level: 'silent' }),
      fetchPods: async (_ns, names) => {
        fetched.push([...names]);
        return new Map<string, Pod>(names.filter((n) => n !== 'missing').map((n) => [n, { metadata: { name: n } } as Pod]));
      },
    });
    assert.equal(server.isReady(), false, 'not ready before a certificate');
    await server.setCertificate(await issueServingCertificate(ca, ['localhost', '127.0.0.1'], now, 3_600_000), 0, '127.0.0.1');
  });
  after(() => server.close());

  test('probes: /healthz, and /readyz once the certificate is loaded', async () => {
    assert.equal((await call('/healthz', '', 'GET')).status, 200);
    assert.equal((await call('/readyz', '', 'GET')).status, 200);
  });

  test('mutate answers an AdmissionReview with a JSON Patch', async () => {
    const res = await call('/mutate-apps-kruise-io-v1alpha1-cloneset', review({ object: { spec: {} } }));
    assert.equal(res.status, 200);
    const reply = JSON.parse(res.body) as { apiVersion: string; kind: string; response: { uid: string; allowed: boolean; patchType: string; patch: string } };
    assert.deepEqual(
      [reply.apiVersion, reply.kind, reply.response.uid, reply.response.allowed, reply.response.patchType],
      ['admission.k8s.io/v1', 'AdmissionReview', 'u1', true, 'JSONPatch'],
    );
    assert.deepEqual(JSON.parse(Buffer.from(reply.response.patch, 'base64').toString()), [{ op: 'add', path: '/spec/replicas', value: 1 }]);
  });

  test('validate prefetches only the added podsToDelete names and rejects with 422 and field paths', async () => {
    fetched.length = 0;
    const spec = (names: string[], replicas = 1): unknown => ({ metadata: { name: 'web' }, spec: { replicas, scaleStrategy: { podsToDelete: names } } });
    const res = await call('/validate-apps-kruise-io-v1alpha1-cloneset', review({ operation: 'UPDATE', object: spec(['kept', 'p1', 'missing'], -1), oldObject: spec(['kept']) }));
    const reply = JSON.parse(res.body) as { response: { allowed: boolean; status: { code: number; reason: string; message: string; details: { causes: { field: string }[] } } } };
    assert.deepEqual(fetched, [['p1', 'missing']]);
    assert.equal(reply.response.allowed, false);
    assert.equal(reply.response.status.code, 422);
    assert.equal(reply.response.status.reason, 'Invalid');
    assert.deepEqual(
      reply.response.status.details.causes.map((c) => c.field),
      ['spec.replicas', 'spec.scaleStrategy.podsToDelete[2]'],
    );
    assert.match(reply.response.status.message, /^CloneSet.apps.kruise.io "web" is invalid: \[spec.replicas: Invalid value: -1/);
  });

  test('/convert answers a ConversionReview', async () => {
    const res = await call('/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c1', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' }] },
    });
    const reply = JSON.parse(res.body) as { response: { uid: string; convertedObjects: { apiVersion: string }[]; result: { status: string } } };
    assert.deepEqual([reply.response.uid, reply.response.result.status, reply.response.convertedObjects[0]?.apiVersion], ['c1', 'Success', 'apps.kruise.io/v1beta1']);
  });

  test('bad requests: 400 for bad JSON or envelopes, 404 unknown path, 405 wrong method, 413 too large', async () => {
    assert.equal((await call('/validate-apps-kruise-io-v1alpha1-cloneset', '{not json')).status, 400);
    const env = await call('/mutate-apps-kruise-io-v1alpha1-cloneset', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' });
    assert.equal(env.status, 400);
    assert.match(env.body, /admissionReviewVersions/);
    assert.equal((await call('/nope', {})).status, 404);
    assert.equal((await call('/convert', '', 'GET')).status, 405);
    const big = await call('/convert', 'x'.repeat(MAX_BODY_BYTES + 1)).catch((e: unknown) => ({ status: 413, body: String(e), peerSerial: '' }));
    assert.equal(big.status, 413);
  });

  test('a wrong kind in the envelope is answered in the review (allowed: false, 400), not as an HTTP error', async () => {
    const res = await call('/mutate-apps-kruise-io-v1alpha1-cloneset', review({ kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, object: {} }));
    const reply = JSON.parse(res.body) as { response: { allowed: boolean; status: { code: number } } };
    assert.deepEqual([res.status, reply.response.allowed, reply.response.status.code], [200, false, 400]);
  });

  test('requests are counted by webhook path and HTTP code, none left in flight (controller_runtime_webhook_* metrics)', async () => {
    const stats = server.stats();
    assert.ok((stats.requests.get('/convert')?.get(200) ?? 0) >= 1);
    assert.ok((stats.requests.get('/validate-apps-kruise-io-v1alpha1-cloneset')?.get(400) ?? 0) >= 1);
    assert.ok((stats.requests.get('/mutate-apps-kruise-io-v1alpha1-cloneset')?.get(200) ?? 0) >= 2);
    assert.deepEqual(
      [...stats.inFlight.values()].filter((n) => n !== 0),
      [],
    );
  });

  test('a new certificate is served without a restart (hot swap)', async () => {
    const before = (await call('/healthz', '', 'GET')).peerSerial;
    const ca2 = await generateCA(Date.now(), 3_600_000);
    await server.setCertificate(await issueServingCertificate(ca2, ['localhost'], Date.now(), 3_600_000), 0, '127.0.0.1');
    const res = await call('/healthz', '', 'GET', ca2.cert);
    assert.equal(res.status, 200);
    assert.notEqual(res.peerSerial, before);
    await assert.rejects(call('/healthz', '', 'GET', ca.cert), /certificate/i, 'the old CA no longer verifies the new certificate');
  });
});
