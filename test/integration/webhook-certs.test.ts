// The webhook's self-managed certificates on a real API server. hack/test.sh runs `cloneset-controller webhook` with
// --webhook-cert-validity=2m, so its CA and serving certificate rotate every 80 s during the whole run: these tests
// show the objects carrying the CA bundle, a full rotation under a stream of admission requests with no failure,
// and a second webhook process adopting the same Secret.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../src/kube/api-error.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES } from '../../src/kube/resources.ts';
import { builtControllerMain } from '../../tools/localcluster/controller-build.ts';
import { parseCertificates } from '../../src/webhook/certificates.ts';
import { SECRETS } from '../../src/webhook/cert-source.ts';
import { CRD_NAME, MUTATING_CONFIGURATION, SECRET_NAME, VALIDATING_CONFIGURATION, WEBHOOK_NAMESPACE } from '../../src/webhook/configurations.ts';
import { newCloneSet } from '../helpers/cloneset.ts';
import { ROOT, eventually, kubeconfigPath, kubectlOk, newNamespace, testClient } from '../helpers/kube.ts';

interface SecretObject {
  metadata: { uid: string; creationTimestamp: string };
  data: Record<string, string>;
}

const decode = (s: SecretObject, k: string): string => Buffer.from(s.data[k] ?? '', 'base64').toString('utf8');

async function readCerts(client: KubeClient): Promise<{ secret: SecretObject; bundle: ReturnType<typeof parseCertificates>; servingIssuer: string; servingSerial: string }> {
  const secret = await client.get<SecretObject>(SECRETS, WEBHOOK_NAMESPACE, SECRET_NAME);
  const tls = decode(secret, 'tls.crt');
  return {
    secret,
    bundle: parseCertificates(decode(secret, 'ca.crt')),
    servingIssuer: parseCertificates(tls)[0]?.issuer ?? '',
    servingSerial: new X509Certificate(tls).serialNumber,
  };
}

/** Every caBundle the API server will use for us, and the URLs of the webhooks. */
function installedBundles(): { bundles: string[]; urls: string[] } {
  const get = (kind: string, name: string): { webhooks: { clientConfig: { caBundle?: string; url?: string } }[] } =>
    JSON.parse(kubectlOk(['get', kind, name, '-o', 'json'])) as { webhooks: { clientConfig: { caBundle?: string; url?: string } }[] };
  const hooks = [...get('mutatingwebhookconfiguration', MUTATING_CONFIGURATION).webhooks, ...get('validatingwebhookconfiguration', VALIDATING_CONFIGURATION).webhooks];
  const crd = JSON.parse(kubectlOk(['get', 'crd', CRD_NAME, '-o', 'json'])) as {
    spec: { conversion: { strategy: string; webhook?: { clientConfig: { caBundle?: string; url?: string } } } };
  };
  const configs = [
    ...hooks.map((h) => h.clientConfig),
    ...(crd.spec.conversion.strategy === 'Webhook' && crd.spec.conversion.webhook !== undefined ? [crd.spec.conversion.webhook.clientConfig] : []),
  ];
  return { bundles: configs.map((c) => c.caBundle ?? ''), urls: configs.map((c) => c.url ?? '') };
}

describe('webhook certificates (Secret cloneset-controller-webhook-certs)', () => {
  let client: KubeClient;
  let ns: string;
  let port = 0;
  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'webhook-certs');
  });
  after(async () => {
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  /** One admission round trip each way: a valid object comes back defaulted, a bad one is refused with its field. */
  async function admissionRoundTrip(i: number): Promise<string | undefined> {
    try {
      const ok = await client.create<{ spec: { template: { spec: { containers: { imagePullPolicy?: string }[] } } } }>(CLONESETS, ns, newCloneSet(ns, `ok-${i}`, 1), {
        dryRun: true,
      });
      if (ok.spec.template.spec.containers[0]?.imagePullPolicy !== 'Always') return `request ${i}: created without the webhook's defaults`;
    } catch (e) {
      return `request ${i} (valid object): ${e instanceof Error ? e.message : String(e)}`;
    }
    const bad = newCloneSet(ns, `bad-${i}`, 1, { spec: { selector: { matchLabels: { app: 'elsewhere' } } } });
    const err = await client.create(CLONESETS, ns, bad, { dryRun: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof ApiError) || err.code !== 422 || !/spec\.template\.metadata\.labels/.test(err.message)) {
      return `request ${i} (bad object): expected a 422 naming spec.template.metadata.labels, got ${err instanceof Error ? err.message : 'success'}`;
    }
    return undefined;
  }

  it("the webhook configurations and the CRD conversion webhook carry the Secret's CA bundle and the webhook URL", async () => {
    const seen = await eventually("every caBundle equal to the Secret's ca.crt", async () => {
      const want = Buffer.from(decode((await readCerts(client)).secret, 'ca.crt')).toString('base64');
      const got = installedBundles();
      return got.bundles.every((b) => b === want) ? got : undefined;
    });
    assert.ok(seen.bundles.length >= 4, `expected 2 mutating + 2 validating webhooks (+ the CRD), got ${seen.bundles.length}`);
    const origin = new Set(seen.urls.map((u) => new URL(u).origin));
    assert.equal(origin.size, 1, [...origin].join());
    port = Number(new URL(seen.urls[0] ?? '').port);
    assert.ok(port > 0);
  });

  it('rotates the CA and then the serving certificate without failing a single admission request', async () => {
    const first = await readCerts(client);
    const ca = first.bundle.at(-1);
    assert.ok(ca !== undefined);
    const lifetimeMs = ca.notAfter - ca.notBefore;
    assert.ok(
      lifetimeMs <= 10 * 60_000,
      `the CA lives ${Math.round(lifetimeMs / 1000)} s: run this through hack/test.sh, which starts the webhook with --webhook-cert-validity=2m`,
    );
    const deadline = Date.now() + lifetimeMs + 30_000;
    const failures: string[] = [];
    const issuers = new Set<string>([first.servingIssuer]);
    let maxBundle = first.bundle.length;
    let rotatedAt = 0;
    let i = 0;
    // until the serving certificate has moved to a CA other than the one it had at the start, and 5 s beyond
    while (Date.now() < deadline && (rotatedAt === 0 || Date.now() < rotatedAt + 5000)) {
      const failure = await admissionRoundTrip(i++);
      if (failure !== undefined) failures.push(failure);
      const now = await readCerts(client);
      maxBundle = Math.max(maxBundle, now.bundle.length);
      issuers.add(now.servingIssuer);
      if (rotatedAt === 0 && now.servingIssuer !== first.servingIssuer) rotatedAt = Date.now();
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(failures, [], `${failures.length} of ${i} round trips failed`);
    assert.ok(rotatedAt > 0, `no rotation within ${Math.round((lifetimeMs + 30_000) / 1000)} s (serving certificate issuers seen: ${[...issuers].join(', ')})`);
    assert.ok(maxBundle >= 2, 'the old and the new CA were trusted together during the overlap');
    assert.ok(i >= 20, `only ${i} round trips`);
  });

  it('a second webhook process on the same URL adopts the Secret instead of creating its own, and leaves cleanly', async () => {
    assert.ok(port > 0, 'the first test found the webhook URL');
    const before = await readCerts(client);
    const logDir = path.join(ROOT, '.cluster', 'test-logs');
    mkdirSync(logDir, { recursive: true });
    const logFile = path.join(logDir, `webhook-second-${Date.now()}.log`);
    const out = createWriteStream(logFile);
    const proc = spawn(
      process.execPath,
      [
        builtControllerMain(),
        'webhook',
        '--kubeconfig',
        kubeconfigPath(),
        '--webhook-host',
        '127.0.0.1',
        '--webhook-port',
        String(port),
        `--webhook-cert-validity=${process.env.WEBHOOK_CERT_VALIDITY ?? '2m'}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout.pipe(out);
    proc.stderr.pipe(out);
    const exited = once(proc, 'exit');
    try {
      const lines = (): { msg: string; serial?: string }[] =>
        readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; serial?: string });
      await eventually('the second webhook process to be ready', async () => (lines().some((l) => l.msg === 'webhook ready') ? true : undefined), { timeoutMs: 30_000 });
      const after = await readCerts(client);
      assert.equal(after.secret.metadata.uid, before.secret.metadata.uid, 'the same Secret');
      assert.ok(!lines().some((l) => l.msg === 'webhook certificates created (new Secret)'), 'the second process created no Secret');
      const served = lines().find((l) => l.msg === 'webhook server listening')?.serial;
      assert.ok(
        served === before.servingSerial || served === after.servingSerial,
        `it serves the Secret's certificate (${served ?? '?'} vs ${before.servingSerial}/${after.servingSerial})`,
      );
      for (let i = 0; i < 10; i++) assert.equal(await admissionRoundTrip(1000 + i), undefined);
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
    // the first process answers alone again
    for (let i = 0; i < 10; i++) assert.equal(await admissionRoundTrip(2000 + i), undefined);
  });
});
