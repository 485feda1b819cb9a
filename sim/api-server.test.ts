import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiServer, sameJson } from './api-server.ts';
import { SimClock } from './clock.ts';

const PODS = '/api/v1/namespaces/default/pods';

function serverWithPods(n: number): ApiServer {
  const server = new ApiServer(new SimClock());
  for (let i = 0; i < n; i++) {
    const a = server.write('user', 'POST', PODS, { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    assert.equal(a.status, 201);
  }
  return server;
}

interface Page {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: readonly { readonly metadata: { readonly name: string } }[];
}

const list = (server: ApiServer, query: Record<string, string | number>): { status: number; page: Page } => {
  const a = server.handleTyped('controller', 'GET', PODS, query, undefined, undefined);
  return { status: a.status, page: JSON.parse(a.body) as Page };
};

describe('the in-memory API server lists in pages', () => {
  it('serves 5 pods in pages of 2 from one snapshot: a pod created between pages is not in this list', () => {
    const server = serverWithPods(5);
    const first = list(server, { limit: 2 });
    server.write('user', 'POST', PODS, { metadata: { name: 'late' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    const second = list(server, { limit: 2, continue: first.page.metadata.continue ?? '' });
    const third = list(server, { limit: 2, continue: second.page.metadata.continue ?? '' });
    const names = [first, second, third].flatMap((p) => p.page.items.map((i) => i.metadata.name));
    assert.deepEqual(names, ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.equal(third.page.metadata.continue, undefined, 'the last page has no continue token');
    assert.equal(second.page.metadata.resourceVersion, first.page.metadata.resourceVersion, 'every page is at the first page’s revision');
  });

  it('answers 410 Expired to a continue token from before a compaction', () => {
    const server = serverWithPods(3);
    const first = list(server, { limit: 2 });
    server.compact();
    assert.equal(list(server, { limit: 2, continue: first.page.metadata.continue ?? '' }).status, 410);
  });

  it('serves everything in one answer without a limit', () => {
    assert.equal(list(serverWithPods(3), {}).page.items.length, 3);
  });
});

describe('a write that changes nothing keeps the resourceVersion (sameJson: equal JSON text)', () => {
  it('calls values equal exactly when their JSON text is', () => {
    const shared = { containers: [{ name: 'c', image: 'x' }] };
    assert.equal(sameJson({ a: 1, spec: shared }, { a: 1, spec: shared }), true);
    assert.equal(sameJson({ a: 1, b: undefined }, { a: 1 }), true, 'JSON leaves an undefined member out');
    assert.equal(sameJson([undefined], [null]), true, 'and writes an undefined element as null');
    assert.equal(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 }), false, 'the order of the keys is part of the text');
    assert.equal(sameJson({ a: [1, 2] }, { a: [1, 2, 3] }), false);
    assert.equal(sameJson({ a: {} }, { a: [] }), false);
    assert.equal(sameJson({ a: '1' }, { a: 1 }), false);
    assert.equal(sameJson(Number.NaN, null), true, 'NaN is written as null');
  });

  it('answers a PATCH that sets what is already there without a new resourceVersion', () => {
    const server = serverWithPods(1);
    const before = server.peek('pods', 'default', 'p0');
    const a = server.write('user', 'PATCH', `${PODS}/p0`, { spec: { containers: [{ name: 'c', image: 'x' }] } });
    assert.equal(a.status, 200);
    assert.equal(server.peek('pods', 'default', 'p0')?.metadata.resourceVersion, before?.metadata.resourceVersion);
    server.write('user', 'PATCH', `${PODS}/p0`, { metadata: { labels: { a: 'b' } } });
    assert.notEqual(server.peek('pods', 'default', 'p0')?.metadata.resourceVersion, before?.metadata.resourceVersion);
  });
});
