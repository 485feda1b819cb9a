// ControllerConfig: command-line flags parsed ONCE into a frozen object that is passed explicitly.
// Flag names follow Kubernetes and Kruise conventions (--kubeconfig, -n, --feature-gates, --cloneset-workers).
import { parseArgs } from 'node:util';
import { FEATURE_GATE_DEFAULTS, type FeatureGateName, type FeatureGates } from './api/well-known.ts';
import type { PodEventBatch } from './cloneset/pod-event-batch.ts';
import type { SurgeRule } from './cloneset/plan/replica-diff.ts';
import { LOG_LEVELS, type LogFormat } from './logging.ts';
import { DEFAULT_HEAP_GROWTH_MIB } from './runtime/heap-growth.ts';

export interface ControllerConfig {
  readonly kubeconfig?: string;
  /** Watch and manage CloneSets of this namespace only; undefined = all namespaces. */
  readonly namespace?: string;
  readonly workers: number;
  readonly qps: number;
  readonly burst: number;
  readonly gates: FeatureGates;
  readonly excludePreparingDelete: boolean;
  /** --cloneset-surge-rule: how rollouts size their surge (replica-diff.ts SurgeRule). */
  readonly surgeRule: SurgeRule;
  readonly expectationTimeoutMs: number;
  /** --sync-period: every CloneSet is enqueued this often (controller-runtime's SyncPeriod, Kruise's flag); 0 = never. */
  readonly syncPeriodMs: number;
  readonly rateLimiter: { readonly baseDelayMs: number; readonly maxDelayMs: number; readonly qps: number; readonly burst: number };
  /** The pod events' batch period (cloneset/pod-event-batch.ts); never parsed from flags: set by the simulation only. */
  readonly podEventBatch?: PodEventBatch;
  readonly metricsBindAddress: string;
  readonly healthProbeBindAddress: string;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Deadline of each API request attempt; 0 = none. */
  readonly requestTimeoutMs: number;
  /** A watch without a byte for this long is reconnected; 0 = never. */
  readonly watchIdleTimeoutMs: number;
  readonly logLevel: string;
  /** undefined: text when stderr is a terminal, else json (logging.ts defaultLogFormat). */
  readonly logFormat?: LogFormat;
  /** Serve /metrics over HTTPS, for callers with a token allowed to `get` the non-resource URL /metrics. */
  readonly metricsSecure: boolean;
  /** tls.crt/tls.key for the secure metrics server; undefined = a self-signed certificate made at start-up. */
  readonly metricsCertDir?: string;
  /** At most this many CloneSets get per-CloneSet series (cloneset_*). */
  readonly metricsMaxCloneSets: number;
  /** A rollout blocked this long (not by a pause or a partition) is logged as a warning. */
  readonly rolloutBlockedWarningAfterMs: number;
  /** --heap-growth-mib: the old generation's garbage between full collections (runtime/heap-growth.ts); 0 = V8's own. */
  readonly heapGrowthMib: number;
  /** `cloneset-controller webhook`: the admission/conversion webhook server only, no controller. */
  readonly mode: 'controller' | 'webhook';
  readonly webhook: WebhookConfig;
}

/** The --webhook-* flags (docs/admission.md). */
export interface WebhookConfig {
  /** 0 = no webhook server (controller mode only) */
  readonly port: number;
  /** URL mode: the API server calls https://<host>:<port>/…; undefined = Service mode */
  readonly host?: string;
  readonly namespace: string;
  /** Prefix of the Service, certificate Secret and webhook configuration names (one per Helm release). */
  readonly namePrefix: string;
  readonly certDir?: string;
  readonly certValidityMs: number;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: cloneset-controller [flags]
       cloneset-controller webhook [flags]

Runs the CloneSet controller (apps.kruise.io/v1alpha1) against the cluster of the current kubeconfig, with its
admission/conversion webhook server (unless --webhook-port=0). \`webhook\` runs the webhook server only.

Flags:
      --kubeconfig string                  path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  -n, --namespace string                   only manage CloneSets in this namespace (default: all namespaces)
      --cloneset-workers int               concurrent reconciles (default 3)
      --kube-api-qps float                 client-side QPS limit towards the API server, per resource kind as in
                                           controller-runtime: pods, pod status, CloneSets… each have their own
                                           bucket; informer lists/watches and events have separate ones; 0 = no
                                           client-side limit (default 30)
      --kube-api-burst int                 client-side burst, per resource kind (default 50)
      --feature-gates string               comma-separated Name=true|false, Kruise gate names (e.g. CloneSetShortHash=true)
      --cloneset-scaling-exclude-preparing-delete
                                           exclude PreparingDelete pods from the replica count, for all CloneSets
      --cloneset-surge-rule string         sustained: keep the full maxSurge until fewer old pods than maxSurge remain;
                                           kruise: Kruise's arithmetic, whose surge decays near the end of a rollout
                                           (kruise#1442, kruise#2491) (default "sustained")
      --expectation-timeout duration       how long to wait for the cache to show our own writes (default 5m)
      --sync-period duration               reconcile every CloneSet at least this often, events or not; 0 = never
                                           (default 10h)
      --rate-limiter-base-delay duration   per-key retry backoff base (default 5ms)
      --rate-limiter-max-delay duration    per-key retry backoff cap (default 1000s)
      --rate-limiter-qps int               work queue token bucket rate (default 10)
      --rate-limiter-bucket-size int       work queue token bucket size (default 100)
      --metrics-bind-address string        Prometheus metrics address, "0" disables (default ":8080")
      --metrics-secure                     serve /metrics over HTTPS; callers need a bearer token that may \`get\`
                                           the non-resource URL /metrics (TokenReview + SubjectAccessReview)
      --metrics-cert-dir string            tls.crt/tls.key for --metrics-secure (default: a self-signed certificate)
      --metrics-max-clonesets int          at most this many CloneSets get per-CloneSet series (default 2000)
      --rollout-blocked-warning-after duration
                                           log a warning when a rollout is blocked this long, other than by a
                                           pause or a partition (default 10m)
      --health-probe-bind-address string   /healthz and /readyz address, "0" disables (default ":8000")
      --leader-elect                       use a coordination.k8s.io Lease so only one replica is active
      --leader-election-namespace string   namespace of the Lease (default "kube-system")
      --leader-election-id string          name of the Lease (default "cloneset-controller")
      --leader-election-lease-duration duration
                                           how long a standby waits after the last renewal it saw (default 15s)
      --leader-election-renew-deadline duration
                                           the leader stops (and exits) when it cannot renew within this (default 10s)
      --leader-election-retry-period duration
                                           interval between lease renewals / acquisition attempts (default 2s)
      --kube-api-request-timeout duration  deadline of each API request attempt, "0s" for none (default 30s)
      --watch-idle-timeout duration        reconnect a watch that carried no event and no bookmark for this long,
                                           "0s" never (default 90s)
      --webhook-port int                   HTTPS port of the webhook server; 0 = none (default 9443)
      --webhook-host string                URL mode: the API server calls https://<host>:<port>/… (local control
                                           planes); without it, Service mode (cloneset-controller-webhook-service)
      --webhook-namespace string           namespace of the certificate Secret and the Service (default "cloneset-system")
      --webhook-name-prefix string         names <prefix>-webhook-service, <prefix>-webhook-certs and
                                           <prefix>-{mutating,validating}-webhook-configuration (default "cloneset-controller")
      --webhook-cert-dir string            use tls.crt/tls.key (and ca.crt) from this directory (cert-manager, a mounted
                                           Secret) instead of self-managed certificates
      --webhook-cert-validity duration     lifetime of self-managed certificates; rotated at 2/3 (default 8760h)
      --heap-growth-mib int                garbage the V8 heap may gather between full collections, in MiB: the
                                           old generation grows by this over what survived, between 10 % and 50 %
                                           of it; 0 = V8's own growth (default 24; a --heap-growing-percent in
                                           NODE_OPTIONS wins)
  -v, --log-level string                   trace|debug|info|warn|error, or a klog verbosity: 0-1 info,
                                           2-4 debug, 5 and more trace (default "info")
      --log-format string                  json|text (default: $CLONESET_CONTROLLER_LOG_FORMAT, json in the image;
                                           else text when stderr is a terminal, json otherwise)
  -h, --help                               show this help
`;

/** Go-style durations: 300ms, 10s, 5m, 1h30m. */
function parseDuration(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * (units[m[2] ?? ''] ?? 0);
    matched += m[0].length;
  }
  if (matched !== text.length || text.length === 0) throw new UsageError(`invalid duration "${text}" (use e.g. 500ms, 10s, 5m)`);
  return total;
}

export function parseFeatureGates(text: string): FeatureGates {
  const gates: Record<FeatureGateName, boolean> = { ...FEATURE_GATE_DEFAULTS };
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const [name, value] = item.split('=');
    if (name === undefined || !(name in FEATURE_GATE_DEFAULTS)) {
      throw new UsageError(`unknown feature gate "${name ?? item}"; known gates: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')}`);
    }
    if (value !== 'true' && value !== 'false') throw new UsageError(`feature gate ${name} needs =true or =false`);
    gates[name as FeatureGateName] = value === 'true';
  }
  return Object.freeze(gates);
}

export function parseSurgeRule(text: string): SurgeRule {
  if (text === 'sustained' || text === 'kruise') return text;
  throw new UsageError(`--cloneset-surge-rule must be "sustained" or "kruise", got "${text}"`);
}

function int(name: string, v: string | undefined, def: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a non-negative number, got "${v}"`);
  return n;
}

/** client-go's rule (NewLeaderElector): lease duration > renew deadline > 1.2 × retry period, all > 0. */
function leaseTimings(
  lease: string | undefined,
  renew: string | undefined,
  retry: string | undefined,
): { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } {
  const leaseDurationMs = parseDuration(lease ?? '15s');
  const renewDeadlineMs = parseDuration(renew ?? '10s');
  const retryPeriodMs = parseDuration(retry ?? '2s');
  if (!(retryPeriodMs > 0 && renewDeadlineMs > retryPeriodMs * 1.2 && leaseDurationMs > renewDeadlineMs)) {
    throw new UsageError(
      `leader election timings must satisfy --leader-election-lease-duration (${lease ?? '15s'}) > --leader-election-renew-deadline ` +
        `(${renew ?? '10s'}) > 1.2 × --leader-election-retry-period (${retry ?? '2s'}) > 0`,
    );
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

function parseWebhookConfig(v: Record<string, string | boolean | undefined>, mode: 'controller' | 'webhook'): WebhookConfig {
  const str = (k: string): string | undefined => (typeof v[k] === 'string' && v[k] !== '' ? v[k] : undefined);
  const port = int('webhook-port', str('webhook-port'), 9443);
  if (!Number.isInteger(port) || port > 65535) throw new UsageError(`--webhook-port must be a port number (0 = no webhook server), got "${str('webhook-port') ?? ''}"`);
  if (mode === 'webhook' && port === 0) throw new UsageError('cloneset-controller webhook needs a --webhook-port other than 0');
  const certValidityMs = parseDuration(str('webhook-cert-validity') ?? '8760h');
  if (certValidityMs < 30_000) throw new UsageError('--webhook-cert-validity must be at least 30s');
  const host = str('webhook-host');
  const certDir = str('webhook-cert-dir');
  const namePrefix = str('webhook-name-prefix') ?? 'cloneset-controller';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namePrefix) || namePrefix.length > 200) {
    throw new UsageError(`--webhook-name-prefix must be a lower-case DNS label such as "cloneset-controller", got "${namePrefix}"`);
  }
  return {
    port,
    ...(host !== undefined ? { host } : {}),
    namespace: str('webhook-namespace') ?? 'cloneset-system',
    namePrefix,
    ...(certDir !== undefined ? { certDir } : {}),
    certValidityMs,
  };
}

/** A level name, or a klog-style verbosity number (`-v=4`). */
export function parseLogLevel(flag: string): string {
  // `-v=4`, as klog users type it: node's parseArgs hands a short option's value over with the '='.
  const text = flag.startsWith('=') ? flag.slice(1) : flag;
  if (/^\d+$/.test(text)) {
    const v = Number(text);
    return v <= 1 ? 'info' : v <= 4 ? 'debug' : 'trace';
  }
  if ((LOG_LEVELS as readonly string[]).includes(text)) return text;
  throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')} or a number, got "${text}"`);
}

function parseLogFormat(text: string): LogFormat {
  if (text === 'json' || text === 'text') return text;
  throw new UsageError(`--log-format must be "json" or "text", got "${text}"`);
}

export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ControllerConfig | 'help' {
  const mode = argv[0] === 'webhook' ? 'webhook' : 'controller';
  let parsed;
  try {
    parsed = parseArgs({
      args: mode === 'webhook' ? argv.slice(1) : [...argv],
      allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        'cloneset-workers': { type: 'string' },
        'kube-api-qps': { type: 'string' },
        'kube-api-burst': { type: 'string' },
        'feature-gates': { type: 'string' },
        'cloneset-scaling-exclude-preparing-delete': { type: 'boolean' },
        'cloneset-surge-rule': { type: 'string' },
        'expectation-timeout': { type: 'string' },
        'sync-period': { type: 'string' },
        'rate-limiter-base-delay': { type: 'string' },
        'rate-limiter-max-delay': { type: 'string' },
        'rate-limiter-qps': { type: 'string' },
        'rate-limiter-bucket-size': { type: 'string' },
        'metrics-bind-address': { type: 'string' },
        'health-probe-bind-address': { type: 'string' },
        'leader-elect': { type: 'boolean' },
        'leader-election-namespace': { type: 'string' },
        'leader-election-id': { type: 'string' },
        'leader-election-lease-duration': { type: 'string' },
        'leader-election-renew-deadline': { type: 'string' },
        'leader-election-retry-period': { type: 'string' },
        'kube-api-request-timeout': { type: 'string' },
        'watch-idle-timeout': { type: 'string' },
        'log-level': { type: 'string', short: 'v' },
        'log-format': { type: 'string' },
        'metrics-secure': { type: 'boolean' },
        'metrics-cert-dir': { type: 'string' },
        'metrics-max-clonesets': { type: 'string' },
        'rollout-blocked-warning-after': { type: 'string' },
        'heap-growth-mib': { type: 'string' },
        'webhook-port': { type: 'string' },
        'webhook-host': { type: 'string' },
        'webhook-namespace': { type: 'string' },
        'webhook-name-prefix': { type: 'string' },
        'webhook-cert-dir': { type: 'string' },
        'webhook-cert-validity': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const v = parsed.values;
  if (v.help === true) return 'help';
  const kubeconfig = v.kubeconfig ?? env.KUBECONFIG;
  return Object.freeze({
    ...(kubeconfig !== undefined && kubeconfig !== '' ? { kubeconfig } : {}),
    ...(v.namespace !== undefined ? { namespace: v.namespace } : {}),
    workers: Math.max(1, int('cloneset-workers', v['cloneset-workers'], 3)),
    qps: int('kube-api-qps', v['kube-api-qps'], 30),
    burst: int('kube-api-burst', v['kube-api-burst'], 50),
    gates: parseFeatureGates(v['feature-gates'] ?? ''),
    excludePreparingDelete: v['cloneset-scaling-exclude-preparing-delete'] === true,
    surgeRule: parseSurgeRule(v['cloneset-surge-rule'] ?? 'sustained'),
    expectationTimeoutMs: parseDuration(v['expectation-timeout'] ?? '5m'),
    syncPeriodMs: v['sync-period'] === '0' ? 0 : parseDuration(v['sync-period'] ?? '10h'),
    rateLimiter: {
      baseDelayMs: parseDuration(v['rate-limiter-base-delay'] ?? '5ms'),
      maxDelayMs: parseDuration(v['rate-limiter-max-delay'] ?? '1000s'),
      qps: int('rate-limiter-qps', v['rate-limiter-qps'], 10),
      burst: int('rate-limiter-bucket-size', v['rate-limiter-bucket-size'], 100),
    },
    metricsBindAddress: v['metrics-bind-address'] ?? ':8080',
    healthProbeBindAddress: v['health-probe-bind-address'] ?? ':8000',
    leaderElect: v['leader-elect'] === true,
    leaderElectionNamespace: v['leader-election-namespace'] ?? 'kube-system',
    leaderElectionId: v['leader-election-id'] ?? 'cloneset-controller',
    ...leaseTimings(v['leader-election-lease-duration'], v['leader-election-renew-deadline'], v['leader-election-retry-period']),
    requestTimeoutMs: parseDuration(v['kube-api-request-timeout'] ?? '30s'),
    watchIdleTimeoutMs: parseDuration(v['watch-idle-timeout'] ?? '90s'),
    logLevel: parseLogLevel(v['log-level'] ?? 'info'),
    // The image sets CLONESET_CONTROLLER_LOG_FORMAT=json: json even under `kubectl run -it`, whose stderr is a terminal.
    ...(v['log-format'] !== undefined
      ? { logFormat: parseLogFormat(v['log-format']) }
      : env.CLONESET_CONTROLLER_LOG_FORMAT !== undefined && env.CLONESET_CONTROLLER_LOG_FORMAT !== ''
        ? { logFormat: parseLogFormat(env.CLONESET_CONTROLLER_LOG_FORMAT) }
        : {}),
    metricsSecure: v['metrics-secure'] === true,
    ...(v['metrics-cert-dir'] !== undefined && v['metrics-cert-dir'] !== '' ? { metricsCertDir: v['metrics-cert-dir'] } : {}),
    metricsMaxCloneSets: int('metrics-max-clonesets', v['metrics-max-clonesets'], 2000),
    rolloutBlockedWarningAfterMs: parseDuration(v['rollout-blocked-warning-after'] ?? '10m'),
    heapGrowthMib: int('heap-growth-mib', v['heap-growth-mib'], DEFAULT_HEAP_GROWTH_MIB),
    mode,
    webhook: parseWebhookConfig(v, mode),
  });
}
