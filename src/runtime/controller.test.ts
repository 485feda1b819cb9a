import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino, type Logger } from 'pino';
import { apiErrorFromResponse } from '../kube/api-error.ts';
import { FakeClock } from './clock.ts';
import { Controller, TerminalError, type ReconcileResult } from './controller.ts';
import { ItemExponentialRateLimiter } from './rate-limiter.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

interface Harness {
  readonly controller: Controller;
  readonly clock: FakeClock;
  readonly calls: string[];
  readonly lines: Record<string, unknown>[];
  readonly stop: () => Promise<void>;
}

function start(reconcile: (key: string, call: number) => Promise<ReconcileResult>, workers = 1): Harness {
  const clock = new FakeClock(0);
  const { logger, lines } = capturingLogger();
  const calls: string[] = [];
  const controller = new Controller({
    name: 'test',
    workers,
    clock,
    logger,
    rateLimiter: new ItemExponentialRateLimiter(5, 1000),
    reconcile: (key) => {
      calls.push(key);
      return reconcile(key, calls.length);
    },
  });
  const ac = new AbortController();
  const running = controller.run(ac.signal);
  return {
    controller,
    clock,
    calls,
    lines,
    stop: async () => {
      ac.abort();
      await running;
    },
  };
}

test('a thrown error requeues the key with backoff and logs the key and the error message', async () => {
  const h = start(async (_key, call) => {
    if (call <= 2) throw new Error(`boom ${call}`);
    return {};
  });
  h.controller.enqueue('ns/a');
  await flush();
  assert.deepEqual(h.calls, ['ns/a']);
  assert.equal(h.controller.numRequeues('ns/a'), 1);
  const logged = h.lines.find((l) => l['msg'] === 'reconciler error');
  assert.equal(logged?.['key'], 'ns/a');
  assert.equal(logged?.['error'], 'boom 1');
  h.clock.advance(4);
  await flush();
  assert.equal(h.calls.length, 1, 'not before the 5 ms backoff');
  h.clock.advance(1);
  await flush();
  assert.equal(h.calls.length, 2);
  h.clock.advance(9);
  await flush();
  assert.equal(h.calls.length, 2, 'second backoff is 10 ms');
  h.clock.advance(1);
  await flush();
  assert.equal(h.calls.length, 3);
  assert.equal(h.controller.numRequeues('ns/a'), 0, 'success forgets the backoff');
  const s = h.controller.stats();
  assert.equal(s.reconcilesTotal, 3);
  assert.equal(s.reconcileErrorsTotal, 2);
  await h.stop();
});

test('requeueAfterMs forgets the backoff and requeues after exactly that delay', async () => {
  const h = start(async (_key, call) => {
    if (call === 1) throw new Error('first');
    if (call === 2) return { requeueAfterMs: 1000 };
    return {};
  });
  h.controller.enqueue('k');
  await flush();
  h.clock.advance(5);
  await flush();
  assert.equal(h.calls.length, 2);
  assert.equal(h.controller.numRequeues('k'), 0);
  h.clock.advance(999);
  await flush();
  assert.equal(h.calls.length, 2);
  h.clock.advance(1);
  await flush();
  assert.equal(h.calls.length, 3);
  assert.equal(h.controller.stats().reconcilesByOutcome.requeue_after, 1);
  await h.stop();
});

test('success forgets the key and does not requeue it', async () => {
  const h = start(async () => ({}));
  h.controller.enqueue('k');
  await flush();
  h.clock.advance(1_000_000);
  await flush();
  assert.deepEqual(h.calls, ['k']);
  assert.equal(h.controller.stats().reconcilesByOutcome.success, 1);
  await h.stop();
});

test("an API error with the server's Retry-After (retryAfterSeconds) waits at least that long", async () => {
  const h = start(async (_key, call) => {
    if (call === 1)
      throw apiErrorFromResponse(429, JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down', details: { retryAfterSeconds: 2 } }));
    return {};
  });
  h.controller.enqueue('k');
  await flush();
  h.clock.advance(1999);
  await flush();
  assert.equal(h.calls.length, 1);
  h.clock.advance(1);
  await flush();
  assert.equal(h.calls.length, 2);
  await h.stop();
});

test('a TerminalError is logged and not requeued', async () => {
  const h = start(async () => {
    throw new TerminalError('invalid selector');
  });
  h.controller.enqueue('k');
  await flush();
  h.clock.advance(1_000_000);
  await flush();
  assert.equal(h.calls.length, 1);
  assert.equal(h.controller.numRequeues('k'), 0);
  assert.equal(h.controller.stats().reconcilesByOutcome.terminal_error, 1);
  await h.stop();
});

test('N workers reconcile different keys in parallel but never the same key twice at once', async () => {
  const gates = new Map<string, () => void>();
  let concurrent = 0;
  let maxConcurrent = 0;
  const h = start(async (key) => {
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    await new Promise<void>((resolve) => gates.set(key, resolve));
    concurrent--;
    return {};
  }, 3);
  for (const k of ['a', 'b', 'c', 'd']) h.controller.enqueue(k);
  await flush();
  assert.equal(h.controller.stats().activeWorkers, 3);
  assert.equal(h.controller.stats().queueDepth, 1);
  h.controller.enqueue('a'); // a is in flight: must wait
  await flush();
  assert.deepEqual(h.calls, ['a', 'b', 'c']);
  gates.get('b')?.();
  await flush();
  assert.deepEqual(h.calls, ['a', 'b', 'c', 'd']);
  gates.get('a')?.();
  await flush();
  assert.deepEqual(h.calls, ['a', 'b', 'c', 'd', 'a']);
  assert.equal(maxConcurrent, 3);
  for (const g of gates.values()) g();
  await flush();
  for (const g of gates.values()) g();
  await h.stop();
});

test('run resolves after abort once the in-flight reconcile finished, dropping queued keys', async () => {
  let release: () => void = () => {};
  const h = start(async () => {
    await new Promise<void>((resolve) => (release = resolve));
    return {};
  });
  h.controller.enqueue('a');
  h.controller.enqueue('b');
  await flush();
  let stopped = false;
  const stopping = h.stop().then(() => (stopped = true));
  await flush();
  assert.equal(stopped, false);
  release();
  await stopping;
  assert.deepEqual(h.calls, ['a']);
});
