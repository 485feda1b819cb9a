// The dashboard and the alerts against a real Prometheus (built by hack/build-prometheus.sh) scraping a real
// controller over secure metrics (HTTPS, a ServiceAccount token allowed to get /metrics) while CloneSets roll out:
// one rolls out in place to the end, one cannot (a readiness gate nobody sets, a 10 s progress deadline, then an
// update the maxUnavailable budget holds back). Every query of every dashboard panel must return series, and every
// series an alert expression reads must exist; each query is printed with the number of series it returned.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parse } from 'yaml';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES } from '../../src/kube/resources.ts';
import { VALIDATING_CONFIGURATION } from '../../src/webhook/configurations.ts';
import { dashboard, type Target } from '../../hack/dashboard.ts';
import { newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { vectorSelectors } from '../helpers/promql.ts';
import { ROOT, eventually, kubectl, kubectlOk, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

interface Series {
  readonly metric: Record<string, string>;
}
interface Panel {
  readonly title: string;
  readonly targets?: readonly Target[];
  readonly type: string;
}

const RATE_WINDOW = '30s';
const JOB = 'cloneset-controller';

function freePort(): number {
  return Number(execFileSync('bash', [path.join(ROOT, 'hack', 'free-port.sh')], { encoding: 'utf8' }).trim());
}

/** An HTTPS request that accepts the controller's self-signed certificates. */
function httpsRequest(url: string, opts: { method?: string; token?: string; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: opts.method ?? 'GET',
        rejectUnauthorized: false,
        // a new connection each time: the kernel spreads connections (not requests) over the processes on a port
        agent: false,
        headers: { ...(opts.token !== undefined ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (body += d))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A dashboard query as Grafana would send it: all namespaces and CloneSets, this job, a rate window of 30 s. */
function asGrafanaSends(expr: string): string {
  return expr.replaceAll('$__rate_interval', RATE_WINDOW).replaceAll('"$namespace"', '".*"').replaceAll('"$cloneset"', '".*"').replaceAll('"$job"', `"${JOB}"`);
}

describe('Prometheus scraping the controller during rollouts: every dashboard query and alert series', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl = '';
  let metricsUrl = '';
  let token = '';
  let webhookPort = 0;
  const report: string[] = [];
  const dir = path.join(ROOT, '.cluster', 'test-logs', `prometheus-${Date.now()}`);

  const query = async (promql: string): Promise<Series[]> => {
    const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Series[] } };
    assert.equal(body.status, 'success', `${promql}: ${body.error ?? ''}`);
    return body.data?.resultType === 'vector' || body.data?.resultType === 'matrix' ? body.data.result : [];
  };

  before(async () => {
    const bin = execFileSync('bash', [path.join(ROOT, 'hack', 'build-prometheus.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    client = await testClient();
    ns = await newNamespace(client, 'prometheus');
    mkdirSync(dir, { recursive: true });
    // Prometheus' identity: a ServiceAccount bound to the reader ClusterRole the chart ships (config/rbac).
    kubectlOk(['apply', '-f', path.join(ROOT, 'config/rbac/metrics-reader-role.yaml')]);
    kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', ns]);
    kubectlOk(['create', 'clusterrolebinding', `metrics-reader-${ns}`, '--clusterrole=cloneset-controller-metrics-reader', `--serviceaccount=${ns}:prometheus`]);
    token = kubectlOk(['create', 'token', 'prometheus', '-n', ns, '--duration=1h']).trim();
    writeFileSync(path.join(dir, 'token'), token);
    // The controller serves the suite's webhook URL too (the kernel spreads connections over both processes), as
    // every replica does in a cluster: its webhook metrics then count real requests.
    const url = kubectlOk(['get', 'validatingwebhookconfiguration', VALIDATING_CONFIGURATION, '-o', 'jsonpath={.webhooks[0].clientConfig.url}']).trim();
    webhookPort = Number(new URL(url).port);
    assert.ok(webhookPort > 0, `the suite's webhook URL: ${url}`);
    const metricsPort = freePort();
    metricsUrl = `https://127.0.0.1:${metricsPort}/metrics`;
    controller = startController(ns, [
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      '--metrics-secure',
      '--log-format=text',
      '--log-level=info',
      '--rollout-blocked-warning-after=5s',
      '--leader-elect',
      `--leader-election-namespace=${ns}`,
      '--webhook-host=127.0.0.1',
      `--webhook-port=${webhookPort}`,
      `--webhook-cert-validity=${process.env.WEBHOOK_CERT_VALIDITY ?? '2m'}`,
    ]);
    const promPort = freePort();
    prometheusUrl = `http://127.0.0.1:${promPort}`;
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      JSON.stringify({
        global: { scrape_interval: '2s', evaluation_interval: '2s' },
        rule_files: [path.join(ROOT, 'config/prometheus/alerts.yaml')],
        scrape_configs: [
          {
            job_name: JOB,
            scheme: 'https',
            authorization: { credentials_file: path.join(dir, 'token') },
            tls_config: { insecure_skip_verify: true },
            static_configs: [{ targets: [`127.0.0.1:${metricsPort}`] }],
          },
        ],
      }),
    );
    prometheus = spawn(
      path.join(bin, 'prometheus'),
      [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr?.pipe(createWriteStream(path.join(dir, 'prometheus.log')));
    await eventually('Prometheus ready', async () => ((await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.ok === true ? true : undefined), { timeoutMs: 60_000 });
  });

  after(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await once(prometheus, 'exit');
    }
    await controller?.stop();
    kubectl(['delete', 'clusterrolebinding', `metrics-reader-${ns}`, '--ignore-not-found']);
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
    if (report.length > 0) writeFileSync(path.join(dir, 'queries.txt'), `${report.join('\n')}\n`);
  });

  it('secure metrics: 401 without a token, 403 for a token without the permission, 200 for the reader', async () => {
    await eventually('the metrics server', async () => ((await httpsRequest(metricsUrl).catch(() => undefined))?.status === 401 ? true : undefined), { timeoutMs: 30_000 });
    kubectlOk(['create', 'serviceaccount', 'nobody', '-n', ns]);
    const nobody = kubectlOk(['create', 'token', 'nobody', '-n', ns]).trim();
    assert.equal((await httpsRequest(metricsUrl, { token: nobody })).status, 403);
    const ok = await httpsRequest(metricsUrl, { token });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^# TYPE controller_runtime_reconcile_total counter$/m);
  });

  it('a rollout that finishes and one that cannot: the metrics name the blocking reasons', async () => {
    const inPlace = { updateStrategy: { type: 'InPlaceIfPossible' as const, maxUnavailable: 1 } };
    await client.create(CLONESETS, ns, newCloneSet(ns, 'web', 4, { spec: inPlace }));
    await client.create(CLONESETS, ns, newCloneSet(ns, 'stuck', 3, { spec: { ...inPlace, progressDeadlineSeconds: 10 } }));
    await eventually(
      'web and stuck ready',
      async () => ((await readyPods(client, ns, 'web', 4)) !== undefined && (await readyPods(client, ns, 'stuck', 3)) !== undefined ? true : undefined),
      { timeoutMs: 120_000 },
    );
    // an in-place update of web (the image): timed per pod and as a whole
    const web = await client.get<CloneSet>(CLONESETS, ns, 'web');
    const containers = web.spec.template.spec.containers.map((c) => ({ ...c, image: 'nginx:mainline' }));
    await client.patch(CLONESETS, ns, 'web', { spec: { template: { spec: { containers } } } }, 'merge');
    // stuck: a new template whose pods never pass a readiness gate nobody sets (recreated: a new readiness gate cannot
    // be applied in place). The first new pod stays unavailable, spends the maxUnavailable budget of 1, and the
    // other two wait; the 10 s progress deadline passes.
    const stuck = await client.get<CloneSet>(CLONESETS, ns, 'stuck');
    await client.patch(
      CLONESETS,
      ns,
      'stuck',
      {
        spec: {
          template: {
            spec: {
              containers: stuck.spec.template.spec.containers.map((c) => ({ ...c, image: 'nginx:mainline' })),
              readinessGates: [{ conditionType: 'example.com/never' }],
            },
          },
        },
      },
      'merge',
    );
    await eventually(
      'web rolled out',
      async () => {
        const cs = await client.get<CloneSet>(CLONESETS, ns, 'web');
        return cs.status?.updatedReadyReplicas === 4 && cs.status.updateRevision === cs.status.currentRevision ? true : undefined;
      },
      { timeoutMs: 180_000 },
    );
    await eventually(
      'stuck past its progress deadline',
      async () => {
        const cs = await client.get<CloneSet>(CLONESETS, ns, 'stuck');
        return cs.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded') === true ? true : undefined;
      },
      { timeoutMs: 90_000 },
    );
    // webhook answers that are not 200: malformed conversion reviews (some reach this controller's process)
    for (let i = 0; i < 20; i++) await httpsRequest(`https://127.0.0.1:${webhookPort}/convert`, { method: 'POST', body: 'not a review' });
    const body = await eventually(
      'stuck blocked by the maxUnavailable budget, a readiness gate and its deadline',
      async () => {
        const r = await httpsRequest(metricsUrl, { token });
        writeFileSync(
          path.join(dir, 'metrics-stuck.txt'),
          `${r.body
            .split('\n')
            .filter((l) => l.includes('cloneset="stuck"'))
            .join('\n')}\n`,
        );
        return ['maxUnavailable', 'readinessGate', 'progressDeadline'].every((reason) =>
          r.body.includes(`cloneset_rollout_blocked{namespace="${ns}",cloneset="stuck",reason="${reason}"} 1`),
        )
          ? r.body
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const stuckLines = body.split('\n').filter((l) => l.includes('cloneset="stuck"'));
    writeFileSync(path.join(dir, 'metrics-stuck.txt'), `${stuckLines.join('\n')}\n`);
    console.log(`/metrics for CloneSet ${ns}/stuck mid-rollout:\n${stuckLines.join('\n')}`);
    for (const reason of ['maxUnavailable', 'readinessGate', 'progressDeadline'])
      assert.match(body, new RegExp(`^cloneset_rollout_blocked\\{namespace="${ns}",cloneset="stuck",reason="${reason}"\\} 1$`, 'm'));
    assert.doesNotMatch(body, /cloneset_rollout_blocked\{[^}]*cloneset="web"/, 'web is rolled out: nothing blocks it');
    assert.match(body, new RegExp(`^cloneset_rollout_duration_seconds_count\\{namespace="${ns}",cloneset="web"\\} [1-9]`, 'm'));
    assert.match(body, new RegExp(`^cloneset_inplace_update_duration_seconds_count\\{namespace="${ns}",cloneset="web"\\} [1-9]`, 'm'));
    // The text log: a line per API write, and one warning per blocked reason once it has held for 5 s
    const log = (): string => readFileSync(controller?.logFile ?? '', 'utf8');
    await eventually('the blocked-rollout warning', async () => (/ WARN {2}rollout blocked: maxUnavailable budget/.test(log()) ? true : undefined), { timeoutMs: 60_000 });
    const lines = log().split('\n');
    assert.equal(lines.filter((l) => l.includes('rollout blocked: maxUnavailable') && l.includes(`cloneset=${ns}/stuck`)).length, 1, 'warned once');
    assert.ok(
      lines.some((l) => / INFO {2}API write {2}cloneset=\S+\/web object=pods\/web-\w+ action=patch reason="update: in-place update to web-\w+"/.test(l)),
      "a line per write, with the planner's reason",
    );
  });

  it('every dashboard panel query returns series', async () => {
    // Prometheus has scraped the state above (2 s interval) and has two samples of each counter for rate()
    await eventually(
      'the blocked rollout in Prometheus',
      async () => ((await query('cloneset_rollout_blocked{cloneset="stuck",reason="maxUnavailable"}')).length > 0 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    await new Promise((r) => setTimeout(r, 6_000));
    const d = dashboard() as { panels: Panel[] };
    const empty: string[] = [];
    for (const panel of d.panels.filter((p) => p.type !== 'row')) {
      for (const t of panel.targets ?? []) {
        const promql = asGrafanaSends(t.expr);
        const n = (await query(promql)).length;
        report.push(`panel "${panel.title}": ${promql} → ${n} series`);
        if (n === 0) empty.push(`${panel.title}: ${promql}`);
      }
    }
    console.log(report.filter((l) => l.startsWith('panel')).join('\n'));
    assert.deepEqual(empty, [], 'panels without data');
  });

  it('every series an alert expression reads exists; each alert expression evaluates', async () => {
    const rules = parse(readFileSync(path.join(ROOT, 'config/prometheus/alerts.yaml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const missing: string[] = [];
    const lines: string[] = [];
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      const now = (await query(rule.expr)).length;
      lines.push(`alert ${rule.alert}: ${rule.expr} → ${now} series (${now > 0 ? 'firing or pending' : 'quiet'})`);
      for (const selector of vectorSelectors(rule.expr)) {
        const n = (await query(selector)).length;
        lines.push(`  reads ${selector} → ${n} series`);
        if (n === 0) missing.push(`${rule.alert}: ${selector}`);
      }
    }
    report.push(...lines);
    console.log(lines.join('\n'));
    assert.deepEqual(missing, [], 'alert expressions reading series that do not exist');
    const firing = (await (await fetch(`${prometheusUrl}/api/v1/alerts`)).json()) as { data: { alerts: { labels: { alertname: string; cloneset?: string }; state: string }[] } };
    console.log(
      `alerts now: ${firing.data.alerts.map((a) => `${a.labels.alertname}${a.labels.cloneset !== undefined ? `(${a.labels.cloneset})` : ''} ${a.state}`).join(', ') || 'none'}`,
    );
    assert.ok(
      firing.data.alerts.some((a) => a.labels.alertname === 'CloneSetRolloutStuck' && a.labels.cloneset === 'stuck'),
      'the stuck rollout is pending or firing',
    );
  });
});
