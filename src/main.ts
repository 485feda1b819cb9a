// cloneset-controller: the composition root. Parses flags, connects, runs the CloneSet controller until
// SIGINT/SIGTERM. Exits non-zero with a message that says what to do for bad flags or a bad kubeconfig.
import { pino } from 'pino';
import { parseConfig, UsageError, USAGE } from './config.ts';
import { KubeClient } from './kube/client.ts';
import { KubeConfigError, loadKubeConfig } from './kube/kubeconfig.ts';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { startCloneSetManager, type CloneSetManager } from './cloneset/manager.ts';
import { apiLeasePort } from './runtime/lease-port.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { systemClock } from './runtime/clock.ts';
import { metricsHandler, metricsRegistry, probeHandler, startServer } from './server.ts';

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
  // The identity is also the user agent's suffix, so the API server's audit log tells which replica wrote.
  const identity = `${hostname()}_${randomUUID()}`;
  const userAgent = `cloneset-controller/${identity}`;
  const client = await KubeClient.fromKubeConfig(kubeConfig, { qps: config.qps, burst: config.burst, userAgent });
  const eventsClient = await KubeClient.fromKubeConfig(kubeConfig, { qps: config.qps, burst: config.burst, userAgent });
  const abort = new AbortController();
  const stop = (sig: string): void => {
    logger.info({ signal: sig }, 'shutting down');
    abort.abort();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  logger.info({ server: kubeConfig.getCurrentCluster()?.server, namespace: config.namespace ?? '(all)' }, 'starting cloneset-controller');
  let manager: CloneSetManager | undefined;
  const sources = {
    stats: () => manager?.controller.stats() ?? EMPTY_STATS,
    ready: () => manager?.informers.every((i) => i.hasSynced()) ?? false,
    apiRequests: () => sumCounts(client.requestCounts(), eventsClient.requestCounts()),
  };
  const servers = [
    startServer(config.metricsBindAddress, metricsHandler(metricsRegistry(sources)), logger, 'metrics'),
    startServer(config.healthProbeBindAddress, probeHandler(sources), logger, 'health-probe'),
  ];
  let code = 0;
  if (!config.leaderElect) {
    manager = startCloneSetManager(client, eventsClient, config, systemClock, logger, abort.signal);
    await manager.done;
  } else {
    const elector = new LeaderElector({
      port: apiLeasePort(client),
      namespace: config.leaderElectionNamespace,
      name: config.leaderElectionId,
      identity,
      clock: systemClock,
      logger,
    });
    let done: Promise<void> | undefined;
    await elector.run(abort.signal, {
      onStartedLeading: (leading) => {
        logger.info('became leader; starting the controller');
        manager = startCloneSetManager(client, eventsClient, config, systemClock, logger, leading);
        done = manager.done;
      },
      onStoppedLeading: () => {
        // Like controller-runtime: a replica that lost its lease exits so that it restarts clean.
        if (!abort.signal.aborted) {
          logger.error('lost the leader lease; exiting');
          code = 1;
          abort.abort();
        }
      },
    });
    await done;
  }
  for (const s of servers) s?.close();
  client.close();
  eventsClient.close();
  return code;
}

function sumCounts(...counts: readonly Readonly<Partial<Record<string, number>>>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const c of counts) for (const [verb, n] of Object.entries(c)) sum[verb] = (sum[verb] ?? 0) + (n ?? 0);
  return sum;
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
