// The operations endpoints: Prometheus metrics (controller-runtime names) and /healthz, /readyz probes.
import http from 'node:http';
import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ControllerStats } from './runtime/controller.ts';
import type { WebhookStats } from './webhook/server.ts';

export interface ServerSources {
  readonly stats: () => ControllerStats;
  readonly ready: () => boolean;
  /** API requests sent so far, by verb (get, list, watch, create, update, patch, delete). */
  readonly apiRequests: () => Readonly<Partial<Record<string, number>>>;
  /** the webhook server's counters (src/webhook/server.ts), when it runs in this process */
  readonly webhook?: () => WebhookStats | undefined;
}

function parseBindAddress(address: string): { host: string; port: number } | undefined {
  if (address === '0' || address === '') return undefined;
  const i = address.lastIndexOf(':');
  const host = i <= 0 ? '0.0.0.0' : address.slice(0, i);
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port)) throw new Error(`invalid bind address "${address}" (use host:port or :port)`);
  return { host, port };
}

export function metricsRegistry(src: ServerSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const controller = { controller: 'cloneset-controller' };
  const gauge = (name: string, help: string, read: (s: ControllerStats) => number): void => {
    new Gauge({ name, help, labelNames: ['controller'], registers: [registry], collect() { this.set(controller, read(src.stats())); } });
  };
  gauge('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', (s) => s.reconcilesTotal);
  gauge('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', (s) => s.reconcileErrorsTotal);
  gauge('controller_runtime_active_workers', 'Number of currently used workers per controller', (s) => s.activeWorkers);
  gauge('workqueue_depth', 'Current depth of workqueue', (s) => s.queueDepth);
  gauge('workqueue_adds_total', 'Total number of adds handled by workqueue', (s) => s.queueAddsTotal);
  gauge('workqueue_retries_total', 'Total number of retries handled by workqueue', (s) => s.queueRetriesTotal);
  new Gauge({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests sent to the API server, by verb',
    labelNames: ['verb'],
    registers: [registry],
    collect() {
      for (const [verb, n] of Object.entries(src.apiRequests())) if (n !== undefined) this.set({ verb }, n);
    },
  });
  // controller-runtime's webhook metrics (pkg/webhook/internal/metrics), labelled by webhook path
  new Gauge({
    name: 'controller_runtime_webhook_requests_total',
    help: 'Total number of admission requests by HTTP status code.',
    labelNames: ['webhook', 'code'],
    registers: [registry],
    collect() {
      for (const [webhook, byCode] of src.webhook?.()?.requests ?? []) for (const [code, n] of byCode) this.set({ webhook, code: String(code) }, n);
    },
  });
  new Gauge({
    name: 'controller_runtime_webhook_requests_in_flight',
    help: 'Current number of admission requests being served.',
    labelNames: ['webhook'],
    registers: [registry],
    collect() {
      for (const [webhook, n] of src.webhook?.()?.inFlight ?? []) this.set({ webhook }, n);
    },
  });
  return registry;
}

export function startServer(address: string, handler: http.RequestListener, logger: Logger, what: string): http.Server | undefined {
  const bind = parseBindAddress(address);
  if (bind === undefined) return undefined;
  const server = http.createServer(handler);
  server.on('error', (e) => logger.error({ err: e.message, address }, `${what} server failed; pass --${what}-bind-address=0 to disable it`));
  server.listen(bind.port, bind.host, () => logger.info({ address }, `${what} server listening`));
  return server;
}

export function metricsHandler(registry: Registry): http.RequestListener {
  return (req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  };
}

export function probeHandler(src: ServerSources): http.RequestListener {
  return (req, res) => {
    if (req.url === '/healthz') return void res.writeHead(200).end('ok');
    if (req.url === '/readyz') return void (src.ready() ? res.writeHead(200).end('ok') : res.writeHead(503).end('caches not synced'));
    res.writeHead(404).end();
  };
}
