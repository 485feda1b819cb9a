import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiServer } from './api-server.ts';
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
