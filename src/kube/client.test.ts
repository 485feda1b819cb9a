import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, ConnectionError, isGone } from './api-error.ts';
import { CLONESETS, CONFIGMAPS, KubeClient, NODES, PODS, USER_AGENT, loadKubeConfig, type WatchEvent } from './client.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (req: Seen, res: http.ServerResponse) => void;

/** A fake API server on plain HTTP: records requests, answers with the current `handler`. */
const seen: Seen[] = [];
let handler: Handler = (_req, res) => res.end('{}');
const sockets = new Set<string>();
const server = http.createServer((req, res) => {
  sockets.add(`${req.socket.remotePort}`);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
    seen.push(s);
    handler(s, res);
  });
});
let client: KubeClient;
let base = '';

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

/** `promise`, or a failure naming `what` when it has not settled after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`expected: ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const json = (res: http.ServerResponse, code: number, body: unknown): void => {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = await KubeClient.fromKubeConfig(kubeConfigFor(base), { qps: 1000, burst: 1000 });
});
after(() => {
  client.close();
  server.close();
  server.closeAllConnections();
});
beforeEach(() => {
  seen.length = 0;
  handler = (_req, res) => json(res, 200, { metadata: { name: 'x' } });
});

describe('KubeClient requests', () => {
  it('builds core, grouped, namespaced and cluster-scoped paths, with auth and user agent', async () => {
    await client.get(PODS, 'ns', 'p');
    await client.get(NODES, undefined, 'n1');
    await client.list(CONFIGMAPS, undefined, { labelSelector: 'a=b' });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      ['GET /api/v1/namespaces/ns/pods/p', 'GET /api/v1/nodes/n1', 'GET /api/v1/configmaps?labelSelector=a%3Db'],
    );
    assert.equal(seen[0]?.headers.authorization, 'Bearer secret-token');
    assert.equal(seen[0]?.headers['user-agent'], USER_AGENT);
    assert.match(USER_AGENT, /^cloneset-controller\/\d+\.\d+\.\d+/);
  });

  it('sends each patch type with its content type, and subresources', async () => {
    await client.patch(PODS, 'ns', 'p', { metadata: { labels: { a: 'b' } } }, 'merge');
    await client.patch(PODS, 'ns', 'p', { status: { conditions: [] } }, 'strategic', { subresource: 'status' });
    await client.patch(PODS, 'ns', 'p', [{ op: 'test', path: '/metadata/resourceVersion', value: '5' }], 'json');
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url} ${s.headers['content-type']}`),
      [
        'PATCH /api/v1/namespaces/ns/pods/p application/merge-patch+json',
        'PATCH /api/v1/namespaces/ns/pods/p/status application/strategic-merge-patch+json',
        'PATCH /api/v1/namespaces/ns/pods/p application/json-patch+json',
      ],
    );
    assert.deepEqual(JSON.parse(seen[2]?.body ?? ''), [{ op: 'test', path: '/metadata/resourceVersion', value: '5' }]);
  });

  it('creates a binding on the pod named by the body, and updates with PUT', async () => {
    await client.create(PODS, 'ns', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n' } }, { subresource: 'binding' });
    await client.update(PODS, 'ns', 'p', { metadata: { name: 'p' } }, { subresource: 'status' });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      ['POST /api/v1/namespaces/ns/pods/p/binding', 'PUT /api/v1/namespaces/ns/pods/p/status'],
    );
  });

  it('deletes with a UID precondition and propagation policy', async () => {
    await client.delete(PODS, 'ns', 'p', { preconditionUid: 'u-1', propagationPolicy: 'Background' });
    assert.equal(seen[0]?.method, 'DELETE');
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: 'u-1' },
      propagationPolicy: 'Background',
    });
  });

  it('asks for metadata only on a metadataOnly write, and plain JSON on every other request', async () => {
    handler = (_req, res) => json(res, 201, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'p', resourceVersion: '7' } });
    const created = await client.create(PODS, 'ns', { metadata: { name: 'p' } }, { metadataOnly: true });
    const patched = await client.patch(PODS, 'ns', 'p', { status: {} }, 'strategic', { subresource: 'status', metadataOnly: true });
    await client.patch(PODS, 'ns', 'p', { metadata: {} }, 'merge');
    await client.get(PODS, 'ns', 'p');
    assert.equal(created.metadata.resourceVersion, '7');
    assert.equal(patched.metadata.resourceVersion, '7');
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url} ${s.headers.accept}`),
      [
        'POST /api/v1/namespaces/ns/pods application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json',
        'PATCH /api/v1/namespaces/ns/pods/p/status application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json',
        'PATCH /api/v1/namespaces/ns/pods/p application/json',
        'GET /api/v1/namespaces/ns/pods/p application/json',
      ],
    );
  });

  it('does not parse a delete answer, which nobody reads, and still reports a failed delete', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind":"PartialObjectMetadata", cut short');
    };
    await client.delete(PODS, 'ns', 'p');
    assert.match(seen[0]?.headers.accept ?? '', /as=PartialObjectMetadata/);
    handler = (_req, res) => json(res, 404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'pods "p" not found' });
    await assert.rejects(client.delete(PODS, 'ns', 'p'), (e: unknown) => e instanceof ApiError && e.code === 404);
  });

  it('turns a Status answer into a typed ApiError', async () => {
    handler = (_req, res) => json(res, 409, { kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' });
    await assert.rejects(client.update(CONFIGMAPS, 'ns', 'c', {}), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.reason, 'Conflict');
      assert.match(e.message, /PUT \/api\/v1\/namespaces\/ns\/configmaps\/c: the object has been modified/);
      return true;
    });
  });

  it('pages through a list with limit and continue', async () => {
    handler = (req, res) => {
      const token = new URL(req.url, base).searchParams.get('continue');
      if (token === null) json(res, 200, { metadata: { continue: 'page2', resourceVersion: '10' }, items: [{ n: 1 }] });
      else json(res, 200, { metadata: { resourceVersion: '10' }, items: [{ n: 2 }] });
    };
    const all = await client.listAll(CONFIGMAPS, 'ns');
    assert.deepEqual(all, { items: [{ n: 1 }, { n: 2 }], resourceVersion: '10' });
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/api/v1/namespaces/ns/configmaps?limit=500', '/api/v1/namespaces/ns/configmaps?limit=500&continue=page2'],
    );
  });

  it('maps each page as it arrives (an informer transform)', async () => {
    handler = (req, res) => {
      const token = new URL(req.url, base).searchParams.get('continue');
      if (token === null) json(res, 200, { metadata: { continue: 'page2', resourceVersion: '10' }, items: [{ n: 1 }] });
      else json(res, 200, { metadata: { resourceVersion: '10' }, items: [{ n: 2 }] });
    };
    const all = await client.listAll<{ n: number }>(CONFIGMAPS, 'ns', { map: (o) => ({ n: o.n * 10 }) });
    assert.deepEqual(all.items, [{ n: 10 }, { n: 20 }]);
  });

  it('maps each item as it is parsed, while the rest of its page is still on its way', async () => {
    let mappedFirst: () => void = () => undefined;
    const firstMapped = new Promise<void>((resolve) => {
      mappedFirst = resolve;
    });
    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":"ConfigMapList","metadata":{"resourceVersion":"10"},"items":[{"n":1},');
      // The second item is sent only once the first has been mapped.
      void firstMapped.then(() => res.end('{"n":2}]}'));
    };
    const mappedWhilePageOpen: number[] = [];
    const all = await within(
      5000,
      'the list, its second item sent after the first was mapped',
      client.listAll<{ n: number }>(CONFIGMAPS, 'ns', {
        map: (o) => {
          mappedWhilePageOpen.push(o.n);
          if (o.n === 1) mappedFirst();
          return { n: o.n * 10 };
        },
      }),
    );
    assert.deepEqual(all, { items: [{ n: 10 }, { n: 20 }], resourceVersion: '10' });
    assert.deepEqual(mappedWhilePageOpen, [1, 2]);
  });

  it("fails with the transform's error when it throws, and the client goes on answering", async () => {
    handler = (_req, res) => json(res, 200, { metadata: { continue: 'page2', resourceVersion: '10' }, items: [{ n: 1 }, { n: 2 }] });
    const list = client.listAll<{ n: number }>(CONFIGMAPS, 'ns', {
      map: () => {
        throw new Error('transform failed');
      },
    });
    await assert.rejects(list, /transform failed/);
    assert.equal(seen.length, 1, 'no second page is asked for');
    handler = (_req, res) => json(res, 200, { metadata: { resourceVersion: '11' }, items: [{ n: 3 }] });
    assert.deepEqual(await client.listAll(CONFIGMAPS, 'ns'), { items: [{ n: 3 }], resourceVersion: '11' });
  });

  it('fails a list answer that is not JSON with a syntax error, without retrying it', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"metadata":{},"items":[{"n":1}');
    };
    await assert.rejects(client.listAll(CONFIGMAPS, 'ns'), SyntaxError);
    assert.equal(seen.length, 1);
  });

  it('falls back to a full list when the continue token expired', async () => {
    handler = (req, res) => {
      const q = new URL(req.url, base).searchParams;
      if (q.get('continue') !== null) json(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: 'continue expired' });
      else if (q.get('limit') !== null) json(res, 200, { metadata: { continue: 'c' }, items: [{ n: 1 }] });
      else json(res, 200, { metadata: { resourceVersion: '11' }, items: [{ n: 1 }, { n: 2 }] });
    };
    assert.deepEqual(await client.listAll(CONFIGMAPS, 'ns'), { items: [{ n: 1 }, { n: 2 }], resourceVersion: '11' });
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    sockets.clear();
    for (let i = 0; i < 5; i++) await client.get(PODS, 'ns', 'p');
    assert.equal(sockets.size, 1);
  });

  it('counts requests in total and per verb', async () => {
    const before = client.requestCount;
    const createsBefore = client.requestCounts().create ?? 0;
    await client.create(CONFIGMAPS, 'ns', { metadata: { name: 'c' } });
    await client.get(CONFIGMAPS, 'ns', 'c');
    assert.equal(client.requestCount - before, 2);
    assert.equal((client.requestCounts().create ?? 0) - createsBefore, 1);
  });
});

describe('KubeClient rate limits', () => {
  it("draws from one bucket per resource kind: subresources share their kind's, lists and watches use the cache's", async () => {
    const fresh = await KubeClient.fromKubeConfig(kubeConfigFor(base), { qps: 1000, burst: 1000 });
    try {
      await fresh.create(PODS, 'ns', { metadata: { name: 'p' } });
      await fresh.patch(PODS, 'ns', 'p', { status: { conditions: [] } }, 'strategic', { subresource: 'status' });
      await fresh.patch(CLONESETS, 'ns', 'c', { status: { replicas: 1 } }, 'merge', { subresource: 'status' });
      await fresh.list(PODS, 'ns');
      await fresh.getPath('/version');
      assert.deepEqual(fresh.limiterKeys(), ['core/v1/pods', 'apps.kruise.io/v1alpha1/clonesets', 'core/v1/pods (cache)', 'non-resource']);
      // A view (fenced) shares the limiters of its client.
      await fresh.fenced(new AbortController().signal).get(NODES, undefined, 'n1');
      assert.ok(fresh.limiterKeys().includes('core/v1/nodes'));
    } finally {
      fresh.close();
    }
  });
});

describe('KubeClient.watch', () => {
  it('streams events split across chunks, with bookmarks and timeout parameters', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}\n{"type":"BOOK');
      setTimeout(() => res.end('MARK","object":{"metadata":{"resourceVersion":"9"}}}\n'), 10);
    };
    const events: WatchEvent[] = [];
    await client.watch(CONFIGMAPS, 'ns', { resourceVersion: '4', timeoutSeconds: 300, allowWatchBookmarks: true }, (e) => events.push(e), new AbortController().signal);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
    const q = new URL(seen[0]?.url ?? '', base).searchParams;
    assert.deepEqual([q.get('watch'), q.get('resourceVersion'), q.get('timeoutSeconds'), q.get('allowWatchBookmarks')], ['true', '4', '300', 'true']);
  });

  it('resolves when aborted mid-stream, after delivering what came before, and hangs up the stream', async () => {
    let hungUp: Promise<unknown> | undefined;
    handler = (_req, res) => {
      hungUp = once(res, 'close');
      res.writeHead(200);
      // the stream stays open: only the client can end it
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}\n');
    };
    const ac = new AbortController();
    const events: string[] = [];
    const onEvent = (e: WatchEvent): void => {
      events.push(`${e.type} ${e.type === 'ERROR' ? '' : (e.object.metadata?.name ?? '')}`);
      ac.abort();
    };
    await within(5000, 'the watch resolves', client.watch(PODS, undefined, { resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true }, onEvent, ac.signal));
    assert.deepEqual(events, ['ADDED a']);
    assert.ok(hungUp !== undefined, 'the watch reached the server');
    await within(5000, 'the server sees the watch connection close', hungUp);
  });

  it('rejects with Gone for an HTTP 410', async () => {
    handler = (_req, res) => json(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (100)' });
    await assert.rejects(
      client.watch(PODS, 'ns', { resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true }, () => undefined, new AbortController().signal),
      (e: unknown) => isGone(e),
    );
  });
});

describe('connection failures', () => {
  it('raise a ConnectionError that tells the user to check the API server', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    closed.close();
    const c = await KubeClient.fromKubeConfig(kubeConfigFor(url), { qps: 10, burst: 10, policy: { maxRetries: 0 } });
    await assert.rejects(c.get(PODS, 'ns', 'p'), (e: unknown) => {
      assert.ok(e instanceof ConnectionError);
      assert.match(e.message, /cannot reach the Kubernetes API server at http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED.*check that the API server is running and reachable/);
      return true;
    });
    c.close();
  });
});

describe('loadKubeConfig', () => {
  it('fails clearly for a missing file', () => {
    assert.throws(() => loadKubeConfig('/nonexistent/kubeconfig'), /no kubeconfig found at \/nonexistent\/kubeconfig .*pass --kubeconfig or set KUBECONFIG/);
  });

  it('fails clearly for a file without a usable current context', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kc-'));
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    assert.throws(() => loadKubeConfig(file), new RegExp(`invalid kubeconfig at ${file}: no current-context`));
  });

  it('reads the file named by KUBECONFIG', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kc-'));
    const file = join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: c',
        'clusters: [{name: k, cluster: {server: "https://10.0.0.1:6443"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: c, context: {cluster: k, user: u}}]',
      ].join('\n'),
    );
    assert.equal(loadKubeConfig(undefined, { KUBECONFIG: file }).getCurrentCluster()?.server, 'https://10.0.0.1:6443');
    assert.throws(() => loadKubeConfig(undefined, { KUBECONFIG: join(dir, 'missing') }), /no kubeconfig found at .*missing \(from KUBECONFIG\)/);
  });
});
