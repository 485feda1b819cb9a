// The Helm chart (charts/cloneset-controller) against the real API server: `helm lint`, `helm template … |
// kubectl apply --dry-run=server`, and no drift from config/ (the CRD and the least-privilege RBAC rules the
// kustomize manifests install). Helm is built from the Go module proxy by hack/build-helm.sh when not cached.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../src/kube/client.ts';
import { NAMESPACES } from '../../src/kube/resources.ts';
import { kubectl, newNamespace, ROOT, testClient } from '../helpers/kube.ts';

const CHART = path.join(ROOT, 'charts', 'cloneset-controller');
/** No image of the chart is published: every install names one (values.yaml). */
const IMAGE = 'image.repository=registry.example.com/cloneset-controller';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

function run(cmd: string, args: readonly string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function configManifest(file: string): Manifest {
  return parse(readFileSync(path.join(ROOT, 'config', file), 'utf8')) as Manifest;
}

describe('Helm chart charts/cloneset-controller', () => {
  let helm: string;
  let client: KubeClient;
  let ns: string;

  /** `helm template` of release `release` in namespace `namespace` with `--set` values (and an image); the parsed objects. */
  const renderRelease = (release: string, namespace: string, sets: readonly string[] = []): Manifest[] => {
    const r = run(helm, ['template', release, CHART, '--namespace', namespace, ...[IMAGE, ...sets].flatMap((s) => ['--set', s])]);
    assert.equal(r.code, 0, `helm template failed: ${r.stderr}`);
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null);
  };
  const render = (sets: readonly string[] = []): Manifest[] => renderRelease('cloneset-controller', ns, sets);
  const find = (objs: readonly Manifest[], kind: string, name: string): Manifest => {
    const o = objs.find((m) => m.kind === kind && m.metadata.name === name);
    assert.ok(o !== undefined, `${kind} ${name} in ${objs.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
    return o;
  };

  /**
   * `kubectl apply --dry-run=server` of the rendered objects as a first install would create them. The cluster-scoped
   * ones get names of this test (the CRD another group), because the live ones may belong to someone else: the test
   * suite's own webhook process points the CRD's conversion and the webhook configurations at itself in URL mode, and
   * a client-side apply of our Service mode on top of that would merge both (invalid) rather than check our objects.
   */
  const applyDryRun = (objs: readonly Manifest[]): { code: number; stdout: string; stderr: string } => {
    const fresh = objs.map((m): Manifest => {
      if (m.metadata.namespace !== undefined) return m;
      if (m.kind === 'CustomResourceDefinition') {
        const spec = m['spec'] as { group: string; names: { plural: string } };
        const group = `${ns}.dry-run.kruise.io`;
        return { ...m, metadata: { ...m.metadata, name: `${spec.names.plural}.${group}` }, spec: { ...spec, group } };
      }
      return { ...m, metadata: { ...m.metadata, name: `${m.metadata.name}-${ns}` } };
    });
    return kubectl(['apply', '--dry-run=server', '-f', '-'], fresh.map((m) => JSON.stringify(m)).join('\n'));
  };

  before(async () => {
    // Built once into ~/.cache/cloneset-controller/bin (a few minutes the first time), then reused.
    helm = execFileSync('bash', [path.join(ROOT, 'hack', 'build-helm.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    client = await testClient();
    ns = await newNamespace(client, 'helm');
  });

  after(async () => {
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it("the chart's copies of config/ are up to date (npm run gen:chart)", () => {
    const r = run(process.execPath, ['--disable-warning=ExperimentalWarning', 'hack/gen-chart.ts', '--check']);
    assert.equal(r.code, 0, r.stderr);
  });

  it('helm lint passes with the default values and with cert-manager and a ServiceMonitor', () => {
    for (const sets of [[], ['certManager.enabled=true', 'serviceMonitor.enabled=true', 'namespaceScope=team-a']]) {
      const r = run(helm, ['lint', '--strict', CHART, ...[IMAGE, ...sets].flatMap((s) => ['--set', s])]);
      assert.equal(r.code, 0, `helm lint ${sets.join(' ')}: ${r.stdout}${r.stderr}`);
    }
  });

  it('installs the CRD of config/crd and exactly the RBAC rules of config/rbac', () => {
    const objs = render();
    const crd = find(objs, 'CustomResourceDefinition', 'clonesets.apps.kruise.io');
    // A conversion webhook, when the CRD serves several versions, points at the Service in the release namespace.
    const configCrd = parse(
      readFileSync(path.join(ROOT, 'config/crd/apps.kruise.io_clonesets.yaml'), 'utf8').replaceAll('namespace: cloneset-system', `namespace: ${ns}`),
    ) as Manifest;
    assert.deepEqual(crd['spec'], configCrd['spec'], 'the CRD spec is the one of config/crd');
    assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep', 'helm uninstall keeps the CRD (and so every CloneSet)');

    const role = find(objs, 'ClusterRole', 'cloneset-controller');
    assert.deepEqual(role['rules'], configManifest('rbac/role.yaml')['rules'], 'ClusterRole rules of config/rbac/role.yaml');
    const le = find(objs, 'Role', 'cloneset-controller-leader-election');
    assert.equal(le.metadata.namespace, ns);
    assert.deepEqual(le['rules'], configManifest('rbac/leader-election-role.yaml')['rules'], 'Role rules of config/rbac/leader-election-role.yaml');
  });

  it('the webhook server gets the rules of config/rbac/webhook-role.yaml, its Service and its two configurations', () => {
    const objs = render();
    const configDocs = parseAllDocuments(readFileSync(path.join(ROOT, 'config/rbac/webhook-role.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
    const configRules = (kind: string): unknown => configDocs.find((d) => d.kind === kind)?.['rules'];
    assert.deepEqual(find(objs, 'ClusterRole', 'cloneset-controller-webhook')['rules'], configRules('ClusterRole'));
    const secrets = find(objs, 'Role', 'cloneset-controller-webhook-certs');
    assert.equal(secrets.metadata.namespace, ns);
    assert.deepEqual(secrets['rules'], configRules('Role'));
    for (const rule of secrets['rules'] as Rule[]) {
      assert.ok(
        rule.resources?.join() === 'secrets' && (rule.verbs.join() === 'create' || rule.resourceNames?.join() === 'cloneset-controller-webhook-certs'),
        `Secrets by name only (create cannot be narrowed): ${JSON.stringify(rule)}`,
      );
    }
    const svc = find(objs, 'Service', 'cloneset-controller-webhook-service') as Manifest & { spec: { ports: { port: number; targetPort: string }[] } };
    assert.deepEqual(
      svc.spec.ports.map((p) => [p.port, p.targetPort]),
      [[443, 'webhook']],
    );
    // The webhook configurations are exactly the ones the controller keeps in place (config/webhook/manifests.yaml),
    // pointed at the release namespace: the controller would rewrite any other content.
    const webhookDocs = parseAllDocuments(readFileSync(path.join(ROOT, 'config/webhook/manifests.yaml'), 'utf8').replaceAll('namespace: cloneset-system', `namespace: ${ns}`)).map(
      (d) => d.toJS() as Manifest,
    );
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const want = webhookDocs.find((d) => d.kind === kind);
      assert.ok(want !== undefined, kind);
      const got = find(objs, kind, want.metadata.name);
      assert.deepEqual(got['webhooks'], want['webhooks'], kind);
      const paths = (got['webhooks'] as { clientConfig: { service: { path: string } } }[]).map((w) => w.clientConfig.service.path);
      for (const v of ['v1alpha1', 'v1beta1'])
        assert.ok(
          paths.some((p) => p.endsWith(`-apps-kruise-io-${v}-cloneset`)),
          `${kind} serves ${v}`,
        );
    }
  });

  it('the Deployment: 2 replicas, leader election, probes, resources, hardened security context, webhook flags', () => {
    const dep = find(
      render(['featureGates.CloneSetShortHash=true', 'namespaceScope=team-a', 'workers=5', 'kubeAPI.qps=100', 'kubeAPI.burst=200', 'logLevel=debug']),
      'Deployment',
      'cloneset-controller',
    );
    const spec = dep['spec'] as { replicas: number; template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
    assert.equal(spec.replicas, 2);
    const pod = spec.template.spec;
    assert.deepEqual(pod['securityContext'], { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.containers[0];
    assert.ok(c !== undefined);
    assert.equal(c['command'], undefined, 'the image entrypoint (node as PID 1) is used');
    assert.deepEqual(c['args'], [
      '--leader-elect',
      `--leader-election-namespace=${ns}`,
      '--leader-election-id=cloneset-controller',
      '--namespace=team-a',
      '--cloneset-workers=5',
      '--kube-api-qps=100',
      '--kube-api-burst=200',
      '--feature-gates=CloneSetShortHash=true',
      '--log-level=debug',
      '--log-format=json',
      '--metrics-bind-address=:8080',
      '--metrics-secure',
      '--metrics-max-clonesets=2000',
      '--health-probe-bind-address=:8000',
      '--webhook-port=9443',
      `--webhook-namespace=${ns}`,
      '--webhook-name-prefix=cloneset-controller',
    ]);
    assert.equal(pod.containers[0]?.['image'], 'registry.example.com/cloneset-controller:0.1.0', 'the tag defaults to the appVersion');
    assert.deepEqual(c['securityContext'], { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    assert.deepEqual((c['livenessProbe'] as { httpGet: unknown }).httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual((c['readinessProbe'] as { httpGet: unknown }).httpGet, { path: '/readyz', port: 'health' });
    assert.ok(c['resources'] !== undefined);
  });

  it('secure metrics (on by default): the controller may review tokens, scrapers get the reader ClusterRole, the ServiceMonitor scrapes HTTPS with a token', () => {
    const objs = render(['serviceMonitor.enabled=true', 'metrics.readers[0].name=prometheus', 'metrics.readers[0].namespace=monitoring']);
    assert.deepEqual(find(objs, 'ClusterRole', 'cloneset-controller-metrics-auth')['rules'], configManifest('rbac/metrics-auth-role.yaml')['rules']);
    const binding = find(objs, 'ClusterRoleBinding', 'cloneset-controller-metrics-auth') as Manifest & { subjects: { name: string; namespace: string }[] };
    assert.deepEqual(
      binding.subjects.map((x) => [x.name, x.namespace]),
      [['cloneset-controller', ns]],
    );
    assert.deepEqual(find(objs, 'ClusterRole', 'cloneset-controller-metrics-reader')['rules'], configManifest('rbac/metrics-reader-role.yaml')['rules']);
    const readers = find(objs, 'ClusterRoleBinding', 'cloneset-controller-metrics-reader') as Manifest & { subjects: { name: string; namespace: string }[] };
    assert.deepEqual(
      readers.subjects.map((x) => [x.name, x.namespace]),
      [['prometheus', 'monitoring']],
    );
    const sm = find(objs, 'ServiceMonitor', 'cloneset-controller') as Manifest & { spec: { endpoints: { scheme?: string; bearerTokenFile?: string }[] } };
    assert.equal(sm.spec.endpoints[0]?.scheme, 'https');
    assert.ok(sm.spec.endpoints[0]?.bearerTokenFile !== undefined);
    const plain = render(['metrics.secure=false']);
    assert.ok(!plain.some((m) => m.metadata.name.startsWith('cloneset-controller-metrics-')), 'no metrics RBAC without secure metrics');
  });

  it('the Grafana dashboard ConfigMap (sidecar label) and the PrometheusRule of config/prometheus/alerts.yaml, when enabled', () => {
    assert.ok(!render().some((m) => m.kind === 'PrometheusRule' || m.metadata.name === 'cloneset-controller-dashboard'), 'both off by default');
    const objs = render(['grafanaDashboard.enabled=true', 'prometheusRule.enabled=true']);
    const cm = find(objs, 'ConfigMap', 'cloneset-controller-dashboard') as Manifest & { data: Record<string, string> };
    assert.equal(cm.metadata.labels?.['grafana_dashboard'], '1');
    const json = JSON.parse(cm.data['cloneset-controller.json'] ?? '') as { uid: string; panels: unknown[] };
    assert.equal(json.uid, 'cloneset-controller');
    assert.ok(json.panels.length > 20);
    const rule = find(objs, 'PrometheusRule', 'cloneset-controller') as Manifest & { spec: { groups: unknown } };
    assert.deepEqual(rule.spec.groups, (parse(readFileSync(path.join(ROOT, 'config/prometheus/alerts.yaml'), 'utf8')) as { groups: unknown }).groups);
  });

  it('helm template | kubectl apply --dry-run=server: the API server accepts every object, as a new install', () => {
    const r = run(helm, ['template', 'cloneset-controller', CHART, '--namespace', ns, '--set', IMAGE, '--set', 'grafanaDashboard.enabled=true']);
    assert.equal(r.code, 0, r.stderr);
    const applied = applyDryRun(
      parseAllDocuments(r.stdout)
        .map((d) => d.toJS() as Manifest | null)
        .filter((m): m is Manifest => m !== null),
    );
    assert.equal(applied.code, 0, `kubectl apply --dry-run=server: ${applied.stderr}`);
    for (const kind of [
      'customresourcedefinition',
      'clusterrole',
      'clusterrolebinding',
      'deployment.apps',
      'service',
      'poddisruptionbudget.policy',
      'configmap',
      'mutatingwebhookconfiguration',
      'validatingwebhookconfiguration',
      'role.rbac',
      'rolebinding.rbac',
      'serviceaccount',
    ]) {
      assert.match(applied.stdout, new RegExp(`^${kind}[^ ]*/\\S+ created \\(server dry run\\)$`, 'm'), kind);
    }
  });

  it('certManager.enabled: a Certificate fills the mounted Secret, cert-manager injects the CA, no access to Secrets', () => {
    const objs = render(['certManager.enabled=true']);
    const cert = find(objs, 'Certificate', 'cloneset-controller-webhook-cert') as Manifest & { spec: { secretName: string; dnsNames: string[]; issuerRef: unknown } };
    assert.equal(cert.spec.secretName, 'cloneset-controller-webhook-certs');
    assert.deepEqual(cert.spec.dnsNames, [`cloneset-controller-webhook-service.${ns}.svc`, `cloneset-controller-webhook-service.${ns}.svc.cluster.local`]);
    assert.deepEqual(cert.spec.issuerRef, { kind: 'Issuer', name: 'cloneset-controller-selfsigned' });
    find(objs, 'Issuer', 'cloneset-controller-selfsigned');
    for (const [kind, name] of [
      ['MutatingWebhookConfiguration', 'cloneset-controller-mutating-webhook-configuration'],
      ['ValidatingWebhookConfiguration', 'cloneset-controller-validating-webhook-configuration'],
      ['CustomResourceDefinition', 'clonesets.apps.kruise.io'],
    ] as const) {
      assert.equal(find(objs, kind, name).metadata.annotations?.['cert-manager.io/inject-ca-from'], `${ns}/cloneset-controller-webhook-cert`, kind);
    }
    const dep = JSON.stringify(find(objs, 'Deployment', 'cloneset-controller'));
    assert.ok(dep.includes('--webhook-cert-dir=/etc/cloneset-controller/webhook-certs'), 'the controller serves the mounted certificate');
    assert.ok(dep.includes('"secretName":"cloneset-controller-webhook-certs"'), 'the Secret is mounted');
    assert.ok(!objs.some((m) => m.metadata.name === 'cloneset-controller-webhook-certs'), 'no Role for the certificate Secret');
    assert.ok(!JSON.stringify(objs.filter((m) => m.kind.includes('Role'))).includes('"secrets"'), 'no access to Secrets at all');
    // Everything but the cert-manager kinds (not installed on the test cluster) is accepted by the API server.
    const applied = applyDryRun(objs.filter((m) => !m.apiVersion.startsWith('cert-manager.io/')));
    assert.equal(applied.code, 0, applied.stderr);
  });

  it('bad values are refused with the field path', () => {
    const r = run(helm, ['template', 'x', CHART, '--set', IMAGE, '--set', 'workers=many', '--set', 'logLevel=verbose']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /\/workers': got string, want integer/);
    assert.match(r.stderr, /\/logLevel': value must be one of/);
  });

  it('an unknown or misspelt value is refused by the schema, not ignored', () => {
    for (const set of ['foo=bar', 'image.respository=x', 'webhook.prot=443']) {
      const r = run(helm, ['template', 'x', CHART, '--set', IMAGE, '--set', set]);
      assert.notEqual(r.code, 0, `${set} rendered: ${r.stdout.slice(0, 200)}`);
      assert.match(r.stderr, /values don't meet the specifications of the schema/, set);
      assert.match(r.stderr, /additional properties '(foo|respository|prot)' not allowed/, set);
    }
  });

  it('without image.repository it says what to build and set (no published image is assumed)', () => {
    const r = run(helm, ['template', 'x', CHART]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /image\.repository is required: build the image \(npm run image, or docker build \.\)/);
  });

  it('two releases render without a shared object name; names, lease and webhook names follow the release', () => {
    const blue = renderRelease('blue', `${ns}-blue`);
    const green = renderRelease('green', `${ns}-green`, ['crds.install=false']);
    const key = (m: Manifest): string => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
    const blueKeys = new Set(blue.map(key));
    assert.deepEqual(
      green.map(key).filter((k) => blueKeys.has(k)),
      [],
      'no object of the second release has the name of one of the first',
    );
    find(blue, 'Deployment', 'blue-cloneset-controller');
    find(blue, 'MutatingWebhookConfiguration', 'blue-cloneset-controller-mutating-webhook-configuration');
    const args = JSON.stringify(find(blue, 'Deployment', 'blue-cloneset-controller'));
    for (const a of ['--leader-election-id=blue-cloneset-controller', '--webhook-name-prefix=blue-cloneset-controller']) assert.ok(args.includes(a), a);
    const webhookRole = find(blue, 'ClusterRole', 'blue-cloneset-controller-webhook');
    assert.deepEqual(
      (webhookRole['rules'] as Rule[]).flatMap((r) => r.resourceNames ?? []),
      ['blue-cloneset-controller-mutating-webhook-configuration', 'blue-cloneset-controller-validating-webhook-configuration', 'clonesets.apps.kruise.io'],
    );
    const certs = find(blue, 'Role', 'blue-cloneset-controller-webhook-certs');
    assert.deepEqual(
      (certs['rules'] as Rule[]).flatMap((r) => r.resourceNames ?? []),
      ['blue-cloneset-controller-webhook-certs'],
    );
    const hooks = find(blue, 'ValidatingWebhookConfiguration', 'blue-cloneset-controller-validating-webhook-configuration')['webhooks'] as {
      clientConfig: { service: { name: string; namespace: string } };
    }[];
    assert.ok(hooks.every((w) => w.clientConfig.service.name === 'blue-cloneset-controller-webhook-service' && w.clientConfig.service.namespace === `${ns}-blue`));
    assert.equal(green.filter((m) => m.kind === 'CustomResourceDefinition').length, 0, 'the CRD belongs to one release');
  });

  it('NOTES point at the leader through the Lease holder, not at any replica of the Deployment', () => {
    const r = run(helm, ['install', 'blue', CHART, '--namespace', ns, '--dry-run=client', '--set', IMAGE, '--set', 'crds.install=false']);
    assert.equal(r.code, 0, r.stderr);
    const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
    assert.match(notes, new RegExp(`kubectl -n ${ns} get lease blue-cloneset-controller -o jsonpath='\\{\\.spec\\.holderIdentity\\}'`));
    assert.doesNotMatch(notes, /logs deploy\//);
  });
});
