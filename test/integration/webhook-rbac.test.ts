// The webhook's shipped RBAC (config/rbac/webhook-role.yaml) on a real API server: a webhook process running with a
// ServiceAccount token bound only to it adopts the certificate Secret, checks the webhook configurations and the CRD,
// and becomes ready without a single error; `kubectl auth can-i` shows the writes it needs are allowed and nothing more.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.ts';
import { NAMESPACES } from '../../src/kube/resources.ts';
import { builtControllerMain } from '../../tools/localcluster/controller-build.ts';
import { MUTATING_CONFIGURATION, SECRET_NAME, VALIDATING_CONFIGURATION, WEBHOOK_NAMESPACE } from '../../src/webhook/configurations.ts';
import { eventually, kubectl, kubectlOk, newNamespace, ROOT, testClient } from '../helpers/kube.ts';

const SA = 'cloneset-controller';

describe('webhook RBAC (config/rbac/webhook-role.yaml) on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let proc: ChildProcess | undefined;
  let logFile = '';
  let suffix = '';

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'webhook-rbac');
    suffix = ns;
    // The shipped manifest with the ServiceAccount of the test namespace as the subject and bindings of their own;
    // the Role stays in the webhook namespace, where the Secret is.
    const shipped = readFileSync(path.join(ROOT, 'config/rbac/webhook-role.yaml'), 'utf8');
    const manifest = shipped
      .replaceAll('    namespace: cloneset-system', `    namespace: ${ns}`)
      .replace('kind: ClusterRoleBinding\nmetadata:\n  name: cloneset-controller-webhook\n', `kind: ClusterRoleBinding\nmetadata:\n  name: cloneset-controller-webhook-${suffix}\n`)
      .replace('kind: RoleBinding\nmetadata:\n  name: cloneset-controller-webhook-certs\n', `kind: RoleBinding\nmetadata:\n  name: cloneset-controller-webhook-certs-${suffix}\n`);
    assert.ok(manifest.includes(`cloneset-controller-webhook-${suffix}`) && manifest.includes(`cloneset-controller-webhook-certs-${suffix}`), 'bindings renamed');
    kubectlOk(['create', 'serviceaccount', SA, '-n', ns]);
    kubectlOk(['apply', '-f', '-'], manifest);
    const token = kubectlOk(['create', 'token', SA, '-n', ns, '--duration=1h']).trim();
    const admin = JSON.parse(kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'])) as { clusters: { name: string; cluster: Record<string, unknown> }[] };
    const cluster = admin.clusters[0];
    assert.ok(cluster !== undefined);
    const dir = path.join(ROOT, '.cluster', 'test-logs');
    mkdirSync(dir, { recursive: true });
    const kubeconfig = path.join(dir, `${ns}.kubeconfig`);
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [cluster],
        users: [{ name: SA, user: { token } }],
        contexts: [{ name: SA, context: { cluster: cluster.name, user: SA } }],
        'current-context': SA,
      }),
      { mode: 0o600 },
    );
    // on the URL the API server already calls (the port is shared, SO_REUSEPORT)
    const url = JSON.parse(kubectlOk(['get', 'validatingwebhookconfiguration', VALIDATING_CONFIGURATION, '-o', 'json'])) as { webhooks: { clientConfig: { url?: string } }[] };
    const port = new URL(url.webhooks[0]?.clientConfig.url ?? 'https://127.0.0.1:0').port;
    logFile = path.join(dir, `webhook-rbac-${Date.now()}.log`);
    const out = createWriteStream(logFile);
    proc = spawn(
      process.execPath,
      [
        builtControllerMain(),
        'webhook',
        '--kubeconfig',
        kubeconfig,
        '--webhook-host',
        '127.0.0.1',
        '--webhook-port',
        port,
        `--webhook-cert-validity=${process.env.WEBHOOK_CERT_VALIDITY ?? '2m'}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout?.pipe(out);
    proc.stderr?.pipe(out);
  });

  after(async () => {
    if (proc !== undefined && proc.exitCode === null) {
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    }
    kubectl(['delete', 'clusterrolebinding', `cloneset-controller-webhook-${suffix}`, '--ignore-not-found']);
    kubectl(['delete', 'rolebinding', '-n', WEBHOOK_NAMESPACE, `cloneset-controller-webhook-certs-${suffix}`, '--ignore-not-found']);
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('the ServiceAccount runs the webhook: Secret adopted, configurations and CRD checked, ready, no error', async () => {
    const lines = (): { level: string; msg: string; err?: string }[] =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: string; msg: string; err?: string });
    const isError = (l: { level: string }): boolean => l.level === 'error' || l.level === 'fatal';
    await eventually(
      'the webhook process to be ready',
      async () => {
        const errors = lines().filter(isError);
        if (errors.length > 0) throw new Error(`errors in ${logFile}: ${errors.map((e) => `${e.msg} ${e.err ?? ''}`).join('; ')}`);
        return lines().some((l) => l.msg === 'webhook ready') ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(lines().filter(isError), []);
  });

  it('kubectl auth can-i: the writes the webhook needs are allowed, nothing more', () => {
    const as = `--as=system:serviceaccount:${ns}:${SA}`;
    const can = (...args: string[]): boolean => kubectl(['auth', 'can-i', as, ...args]).stdout.trim() === 'yes';
    const allowed: string[][] = [
      ['create', 'secrets', '-n', WEBHOOK_NAMESPACE],
      ['get', `secrets/${SECRET_NAME}`, '-n', WEBHOOK_NAMESPACE],
      ['patch', `secrets/${SECRET_NAME}`, '-n', WEBHOOK_NAMESPACE],
      ['create', 'mutatingwebhookconfigurations'],
      ['patch', `mutatingwebhookconfigurations/${MUTATING_CONFIGURATION}`],
      ['create', 'validatingwebhookconfigurations'],
      ['patch', `validatingwebhookconfigurations/${VALIDATING_CONFIGURATION}`],
      ['get', 'customresourcedefinitions/clonesets.apps.kruise.io'],
      ['patch', 'customresourcedefinitions/clonesets.apps.kruise.io'],
      ['get', 'pods', '-n', 'default'],
    ];
    const denied: string[][] = [
      ['list', 'secrets', '-n', WEBHOOK_NAMESPACE],
      ['get', 'secrets/other', '-n', WEBHOOK_NAMESPACE],
      ['create', 'secrets', '-n', 'default'],
      ['delete', `mutatingwebhookconfigurations/${MUTATING_CONFIGURATION}`],
      ['patch', 'validatingwebhookconfigurations/someone-elses'],
      ['patch', 'customresourcedefinitions/other.example.com'],
      ['list', 'pods', '-n', 'default'],
      ['delete', 'pods', '-n', 'default'],
    ];
    assert.deepEqual(
      allowed.filter((a) => !can(...a)).map((a) => a.join(' ')),
      [],
      'allowed',
    );
    assert.deepEqual(
      denied.filter((a) => can(...a)).map((a) => a.join(' ')),
      [],
      'denied',
    );
  });
});
