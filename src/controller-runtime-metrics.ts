// controller-runtime's controller and workqueue metrics with the same names, types, labels and buckets
// (sigs.k8s.io/controller-runtime pkg/internal/controller/metrics/metrics.go and pkg/metrics/workqueue.go), so the
// usual controller-runtime dashboards and alerts work unchanged. Counters and histograms are pushed by the
// controller (runtime/controller.ts ControllerMetrics); gauges are read from its stats when scraped.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ControllerMetrics, ControllerStats, ReconcileResultLabel } from './runtime/controller.ts';

/** controller-runtime's ReconcileTime buckets. */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25,
  30, 40, 50, 60,
];
/** prometheus.ExponentialBuckets(10e-9, 10, 12): 10 ns to 1 000 s. */
const WORKQUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];
const RESULTS: readonly ReconcileResultLabel[] = ['error', 'requeue_after', 'requeue', 'success'];

/**
 * Registers the metrics for one controller (a single series each, labelled as controller-runtime labels them: the
 * workqueue's `name` and `controller` are both the controller's name) and returns what the controller pushes to.
 * `stats` is undefined while no controller runs (a standby replica): the gauges then read 0.
 */
export function controllerRuntimeMetrics(registry: Registry, name: string, workers: number, stats: () => ControllerStats | undefined): ControllerMetrics {
  const registers = [registry];
  const controller = { controller: name };
  const queue = { name, controller: name };
  const reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
    registers,
  });
  const reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'],
    registers,
  });
  const terminalErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames: ['controller'],
    registers,
  });
  const panics = new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliation panics per controller',
    labelNames: ['controller'],
    registers,
  });
  const reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'],
    buckets: RECONCILE_TIME_BUCKETS,
    registers,
  });
  new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'], registers }).set(
    controller,
    workers,
  );
  new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'],
    registers,
    collect() {
      this.set(controller, stats()?.activeWorkers ?? 0);
    },
  });
  new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue by workqueue and priority',
    labelNames: ['name', 'controller', 'priority'],
    registers,
    collect() {
      this.set({ ...queue, priority: '' }, stats()?.queueDepth ?? 0);
    },
  });
  const adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name', 'controller'], registers });
  const latency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name', 'controller'],
    buckets: WORKQUEUE_BUCKETS,
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames: ['name', 'controller'],
    buckets: WORKQUEUE_BUCKETS,
    registers,
  });
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ['name', 'controller'],
    registers,
    collect() {
      this.set(queue, stats()?.unfinishedWorkSeconds ?? 0);
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name', 'controller'],
    registers,
    collect() {
      this.set(queue, stats()?.longestRunningProcessorSeconds ?? 0);
    },
  });
  const retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name', 'controller'], registers });
  // As controller-runtime's initMetrics: every series exists from the start, so rate() and alerts see a 0, not nothing.
  for (const result of RESULTS) reconcileTotal.inc({ ...controller, result }, 0);
  for (const c of [reconcileErrors, terminalErrors, panics]) c.inc(controller, 0);
  reconcileTime.zero(controller);
  adds.inc(queue, 0);
  retries.inc(queue, 0);
  latency.zero(queue);
  workDuration.zero(queue);
  return {
    queue: {
      added: () => adds.inc(queue),
      retried: () => retries.inc(queue),
      queued: (seconds) => latency.observe(queue, seconds),
      worked: (seconds) => workDuration.observe(queue, seconds),
    },
    reconciled(result, seconds, error) {
      reconcileTotal.inc({ ...controller, result });
      reconcileTime.observe(controller, seconds);
      if (result !== 'error') return;
      reconcileErrors.inc(controller);
      if (error === 'terminal') terminalErrors.inc(controller);
      if (error === 'panic') panics.inc(controller);
    },
  };
}
