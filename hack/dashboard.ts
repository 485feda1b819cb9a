// The Grafana dashboard of cloneset-controller, as code: `npm run gen:chart` (hack/gen-chart.ts) writes it to
// charts/cloneset-controller/dashboards/cloneset-controller.json, which the chart ships in a ConfigMap for Grafana's
// dashboard sidecar. test/integration/prometheus.test.ts runs every query against a Prometheus scraping a controller.
//
// Variables: $datasource, $job (the scrape job(s) of the controller: the generic metrics — rest_client_*, process_*,
// leader election — exist in other components too), $namespace and $cloneset (the per-CloneSet panels).

export interface Target {
  readonly expr: string;
  readonly legendFormat: string;
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly type?: 'timeseries' | 'table' | 'stat';
  readonly unit?: string;
  readonly targets: readonly Target[];
  readonly width?: number;
}

const CS = 'namespace=~"$namespace", cloneset=~"$cloneset"';
const CTRL = 'controller="cloneset-controller"';
const QUEUE = 'name="cloneset-controller"';
const JOB = 'job=~"$job"';
const q = (expr: string, legendFormat = ''): Target => ({ expr, legendFormat });

const ROWS: readonly { readonly title: string; readonly panels: readonly PanelSpec[] }[] = [
  {
    title: 'Rollouts',
    panels: [
      {
        title: 'Blocked rollouts',
        type: 'table',
        width: 12,
        description: 'CloneSets whose rollout the planner holds back, and why (cloneset_rollout_blocked). `kubectl cloneset plan NAME -n NAMESPACE` explains the reason in full.',
        targets: [q(`max by (namespace, cloneset, reason) (cloneset_rollout_blocked_seconds{${CS}})`, '{{namespace}}/{{cloneset}} {{reason}}')],
        unit: 's',
      },
      {
        title: 'Rollout progress (updated and ready / desired)',
        width: 12,
        unit: 'percentunit',
        description: 'Share of the desired pods that run the update revision and are ready.',
        targets: [
          q(
            `sum by (namespace, cloneset) (cloneset_status_replicas{${CS}, state="updated_ready"}) / sum by (namespace, cloneset) (cloneset_status_replicas{${CS}, state="desired"})`,
            '{{namespace}}/{{cloneset}}',
          ),
        ],
      },
      {
        title: 'Replicas by state',
        width: 12,
        description: 'cloneset_status_replicas: desired (spec), current, updated, ready, available, updated_ready (status).',
        targets: [q(`sum by (namespace, cloneset, state) (cloneset_status_replicas{${CS}})`, '{{namespace}}/{{cloneset}} {{state}}')],
      },
      {
        title: 'Pods by lifecycle state',
        width: 12,
        description: 'Active pods by lifecycle.apps.kruise.io/state: pods stuck in PreparingDelete or PreparingUpdate wait for a lifecycle hook.',
        targets: [q(`sum by (lifecycle_state) (cloneset_pods{${CS}})`, '{{lifecycle_state}}')],
      },
      {
        title: 'Conditions',
        type: 'table',
        width: 12,
        description: 'Status conditions that hold (Progressing reason ProgressDeadlineExceeded: the rollout is stuck).',
        targets: [
          q(`max by (namespace, cloneset, condition, status, reason) (cloneset_status_condition{${CS}})`, '{{namespace}}/{{cloneset}} {{condition}}={{status}} {{reason}}'),
        ],
      },
      {
        title: 'Spec changes not yet acted on',
        width: 12,
        description: 'metadata.generation − status.observedGeneration: above 0 while the controller has not seen a change.',
        targets: [q(`max by (namespace, cloneset) (cloneset_status_observed_generation_lag{${CS}})`, '{{namespace}}/{{cloneset}}')],
      },
      {
        title: 'Rollout duration (p50, p90)',
        width: 12,
        unit: 's',
        description: 'From a new update revision to all pods updated and available.',
        targets: [
          q(`histogram_quantile(0.5, sum by (le) (rate(cloneset_rollout_duration_seconds_bucket{${CS}}[$__rate_interval])))`, 'p50'),
          q(`histogram_quantile(0.9, sum by (le) (rate(cloneset_rollout_duration_seconds_bucket{${CS}}[$__rate_interval])))`, 'p90'),
        ],
      },
      {
        title: 'In-place update duration (p50, p90)',
        width: 12,
        unit: 's',
        description: "From the start of a pod's in-place update to the pod ready again at the new revision.",
        targets: [
          q(`histogram_quantile(0.5, sum by (le) (rate(cloneset_inplace_update_duration_seconds_bucket{${CS}}[$__rate_interval])))`, 'p50'),
          q(`histogram_quantile(0.9, sum by (le) (rate(cloneset_inplace_update_duration_seconds_bucket{${CS}}[$__rate_interval])))`, 'p90'),
        ],
      },
    ],
  },
  {
    title: 'Controller',
    panels: [
      {
        title: 'Reconciles by result',
        width: 8,
        unit: 'ops',
        description: 'controller_runtime_reconcile_total by result: success, error, requeue, requeue_after.',
        targets: [q(`sum by (result) (rate(controller_runtime_reconcile_total{${CTRL}}[$__rate_interval]))`, '{{result}}')],
      },
      {
        title: 'Reconcile errors',
        width: 8,
        unit: 'ops',
        description: 'Failed reconciles (retried with backoff), terminal ones (not retried) and panics (programming errors).',
        targets: [
          q(`sum(rate(controller_runtime_reconcile_errors_total{${CTRL}}[$__rate_interval]))`, 'errors'),
          q(`sum(rate(controller_runtime_terminal_reconcile_errors_total{${CTRL}}[$__rate_interval]))`, 'terminal'),
          q(`sum(rate(controller_runtime_reconcile_panics_total{${CTRL}}[$__rate_interval]))`, 'panics'),
        ],
      },
      {
        title: 'Reconcile time (p50, p99)',
        width: 8,
        unit: 's',
        description: 'controller_runtime_reconcile_time_seconds.',
        targets: [
          q(`histogram_quantile(0.5, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{${CTRL}}[$__rate_interval])))`, 'p50'),
          q(`histogram_quantile(0.99, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{${CTRL}}[$__rate_interval])))`, 'p99'),
        ],
      },
      {
        title: 'Workers',
        width: 8,
        description: 'Busy workers of --cloneset-workers.',
        targets: [q(`sum(controller_runtime_active_workers{${CTRL}})`, 'active'), q(`max(controller_runtime_max_concurrent_reconciles{${CTRL}})`, 'max')],
      },
      { title: 'Work queue depth', width: 8, description: 'CloneSets waiting for a worker.', targets: [q(`sum(workqueue_depth{${QUEUE}})`, 'depth')] },
      {
        title: 'Work queue adds and retries',
        width: 8,
        unit: 'ops',
        description: 'Keys added (a change woke a CloneSet) and rate-limited retries.',
        targets: [q(`sum(rate(workqueue_adds_total{${QUEUE}}[$__rate_interval]))`, 'adds'), q(`sum(rate(workqueue_retries_total{${QUEUE}}[$__rate_interval]))`, 'retries')],
      },
      {
        title: 'Time in queue (p99)',
        width: 8,
        unit: 's',
        description: 'From an add to a worker taking the key.',
        targets: [q(`histogram_quantile(0.99, sum by (le) (rate(workqueue_queue_duration_seconds_bucket{${QUEUE}}[$__rate_interval])))`, 'p99')],
      },
      {
        title: 'Work duration (p99)',
        width: 8,
        unit: 's',
        description: 'How long a worker holds a key.',
        targets: [q(`histogram_quantile(0.99, sum by (le) (rate(workqueue_work_duration_seconds_bucket{${QUEUE}}[$__rate_interval])))`, 'p99')],
      },
      {
        title: 'Unfinished work',
        width: 8,
        unit: 's',
        description: 'Work in progress not yet done; a steadily growing longest-running processor is a stuck worker.',
        targets: [q(`sum(workqueue_unfinished_work_seconds{${QUEUE}})`, 'unfinished'), q(`max(workqueue_longest_running_processor_seconds{${QUEUE}})`, 'longest running')],
      },
      {
        title: 'Pod events',
        width: 12,
        unit: 'ops',
        description: 'Pod informer events that woke a CloneSet (enqueued) or changed nothing the controller reads (ignored).',
        targets: [q(`sum by (event, result) (rate(cloneset_pod_events_total{${CTRL}}[$__rate_interval]))`, '{{event}} {{result}}')],
      },
      {
        title: 'CloneSets without per-CloneSet series',
        width: 12,
        description: 'Over --metrics-max-clonesets: raise it, or accept that these CloneSets are not shown.',
        targets: [q(`max(cloneset_metrics_clonesets_omitted{${JOB}})`, 'omitted')],
      },
    ],
  },
  {
    title: 'API server, leader, webhook, process',
    panels: [
      {
        title: 'API requests by code',
        width: 8,
        unit: 'reqps',
        description: 'rest_client_requests_total: 409 conflicts and 429 throttling that repeat are also logged as warnings.',
        targets: [q(`sum by (code, method) (rate(rest_client_requests_total{${JOB}}[$__rate_interval]))`, '{{method}} {{code}}')],
      },
      {
        title: 'API latency (p99) by verb',
        width: 8,
        unit: 's',
        description: 'rest_client_request_duration_seconds (watches excluded).',
        targets: [q(`histogram_quantile(0.99, sum by (verb, le) (rate(rest_client_request_duration_seconds_bucket{${JOB}}[$__rate_interval])))`, '{{verb}}')],
      },
      {
        title: 'Leader',
        width: 8,
        description: '1 on the replica that holds the Lease.',
        targets: [q(`max by (instance) (leader_election_master_status{${JOB}, name="cloneset-controller"})`, '{{instance}}')],
      },
      {
        title: 'Webhook requests by code',
        width: 8,
        unit: 'reqps',
        description: 'Admission and conversion requests; anything but 200 is an error (a denial is a 200).',
        targets: [q(`sum by (webhook, code) (rate(controller_runtime_webhook_requests_total{${JOB}}[$__rate_interval]))`, '{{webhook}} {{code}}')],
      },
      {
        title: 'Certificates expire in',
        width: 8,
        unit: 's',
        description: 'Serving certificates of the webhook and of the secure metrics endpoint.',
        targets: [q(`min by (certificate) (cloneset_controller_certificate_expiry_timestamp_seconds{${JOB}}) - time()`, '{{certificate}}')],
      },
      {
        title: 'CPU and memory',
        width: 8,
        description: 'Per replica.',
        targets: [
          q(`sum by (instance) (rate(process_cpu_seconds_total{${JOB}}[$__rate_interval]))`, 'CPU {{instance}}'),
          q(`max by (instance) (process_resident_memory_bytes{${JOB}}) / 2^20`, 'RSS MiB {{instance}}'),
        ],
      },
      {
        title: 'Event loop lag (p99)',
        width: 8,
        unit: 's',
        description: 'A busy event loop delays every reconcile, watch and probe.',
        targets: [q(`max by (instance) (nodejs_eventloop_lag_p99_seconds{${JOB}})`, '{{instance}}')],
      },
    ],
  },
];

function datasourceVariable(): unknown {
  return { name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Data source', current: {}, hide: 0 };
}

function queryVariable(name: string, label: string, query: string, multi: boolean): unknown {
  return {
    name,
    label,
    type: 'query',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Grafana dashboard variable, not a JavaScript template
    datasource: { type: 'prometheus', uid: '${datasource}' },
    query: { query, refId: `${name}-variable` },
    definition: query,
    refresh: 2,
    includeAll: true,
    multi,
    allValue: '.*',
    current: { selected: true, text: ['All'], value: ['$__all'] },
    sort: 1,
    hide: 0,
  };
}

export function dashboard(): unknown {
  const panels: unknown[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    let x = 0;
    for (const p of row.panels) {
      const w = p.width ?? 12;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push({
        id: id++,
        type: p.type ?? 'timeseries',
        title: p.title,
        description: p.description,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a Grafana dashboard variable, not a JavaScript template
        datasource: { type: 'prometheus', uid: '${datasource}' },
        gridPos: { h: 8, w, x, y },
        fieldConfig: { defaults: { unit: p.unit ?? 'short' }, overrides: [] },
        options: p.type === 'table' ? { showHeader: true } : { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
        targets: p.targets.map((t, i) => ({
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a Grafana dashboard variable, not a JavaScript template
          datasource: { type: 'prometheus', uid: '${datasource}' },
          expr: t.expr,
          legendFormat: t.legendFormat,
          refId: String.fromCharCode(65 + i),
          ...(p.type === 'table' ? { format: 'table', instant: true } : {}),
        })),
      });
      x += w;
    }
    y += 8;
  }
  return {
    title: 'CloneSet controller',
    uid: 'cloneset-controller',
    description: 'CloneSet rollouts (why they are blocked, how long they take), controller-runtime work queue and reconciles, API server, leader election, webhook.',
    tags: ['cloneset', 'kruise', 'controller-runtime'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-3h', to: 'now' },
    timezone: 'browser',
    templating: {
      list: [
        datasourceVariable(),
        queryVariable('job', 'Job', 'label_values(controller_runtime_reconcile_total{controller="cloneset-controller"}, job)', true),
        queryVariable('namespace', 'Namespace', 'label_values(cloneset_status_replicas, namespace)', true),
        queryVariable('cloneset', 'CloneSet', 'label_values(cloneset_status_replicas{namespace=~"$namespace"}, cloneset)', true),
      ],
    },
    annotations: { list: [] },
    panels,
  };
}
