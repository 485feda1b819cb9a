// controller-runtime's metrics as Prometheus reads them: names, types, labels and buckets of
// pkg/internal/controller/metrics and pkg/metrics/workqueue.go, fed by a real Controller on a FakeClock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { controllerRuntimeMetrics } from './controller-runtime-metrics.ts';
import { FakeClock } from './runtime/clock.ts';
import { Controller, TerminalError, type ReconcileResult } from './runtime/controller.ts';
import { ItemExponentialRateLimiter } from './runtime/rate-limiter.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("before any reconcile every series exists at 0, with controller-runtime's types and labels", async () => {
  const registry = new Registry();
  controllerRuntimeMetrics(registry, 'cloneset-controller', 3, () => undefined);
  const text = await registry.metrics();
  for (const [name, type] of [
    ['controller_runtime_reconcile_total', 'counter'],
    ['controller_runtime_reconcile_errors_total', 'counter'],
    ['controller_runtime_terminal_reconcile_errors_total', 'counter'],
    ['controller_runtime_reconcile_panics_total', 'counter'],
    ['controller_runtime_reconcile_time_seconds', 'histogram'],
    ['controller_runtime_max_concurrent_reconciles', 'gauge'],
    ['controller_runtime_active_workers', 'gauge'],
    ['workqueue_depth', 'gauge'],
    ['workqueue_adds_total', 'counter'],
    ['workqueue_queue_duration_seconds', 'histogram'],
    ['workqueue_work_duration_seconds', 'histogram'],
    ['workqueue_unfinished_work_seconds', 'gauge'],
    ['workqueue_longest_running_processor_seconds', 'gauge'],
    ['workqueue_retries_total', 'counter'],
  ])
    assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
  for (const result of ['success', 'error', 'requeue', 'requeue_after'])
    assert.match(text, new RegExp(`^controller_runtime_reconcile_total\\{controller="cloneset-controller",result="${result}"\\} 0$`, 'm'));
  assert.match(text, /^controller_runtime_max_concurrent_reconciles\{controller="cloneset-controller"\} 3$/m);
  assert.match(text, /^workqueue_depth\{name="cloneset-controller",controller="cloneset-controller",priority=""\} 0$/m);
  assert.match(text, /^workqueue_adds_total\{name="cloneset-controller",controller="cloneset-controller"\} 0$/m);
  // controller-runtime's buckets: 40 for the reconcile time (5 ms … 60 s), 12 exponential ones for the queue (10 ns … 1000 s)
  assert.equal(text.match(/^controller_runtime_reconcile_time_seconds_bucket\{/gm)?.length, 41);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0\.005",controller="cloneset-controller"\} 0$/m);
  assert.equal(text.match(/^workqueue_queue_duration_seconds_bucket\{/gm)?.length, 13);
  assert.match(text, /^workqueue_queue_duration_seconds_bucket\{le="1e-8",name="cloneset-controller",controller="cloneset-controller"\} 0$/m);
  assert.match(text, /^workqueue_queue_duration_seconds_bucket\{le="1000",name="cloneset-controller",controller="cloneset-controller"\} 0$/m);
});

test('reconciles are counted by result, errors (terminal and panics too), and timed; the queue counts adds, retries and waits', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  const outcomes: Record<string, () => ReconcileResult> = {
    ok: () => ({}),
    later: () => ({ requeueAfterMs: 60_000 }),
    failing: () => {
      throw new Error('conflict');
    },
    terminal: () => {
      throw new TerminalError('bad selector');
    },
    buggy: () => {
      throw new TypeError('undefined is not a function');
    },
  };
  let controller: Controller | undefined;
  const metrics = controllerRuntimeMetrics(registry, 'cloneset-controller', 1, () => controller?.stats());
  controller = new Controller({
    name: 'cloneset-controller',
    workers: 1,
    clock,
    logger: pino({ level: 'silent' }),
    rateLimiter: new ItemExponentialRateLimiter(60_000, 60_000),
    metrics,
    reconcile: async (key) => {
      clock.advance(300); // each reconcile takes 300 ms of the fake clock
      return (outcomes[key] ?? outcomes.ok ?? (() => ({})))();
    },
  });
  const ac = new AbortController();
  const running = controller.run(ac.signal);
  for (const key of Object.keys(outcomes)) controller.enqueue(key);
  for (let i = 0; i < 20; i++) await flush();
  const text = await registry.metrics();
  ac.abort();
  await running;
  assert.match(text, /^controller_runtime_reconcile_total\{controller="cloneset-controller",result="success"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="cloneset-controller",result="requeue_after"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="cloneset-controller",result="error"\} 3$/m);
  assert.match(text, /^controller_runtime_reconcile_errors_total\{controller="cloneset-controller"\} 3$/m);
  assert.match(text, /^controller_runtime_terminal_reconcile_errors_total\{controller="cloneset-controller"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_panics_total\{controller="cloneset-controller"\} 1$/m);
  // 5 reconciles of 300 ms each: all in the 0.3 s bucket, none in 0.25 s
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0\.25",controller="cloneset-controller"\} 0$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0\.3",controller="cloneset-controller"\} 5$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_sum\{controller="cloneset-controller"\} 1\.5$/m);
  assert.match(text, /^workqueue_adds_total\{name="cloneset-controller",controller="cloneset-controller"\} 5$/m);
  // the failing and the buggy key are retried with backoff (the terminal one is not)
  assert.match(text, /^workqueue_retries_total\{name="cloneset-controller",controller="cloneset-controller"\} 2$/m);
  assert.match(text, /^workqueue_work_duration_seconds_count\{name="cloneset-controller",controller="cloneset-controller"\} 5$/m);
  // The 5 keys were added at 0 ms; the n-th was taken after n−1 reconciles of 300 ms: 0 + 0.3 + 0.6 + 0.9 + 1.2 s
  assert.match(text, /^workqueue_queue_duration_seconds_sum\{name="cloneset-controller",controller="cloneset-controller"\} 3$/m);
});

test('a reconcile in progress shows as unfinished work and as the longest running processor', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  let release: (() => void) | undefined;
  let controller: Controller | undefined;
  const metrics = controllerRuntimeMetrics(registry, 'cloneset-controller', 2, () => controller?.stats());
  controller = new Controller({
    name: 'cloneset-controller',
    workers: 2,
    clock,
    logger: pino({ level: 'silent' }),
    metrics,
    reconcile: () =>
      new Promise((resolve) => {
        release = () => resolve({});
      }),
  });
  const ac = new AbortController();
  const running = controller.run(ac.signal);
  controller.enqueue('slow');
  await flush();
  clock.advance(7_000);
  const text = await registry.metrics();
  assert.match(text, /^workqueue_unfinished_work_seconds\{name="cloneset-controller",controller="cloneset-controller"\} 7$/m);
  assert.match(text, /^workqueue_longest_running_processor_seconds\{name="cloneset-controller",controller="cloneset-controller"\} 7$/m);
  assert.match(text, /^controller_runtime_active_workers\{controller="cloneset-controller"\} 1$/m);
  release?.();
  ac.abort();
  await running;
});
