// cloneset-controller: the composition root. Parses flags, connects, runs the CloneSet controller (leadership.ts)
// until SIGINT/SIGTERM. Exits non-zero with a message that says what to do for bad flags or a bad kubeconfig,
// and with status 1 at once when it loses its leader lease.
import { parseConfig, UsageError, USAGE } from './config.ts';
import { KubeClient } from './kube/client.ts';
import { KubeConfigError, loadKubeConfig } from './kube/kubeconfig.ts';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isReady, runController, type ProcessState } from './leadership.ts';
import { systemClock } from './runtime/clock.ts';
import { listen, metricsHandler, metricsRegistry, probeHandler, restClientMetrics, startServer } from './server.ts';
import type { RequestListener, Server } from 'node:http';
import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import { coalescedWrite, createLogger, defaultLogFormat } from './logging.ts';
import { controllerRuntimeMetrics } from './controller-runtime-metrics.ts';
import { cloneSetMetrics } from './cloneset-metrics.ts';
import { RolloutObserver } from './cloneset/rollout-observer.ts';
import { warnOnRepeatedAnswers } from './api-warnings.ts';
import { controlHeapGrowth, growthSetByUser, heapGrowthPolicy, nodeHeapGrowthDeps } from './runtime/heap-growth.ts';
import type { RunningWebhook } from './webhook/run.ts';

async function main(): Promise<number> {
  let config;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
  if (config === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const stderr = coalescedWrite((chunk) => void process.stderr.write(chunk));
  process.once('exit', stderr.flush);
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat ?? defaultLogFormat(process.stderr.isTTY),
    component: 'cloneset-controller',
    write: stderr.write,
  });
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(config.kubeconfig);
  } catch (e) {
    if (e instanceof KubeConfigError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  // One identity per process: the Lease holder and the user agent, so the audit log tells which replica wrote.
  const identity = `${hostname()}_${randomUUID()}`;
  const state: ProcessState = { manager: undefined, elector: undefined };
  let webhook: RunningWebhook | undefined;
  let metricsCertNotAfterMs: number | undefined;
  const sources = {
    podEvents: () => state.manager?.podEvents(),
    // Not tied to leadership: a standby that reaches the API server is ready (leadership.ts isReady), once the
    // webhook it serves (every replica behind the webhook Service) has its certificates and objects in place.
    ready: () => isReady(state) && (webhook?.ready() ?? true),
    webhook: () => webhook?.server.stats(),
    metricsCertificateNotAfterMs: () => metricsCertNotAfterMs,
    ...(config.leaderElect ? { leader: { name: config.leaderElectionId, isLeader: () => state.elector?.isLeader() ?? false } } : {}),
  };
  const registry = metricsRegistry(sources);
  const controllerMetrics = controllerRuntimeMetrics(registry, 'cloneset-controller', config.workers, () => state.manager?.controller.stats());
  let rollouts: RolloutObserver | undefined;
  const rolloutSink = cloneSetMetrics(registry, () =>
    state.manager === undefined || rollouts === undefined ? undefined : { cloneSets: state.manager.stores.cloneSets, pods: state.manager.stores.pods, rollouts },
  );
  rollouts = new RolloutObserver({
    clock: systemClock,
    logger,
    sink: rolloutSink,
    maxCloneSets: config.metricsMaxCloneSets,
    warnBlockedAfterMs: config.rolloutBlockedWarningAfterMs,
  });
  const clientOptions = {
    userAgent: `cloneset-controller/${identity}`,
    metrics: warnOnRepeatedAnswers(restClientMetrics(registry), logger, () => systemClock.now()),
    policy: { requestTimeoutMs: config.requestTimeoutMs },
    watchIdleTimeoutMs: config.watchIdleTimeoutMs,
  };
  const clients = {
    client: await KubeClient.fromKubeConfig(kubeConfig, { ...clientOptions, qps: config.qps, burst: config.burst }),
    eventsClient: await KubeClient.fromKubeConfig(kubeConfig, { ...clientOptions, qps: config.qps, burst: config.burst }),
    // client-go's default limits: a renewal every retry period needs far less. Its own retry budget, where every
    // request earns a whole retry: the shared default (0.1 per request) ran dry over a chaos run's 429 storms, and
    // the leader then lost its lease to a throttle it would have ridden out (its requests are too few to storm).
    leaseClient: await KubeClient.fromKubeConfig(kubeConfig, { ...clientOptions, qps: 5, burst: 10, policy: { ...clientOptions.policy, budgetCapacity: 20, budgetRatio: 1 } }),
    // The webhook's own writes (certificate Secret, caBundles) and podsToDelete reads: never fenced by leadership,
    // never queued behind pod creates.
    webhookClient: await KubeClient.fromKubeConfig(kubeConfig, { ...clientOptions, qps: 5, burst: 10 }),
  };
  const abort = new AbortController();
  const stop = (sig: string): void => {
    logger.info({ signal: sig }, 'shutting down');
    abort.abort();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  // The runtime's timers are unref'd (they must never hold a finished process open), so a standby that only waits
  // for the Lease with the metrics and probe servers off, or a webhook retrying its first certificate sync, would
  // otherwise exit at once with status 0. Held until the work below is done.
  const keepAlive = setInterval(() => undefined, 60_000);
  if (config.webhook.port !== 0) {
    // Loaded only when the webhook runs: its HTTPS server, admission handlers and certificate code are several MiB
    // of resident memory that a controller started with --webhook-port=0 never needs.
    const [{ startWebhook }, { cloneSetAdmissionHandlers }] = await Promise.all([import('./webhook/run.ts'), import('./webhook/handlers.ts')]);
    webhook = startWebhook(config.webhook, {
      client: clients.webhookClient,
      handlers: cloneSetAdmissionHandlers(config.gates),
      gates: config.gates,
      clock: systemClock,
      logger,
      signal: abort.signal,
    });
  }
  if (webhook !== undefined && config.mode === 'webhook') {
    // webhook mode: admission and conversion only; the HTTPS server answers /healthz and /readyz itself
    logger.info(
      { server: kubeConfig.getCurrentCluster()?.server, port: config.webhook.port, host: config.webhook.host ?? '(Service mode)', identity },
      'starting cloneset-controller webhook',
    );
    await webhook.done;
    clearInterval(keepAlive);
    for (const c of Object.values(clients)) c.close();
    return 0;
  }
  logger.info({ server: kubeConfig.getCurrentCluster()?.server, namespace: config.namespace ?? '(all)', identity }, 'starting cloneset-controller');
  // The controller's heap grows with its cache; the webhook's stays small, so only the controller needs this.
  const stopHeapGrowth = growthSetByUser(process.execArgv, process.env.NODE_OPTIONS)
    ? undefined
    : controlHeapGrowth(heapGrowthPolicy(config.heapGrowthMib), nodeHeapGrowthDeps, (percent) =>
        logger.debug({ heapGrowingPercent: percent }, 'heap growth between full collections'),
      );
  const servers = [
    config.metricsSecure
      ? await startSecureMetrics(config.metricsBindAddress, config.metricsCertDir, metricsHandler(registry), clients.webhookClient, logger, (ms) => (metricsCertNotAfterMs = ms))
      : startServer(config.metricsBindAddress, metricsHandler(registry), logger, 'metrics'),
    startServer(config.healthProbeBindAddress, probeHandler(sources), logger, 'health-probe'),
  ];
  const code = await runController({
    clients,
    config,
    clock: systemClock,
    logger,
    identity,
    state,
    signal: abort.signal,
    exit: (c) => process.exit(c),
    observability: { controllerMetrics, rollouts },
  });
  clearInterval(keepAlive);
  stopHeapGrowth?.();
  for (const s of servers) s?.close();
  await webhook?.done;
  for (const c of Object.values(clients)) c.close();
  return code;
}

/**
 * --metrics-secure: HTTPS, and only for callers whose token may `get` /metrics (metrics-auth.ts). Loaded only then:
 * the certificate code is resident memory a plain-HTTP controller never needs. The reviews go through the webhook's
 * client, which leadership never fences: a standby's metrics stay readable.
 */
async function startSecureMetrics(
  address: string,
  certDir: string | undefined,
  handler: RequestListener,
  client: KubeClient,
  logger: Logger,
  loaded: (notAfterMs: number) => void,
): Promise<Server | undefined> {
  if (address === '0' || address === '') return undefined;
  const { MetricsAuthorizer, apiReviewPort, authorizedHandler, createSecureServer, metricsCertificate } = await import('./metrics-auth.ts');
  const pair = await metricsCertificate(certDir, Date.now());
  loaded(Date.parse(new X509Certificate(pair.cert).validTo));
  const server = createSecureServer(pair, authorizedHandler(handler, new MetricsAuthorizer(apiReviewPort(client), () => Date.now()), logger));
  return listen(server, address, logger, 'metrics (HTTPS, TokenReview + SubjectAccessReview)');
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
