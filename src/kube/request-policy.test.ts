// The request policy of the REST client, over a small in-process HTTP server (a transport test: the server only
// answers what each test scripts — status codes, Retry-After, silence, resets).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, ConnectionError, FenceDeadlineError, RequestAbortedError } from './api-error.ts';
import { CONFIGMAPS, KubeClient, PODS, type ClientOptions, type RequestMetrics } from './client.ts';
import { DEFAULT_REQUEST_POLICY, RetryBudget, backoffMs, retryDecision } from './request-policy.ts';
import { WatchIdleError } from './transport.ts';
import type { KubeObject } from './types.ts';
import { runWatcher } from '../runtime/watcher.ts';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly at: number;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

const seen: Seen[] = [];
const closedSockets: string[] = [];
let handler: Handler = (_req, res) => res.end('{}');
const server = http.createServer((req, res) => {
  seen.push({ method: req.method ?? '', url: req.url ?? '', at: performance.now() });
  req.socket.once('close', () => closedSockets.push(`${req.method} ${req.url}`));
  req.resume();
  req.on('end', () => handler(req, res, seen.length));
});
let base = '';
const clients: KubeClient[] = [];

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

/** Records every attempt and retry as "<method> <code>". */
class Recorded implements RequestMetrics {
  readonly requests: string[] = [];
  readonly retries: string[] = [];
  request(r: { method: string; code: string }): void {
    this.requests.push(`${r.method} ${r.code}`);
  }
  retry(r: { method: string; code: string }): void {
    this.retries.push(`${r.method} ${r.code}`);
  }
}

async function clientWith(opts: Partial<ClientOptions> = {}, url = base): Promise<KubeClient> {
  const c = await KubeClient.fromKubeConfig(kubeConfigFor(url), { qps: 1000, burst: 1000, random: () => 0, ...opts, policy: { backoffBaseMs: 20, ...opts.policy } });
  clients.push(c);
  return c;
}

const status = (res: http.ServerResponse, code: number, reason: string, headers: Record<string, string> = {}): void => {
  res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ kind: 'Status', code, reason, message: reason }));
};
const ok = (res: http.ServerResponse): void => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end('{"metadata":{"name":"x"}}');
};

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  for (const c of clients) c.close();
  server.close();
  server.closeAllConnections();
});
beforeEach(() => {
  seen.length = 0;
  closedSockets.length = 0;
  handler = (_req, res) => ok(res);
});

describe('retry decisions', () => {
  const p = DEFAULT_REQUEST_POLICY;
  it('honours Retry-After seconds on 429 and 5xx for every method, capped', () => {
    assert.deepEqual(retryDecision(p, 'POST', { kind: 'status', status: 429, retryAfter: '3' }, 0, 0.5), { retry: true, delayMs: 3000, why: 'HTTP 429 with Retry-After' });
    assert.equal(retryDecision(p, 'PATCH', { kind: 'status', status: 500, retryAfter: '1' }, 0, 0).retry, true);
    assert.deepEqual(retryDecision(p, 'GET', { kind: 'status', status: 503, retryAfter: '3600' }, 0, 0), {
      retry: true,
      delayMs: p.maxRetryAfterMs,
      why: 'HTTP 503 with Retry-After',
    });
    assert.deepEqual(retryDecision(p, 'GET', { kind: 'status', status: 429, retryAfterSeconds: 2 }, 0, 0), { retry: true, delayMs: 2000, why: 'HTTP 429 with Retry-After' });
  });

  it('retries 429 and 503 without Retry-After with a jittered, growing backoff; 504 only for reads; 500 and 4xx never', () => {
    assert.equal(retryDecision(p, 'POST', { kind: 'status', status: 503 }, 0, 0).retry, true);
    assert.equal(retryDecision(p, 'POST', { kind: 'status', status: 504 }, 0, 0).retry, false);
    assert.equal(retryDecision(p, 'GET', { kind: 'status', status: 504 }, 0, 0).retry, true);
    assert.equal(retryDecision(p, 'GET', { kind: 'status', status: 500 }, 0, 0).retry, false);
    assert.equal(retryDecision(p, 'GET', { kind: 'status', status: 409 }, 0, 0).retry, false);
    assert.deepEqual(
      [0, 1, 2, 10].map((n) => backoffMs(p, n, 0)),
      [125, 250, 500, p.backoffMaxMs / 2],
    );
    // half of each step (250 ms doubling, at most 8 s) is fixed, the other half scaled by the random draw
    assert.deepEqual(
      [
        [0, 0.5],
        [0, 0.999],
        [3, 0.5],
        [5, 0.999],
        [30, 0.25],
      ].map(([n = 0, r = 0]) => backoffMs(p, n, r)),
      [187.5, 249.875, 1500, 7996, 5000],
    );
  });

  it('retries a write after a connection failure only when the server cannot have received it', () => {
    assert.equal(retryDecision(p, 'POST', { kind: 'connection', notReceived: true }, 0, 0).retry, true);
    assert.equal(retryDecision(p, 'POST', { kind: 'connection', notReceived: false }, 0, 0).retry, false);
    assert.equal(retryDecision(p, 'GET', { kind: 'connection', notReceived: false }, 0, 0).retry, true);
  });

  it('stops after maxRetries', () => {
    assert.equal(retryDecision(p, 'GET', { kind: 'status', status: 429 }, p.maxRetries, 0).retry, false);
  });

  it('a retry budget saves a fraction of a retry per request, up to its capacity', () => {
    const b = new RetryBudget(2, 0.5);
    assert.deepEqual([b.withdraw(), b.withdraw(), b.withdraw()], [true, true, false]);
    b.deposit();
    assert.equal(b.withdraw(), false);
    b.deposit();
    assert.equal(b.withdraw(), true);
  });
});

describe('KubeClient request policy', () => {
  it('waits as long as Retry-After says before retrying a 429, and counts the retry', async () => {
    const metrics = new Recorded();
    const client = await clientWith({ metrics });
    handler = (_req, res, n) => (n === 1 ? status(res, 429, 'TooManyRequests', { 'Retry-After': '1' }) : ok(res));
    await client.get(PODS, 'ns', 'p');
    assert.equal(seen.length, 2);
    const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    assert.ok(waited >= 990, `waited ${waited} ms, Retry-After asked for 1000`);
    assert.deepEqual(metrics.requests, ['GET 429', 'GET 200']);
    assert.deepEqual(metrics.retries, ['GET 429']);
  });

  it('when it gives up on a 429, the error carries the Retry-After for the work queue', async () => {
    const client = await clientWith({ policy: { maxRetries: 0 } });
    handler = (_req, res) => status(res, 429, 'TooManyRequests', { 'Retry-After': '7' });
    await assert.rejects(client.get(PODS, 'ns', 'p'), (e: unknown) => e instanceof ApiError && e.retryAfterMs === 7000 && /GET \/api\/v1\/namespaces\/ns\/pods\/p/.test(e.message));
  });

  it('gives up after maxRetries and surfaces the last answer', async () => {
    const client = await clientWith({ policy: { maxRetries: 2 } });
    handler = (_req, res) => status(res, 503, 'ServiceUnavailable');
    await assert.rejects(client.get(PODS, 'ns', 'p'), (e: unknown) => e instanceof ApiError && e.code === 503);
    assert.equal(seen.length, 3);
  });

  it('spends at most its retry budget when the API server fails everything', async () => {
    const metrics = new Recorded();
    const client = await clientWith({ metrics, policy: { maxRetries: 5, budgetCapacity: 3, budgetRatio: 0 } });
    handler = (_req, res) => status(res, 429, 'TooManyRequests');
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.get(PODS, 'ns', 'p')));
    assert.ok(results.every((r) => r.status === 'rejected'));
    assert.equal(metrics.retries.length, 3, 'three retries in all, not 5 × 5');
    assert.equal(seen.length, 5 + 3);
  });

  it('enforces the deadline of each attempt (--kube-api-request-timeout) on a server that never answers', async () => {
    const client = await clientWith({ policy: { requestTimeoutMs: 150, maxRetries: 1 } });
    handler = () => undefined; // never answers
    const started = performance.now();
    await assert.rejects(client.get(PODS, 'ns', 'p'), (e: unknown) => e instanceof ConnectionError && /within 0\.15s \(--kube-api-request-timeout\)/.test(e.message));
    const took = performance.now() - started;
    assert.equal(seen.length, 2, 'a read is retried once after its deadline');
    assert.ok(took < 1000, `took ${took} ms`);
  });

  it('does not retry a create whose connection broke after it was sent, but retries a read', async () => {
    const client = await clientWith();
    handler = (req, res, n) => (req.method === 'POST' || n === 2 ? res.socket?.destroy() : ok(res));
    await assert.rejects(client.create(PODS, 'ns', { metadata: { name: 'p' } }), (e: unknown) => e instanceof ConnectionError && !e.notReceived);
    assert.deepEqual(
      seen.map((s) => s.method),
      ['POST'],
    );
    await client.get(PODS, 'ns', 'p');
    assert.deepEqual(
      seen.map((s) => s.method),
      ['POST', 'GET', 'GET'],
    );
  });

  it('retries a create the server never received (connection refused) once the server is back', async () => {
    const later = http.createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', at: performance.now() });
      req.resume();
      req.on('end', () => ok(res));
    });
    later.listen(0, '127.0.0.1');
    await once(later, 'listening');
    const port = (later.address() as AddressInfo).port;
    later.close();
    await once(later, 'close');
    const client = await clientWith({ policy: { backoffBaseMs: 400, maxRetries: 5 } }, `http://127.0.0.1:${port}`);
    const created = client.create(PODS, 'ns', { metadata: { name: 'p' } });
    await new Promise((r) => setTimeout(r, 100));
    later.listen(port, '127.0.0.1');
    try {
      await created;
      assert.deepEqual(
        seen.map((s) => s.method),
        ['POST'],
      );
    } finally {
      later.close();
      later.closeAllConnections();
    }
  });

  it('aborting the signal of a view destroys the socket of an in-flight write and refuses later ones', async () => {
    const client = await clientWith();
    handler = () => undefined; // the write hangs
    const leading = new AbortController();
    const fenced = client.fenced(leading.signal);
    const write = fenced.patch(PODS, 'ns', 'p', { metadata: { labels: { a: 'b' } } }, 'merge');
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    leading.abort();
    await assert.rejects(write, (e: unknown) => e instanceof RequestAbortedError);
    await assert.rejects(fenced.create(PODS, 'ns', {}), (e: unknown) => e instanceof RequestAbortedError);
    while (closedSockets.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(closedSockets, ['PATCH /api/v1/namespaces/ns/pods/p']);
    assert.equal(seen.length, 1, 'nothing was sent after the abort');
    handler = (_req, res) => ok(res);
    await client.get(PODS, 'ns', 'p'); // the unbound client is unaffected
  });

  it('a view whose fence deadline has passed sends nothing', async () => {
    const client = await clientWith();
    let left = 1000;
    const view = client.fenced(new AbortController().signal, { fence: () => left });
    await view.get(PODS, 'ns', 'p');
    left = 0;
    await assert.rejects(view.patch(PODS, 'ns', 'p', {}, 'merge'), (e: unknown) => e instanceof FenceDeadlineError && /not sent/.test(e.message));
    assert.deepEqual(
      seen.map((s) => s.method),
      ['GET'],
    );
  });

  it('a write queued for a socket past its fence deadline is never sent, even once sockets free up', async () => {
    const client = await clientWith({ qps: 1000, burst: 1000 });
    const release: (() => void)[] = [];
    handler = (_req, res) => {
      release.push(() => ok(res));
    }; // every socket of the pool is held by a slow request
    const slow = Array.from({ length: 32 }, (_, i) => client.get(PODS, 'ns', `slow-${i}`));
    while (seen.length < 32) await new Promise((r) => setTimeout(r, 5));
    const fenced = client.fenced(new AbortController().signal, { fence: () => 100 });
    await assert.rejects(fenced.patch(PODS, 'ns', 'late', {}, 'merge'), (e: unknown) => e instanceof FenceDeadlineError && /not sent/.test(e.message));
    handler = (_req, res) => ok(res);
    for (const r of release) r();
    await Promise.all(slow);
    await client.get(PODS, 'ns', 'after'); // a later request goes through the freed pool
    assert.deepEqual(
      seen.filter((s) => s.url.includes('late')),
      [],
      'the fenced write never reached the server',
    );
  });

  it('a write without an answer by its fence deadline has its socket destroyed', async () => {
    const client = await clientWith();
    handler = () => undefined; // the write hangs
    const fenced = client.fenced(new AbortController().signal, { fence: () => 100 });
    await assert.rejects(fenced.patch(PODS, 'ns', 'p', {}, 'merge'), (e: unknown) => e instanceof FenceDeadlineError && /may or may not/.test(e.message));
    while (closedSockets.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(closedSockets, ['PATCH /api/v1/namespaces/ns/pods/p']);
    assert.equal(seen.length, 1, 'not retried');
  });

  it('an `unsent` abort drops requests waiting for a token but lets the one on the wire finish', async () => {
    const client = await clientWith({ qps: 1, burst: 1 });
    let release: (() => void) | undefined;
    handler = (_req, res) => {
      release = () => ok(res);
    };
    const stopping = new AbortController();
    const view = client.fenced(new AbortController().signal, { unsent: stopping.signal });
    const first = view.patch(PODS, 'ns', 'a', {}, 'merge');
    const second = view.patch(PODS, 'ns', 'b', {}, 'merge'); // waits ~1 s for a token
    while (release === undefined) await new Promise((r) => setTimeout(r, 5));
    stopping.abort();
    await assert.rejects(second, (e: unknown) => e instanceof RequestAbortedError);
    release();
    await first;
    assert.equal(seen.length, 1);
  });
});

describe('watch idle detection', () => {
  it('a watch with no byte for the idle timeout fails with WatchIdleError', async () => {
    const client = await clientWith({ watchIdleTimeoutMs: 150 });
    handler = (_req, res) => {
      res.writeHead(200);
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}\n');
    };
    const started = performance.now();
    await assert.rejects(
      client.watch(CONFIGMAPS, 'ns', { resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true }, () => undefined, new AbortController().signal),
      (e: unknown) => e instanceof WatchIdleError && /--watch-idle-timeout/.test(e.message),
    );
    assert.ok(performance.now() - started < 2000);
  });

  it('the watcher reconnects a silent watch from the last resourceVersion it saw', async () => {
    const client = await clientWith({ watchIdleTimeoutMs: 150 });
    handler = (req, res) => {
      const q = new URL(req.url ?? '', base).searchParams;
      if (q.get('watch') !== 'true') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"metadata":{"resourceVersion":"1"},"items":[]}');
        return;
      }
      res.writeHead(200);
      if (q.get('resourceVersion') === '1') res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}\n');
      // then silence: a half-open connection
    };
    const stop = new AbortController();
    const done = runWatcher(
      {
        source: {
          list: () => client.listAll<KubeObject>(CONFIGMAPS, 'ns'),
          watch: (rv, t, onEvent, signal) => client.watch(CONFIGMAPS, 'ns', { resourceVersion: rv, timeoutSeconds: t, allowWatchBookmarks: true }, onEvent, signal),
        },
        sink: () => undefined,
        log: () => undefined,
        now: () => performance.now(),
        sleep: (ms, signal) =>
          new Promise((r) => {
            const t = setTimeout(r, ms);
            signal.addEventListener(
              'abort',
              () => {
                clearTimeout(t);
                r(undefined);
              },
              { once: true },
            );
          }),
        random: () => 0,
      },
      stop.signal,
    );
    const watches = (): string[] => seen.filter((s) => s.url.includes('watch=true')).map((s) => new URL(s.url, base).searchParams.get('resourceVersion') ?? '');
    const deadline = performance.now() + 5000;
    while (watches().length < 2 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    await done;
    assert.deepEqual(watches().slice(0, 2), ['1', '7']);
  });
});
