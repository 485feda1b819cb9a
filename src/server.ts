// The operations endpoints: Prometheus metrics (controller-runtime names) and /healthz, /readyz probes.
import http from 'node:http';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestMetrics } from './kube/client.ts';
import type { PodEventCounts } from './cloneset/event-handlers.ts';
import type { WebhookStats } from './webhook/server.ts';

export interface ServerSources {
  /**
   * /readyz. Never tied to leadership (a standby that can reach the API server is ready), so a rolling update
   * of a 2-replica Deployment can finish; main.ts decides.
   */
  readonly ready: () => boolean;
  /** With --leader-elect: the Lease name and whether this replica holds it. */
  readonly leader?: { readonly name: string; readonly isLeader: () => boolean };
  /** pod informer events by what they did (src/cloneset/event-handlers.ts), once the manager runs */
  readonly podEvents?: () => PodEventCounts | undefined;
  /** the webhook server's counters (src/webhook/server.ts), when it runs in this process */
  readonly webhook?: () => WebhookStats | undefined;
  /** notAfter (epoch ms) of the --metrics-secure serving certificate */
  readonly metricsCertificateNotAfterMs?: () => number | undefined;
}

function parseBindAddress(address: string): { host: string; port: number } | undefined {
  if (address === '0' || address === '') return undefined;
  const i = address.lastIndexOf(':');
  const host = i <= 0 ? '0.0.0.0' : address.slice(0, i);
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port)) throw new Error(`invalid bind address "${address}" (use host:port or :port)`);
  return { host, port };
}

/**
 * A Counter whose value is kept elsewhere (a plain count the source owns): set from the source at each scrape.
 * The source's counts only grow while its owner lives; a new owner (the next leadership term) starts again from 0,
 * which Prometheus' rate() reads as a counter reset.
 */
function countedElsewhere(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Iterable<readonly [Record<string, string>, number]>): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, n] of read()) this.inc(labels, n);
    },
  });
}

export function metricsRegistry(src: ServerSources): Registry {
  const registry = new Registry();
  // The event-loop delay histogram samples with a timer: prom-client's default of 10 ms woke the idle controller
  // 100 times a second (~4 mCPU, all of its idle CPU); 100 ms still catches every stall worth an alert.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const controller = { controller: 'cloneset-controller' };
  // Ours (controller-runtime has no such metric): how many pod events the event filter drops, how many wake a
  // CloneSet — e.g. kubelet status updates that change only what the cache does not keep are "ignored".
  countedElsewhere(
    registry,
    'cloneset_pod_events_total',
    'Pod informer events by event (add, update, delete) and result: enqueued (woke a CloneSet) or ignored (changed nothing the controller reads, or concerned no CloneSet).',
    ['controller', 'event', 'result'],
    function* () {
      const counts = src.podEvents?.();
      if (counts === undefined) return;
      for (const [event, byResult] of Object.entries(counts)) for (const [result, n] of Object.entries(byResult)) yield [{ ...controller, event, result }, n];
    },
  );
  const leader = src.leader;
  if (leader !== undefined) {
    // controller-runtime's (client-go leaderelection) gauge: 1 while this replica leads, else 0.
    new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      labelNames: ['name'],
      registers: [registry],
      collect() {
        this.set({ name: leader.name }, leader.isLeader() ? 1 : 0);
      },
    });
  }
  // controller-runtime's webhook metrics (pkg/webhook/internal/metrics), labelled by webhook path
  countedElsewhere(registry, 'controller_runtime_webhook_requests_total', 'Total number of admission requests by HTTP status code.', ['webhook', 'code'], function* () {
    for (const [webhook, byCode] of src.webhook?.()?.requests ?? []) for (const [code, n] of byCode) yield [{ webhook, code: String(code) }, n];
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
  new Gauge({
    name: 'cloneset_controller_certificate_expiry_timestamp_seconds',
    help: 'When the serving certificate in use expires (notAfter, Unix seconds), by certificate: webhook, metrics.',
    labelNames: ['certificate'],
    registers: [registry],
    collect() {
      const webhook = src.webhook?.()?.certificateNotAfterMs;
      if (webhook !== undefined) this.set({ certificate: 'webhook' }, webhook / 1000);
      const metrics = src.metricsCertificateNotAfterMs?.();
      if (metrics !== undefined) this.set({ certificate: 'metrics' }, metrics / 1000);
    },
  });
  return registry;
}

/** client-go's REST client metrics (k8s.io/client-go/tools/metrics, registered by component-base). */
export function restClientMetrics(registry: Registry): RequestMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers,
  });
  const duration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers,
  });
  const retries = new Counter({
    name: 'rest_client_request_retries_total',
    help: 'Number of request retries, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers,
  });
  return {
    request(r) {
      requests.inc({ code: r.code, method: r.method, host: r.host });
      // A watch lives for minutes by design: its lifetime is not a latency.
      if (r.stream !== true) duration.observe({ verb: r.method, host: r.host }, r.seconds);
    },
    retry(r) {
      retries.inc({ code: r.code, method: r.method, host: r.host });
    },
  };
}

export function startServer(address: string, handler: http.RequestListener, logger: Logger, what: string): http.Server | undefined {
  return listen(http.createServer(handler), address, logger, what);
}

/** Listens on a --*-bind-address; undefined (and the server left unused) for "0". */
export function listen<S extends http.Server>(server: S, address: string, logger: Logger, what: string): S | undefined {
  const bind = parseBindAddress(address);
  if (bind === undefined) return undefined;
  const flag = what.split(' ')[0] ?? what;
  server.on('error', (e) => logger.error({ err: e.message, address }, `${what} server failed; pass --${flag}-bind-address=0 to disable it`));
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
    if (req.url === '/readyz') return void (src.ready() ? res.writeHead(200).end('ok') : res.writeHead(503).end('not ready: caches not synced, or the API server is unreachable'));
    res.writeHead(404).end();
  };
}
