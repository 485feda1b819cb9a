// cloneset-controller: the composition root. Parses flags, connects, runs the CloneSet controller until
// SIGINT/SIGTERM. Exits non-zero with a message that says what to do for bad flags or a bad kubeconfig.
import { pino } from 'pino';
import { parseConfig, UsageError, USAGE } from './config.ts';
import { KubeClient } from './kube/client.ts';
import { KubeConfigError, loadKubeConfig } from './kube/kubeconfig.ts';
import { startCloneSetManager } from './cloneset/manager.ts';
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
  const client = await KubeClient.fromKubeConfig(kubeConfig, { qps: config.qps, burst: config.burst });
  const abort = new AbortController();
  const stop = (sig: string): void => {
    logger.info({ signal: sig }, 'shutting down');
    abort.abort();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  logger.info({ server: kubeConfig.getCurrentCluster()?.server, namespace: config.namespace ?? '(all)' }, 'starting cloneset-controller');
  const manager = startCloneSetManager(client, config, systemClock, logger, abort.signal);
  const sources = {
    stats: () => manager.controller.stats(),
    ready: () => manager.informers.every((i) => i.hasSynced()),
    apiRequests: () => client.requestCount,
  };
  const servers = [
    startServer(config.metricsBindAddress, metricsHandler(metricsRegistry(sources)), logger, 'metrics'),
    startServer(config.healthProbeBindAddress, probeHandler(sources), logger, 'health-probe'),
  ];
  await manager.done;
  for (const s of servers) s?.close();
  client.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
