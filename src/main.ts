// cloneset-controller: the composition root. Parses flags, connects, runs the CloneSet controller (leadership.ts)
// until SIGINT/SIGTERM. Exits non-zero with a message that says what to do for bad flags or a bad kubeconfig,
// and with status 1 at once when it loses its leader lease.
import { pino } from 'pino';
import { parseConfig, UsageError, USAGE } from './config.ts';
import { KubeClient } from './kube/client.ts';
import { KubeConfigError, loadKubeConfig } from './kube/kubeconfig.ts';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isReady, runController, type ProcessState } from './leadership.ts';
import { systemClock } from './runtime/clock.ts';
import { metricsHandler, metricsRegistry, probeHandler, restClientMetrics, startServer } from './server.ts';
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
  const logger = pino({ level: config.logLevel, base: { component: 'cloneset-controller' } });
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
  const sources = {
    stats: () => state.manager?.controller.stats() ?? EMPTY_STATS,
    podEvents: () => state.manager?.podEvents(),
    // Not tied to leadership: a standby that reaches the API server is ready (leadership.ts isReady), once the
    // webhook it serves (every replica behind the webhook Service) has its certificates and objects in place.
    ready: () => isReady(state) && (webhook?.ready() ?? true),
    webhook: () => webhook?.server.stats(),
    ...(config.leaderElect ? { leader: { name: config.leaderElectionId, isLeader: () => state.elector?.isLeader() ?? false } } : {}),
  };
  const registry = metricsRegistry(sources);
  const clientOptions = {
    userAgent: `cloneset-controller/${identity}`,
    metrics: restClientMetrics(registry),
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
    webhook = startWebhook(config.webhook, { client: clients.webhookClient, handlers: cloneSetAdmissionHandlers(config.gates), gates: config.gates, clock: systemClock, logger, signal: abort.signal });
  }
  if (webhook !== undefined && config.mode === 'webhook') {
    // webhook mode: admission and conversion only; the HTTPS server answers /healthz and /readyz itself
    logger.info({ server: kubeConfig.getCurrentCluster()?.server, port: config.webhook.port, host: config.webhook.host ?? '(Service mode)', identity }, 'starting cloneset-controller webhook');
    await webhook.done;
    clearInterval(keepAlive);
    for (const c of Object.values(clients)) c.close();
    return 0;
  }
  logger.info({ server: kubeConfig.getCurrentCluster()?.server, namespace: config.namespace ?? '(all)', identity }, 'starting cloneset-controller');
  const servers = [
    startServer(config.metricsBindAddress, metricsHandler(registry), logger, 'metrics'),
    startServer(config.healthProbeBindAddress, probeHandler(sources), logger, 'health-probe'),
  ];
  const code = await runController({ clients, config, clock: systemClock, logger, identity, state, signal: abort.signal, exit: (c) => process.exit(c) });
  clearInterval(keepAlive);
  for (const s of servers) s?.close();
  await webhook?.done;
  for (const c of Object.values(clients)) c.close();
  return code;
}

const EMPTY_STATS = {
  reconcilesTotal: 0, reconcileErrorsTotal: 0, reconcileTimeMsTotal: 0, activeWorkers: 0, queueDepth: 0, queueAddsTotal: 0, queueRetriesTotal: 0,
  reconcilesByOutcome: { success: 0, requeue_after: 0, error: 0, terminal_error: 0 },
};

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
