import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, OwnerReference } from '../kube/types.ts';
import { compareResourceVersions, indexByNamespace, indexByOwnerUid, ingest, objectKey, ObjectStore } from './store.ts';

interface Obj extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

/** A ConfigMap-like object: `cm('a', '5')` is ns/a at resourceVersion 5. */
function cm(name: string, rv: string, more: { ns?: string; uid?: string; owners?: string[]; data?: Record<string, string> } = {}): Obj {
  const ownerReferences: OwnerReference[] = (more.owners ?? []).map((uid) => ({ apiVersion: 'v1', kind: 'X', name: 'o', uid }));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: more.ns ?? 'ns', uid: more.uid ?? `uid-${name}`, resourceVersion: rv, ownerReferences, managedFields: [{ manager: 'kubectl' }] },
    ...(more.data === undefined ? {} : { data: more.data }),
  };
}

const indexers = { owner: indexByOwnerUid, namespace: indexByNamespace };
const names = (objs: readonly KubeObject[]): string[] => objs.map((o) => o.metadata?.name ?? '?').sort();

describe('compareResourceVersions', () => {
  it('orders resourceVersions as integers, not as strings', () => {
    assert.equal(compareResourceVersions('9', '10'), -1);
    assert.equal(compareResourceVersions('100', '99'), 1);
    assert.equal(compareResourceVersions('42', '42'), 0);
    assert.equal(compareResourceVersions('18446744073709551617', '18446744073709551616'), 1);
    assert.equal(compareResourceVersions('12345', '12354'), -1);
  });
  it('orders resourceVersions with leading zeros by their value', () => {
    assert.equal(compareResourceVersions('007', '7'), 0);
    assert.equal(compareResourceVersions('010', '9'), 1);
    assert.equal(compareResourceVersions('9', '0010'), -1);
  });
  it('reports no order for non-integer resourceVersions', () => {
    assert.equal(compareResourceVersions('abc', '10'), undefined);
    assert.equal(compareResourceVersions(undefined, '10'), undefined);
  });
});

describe('objectKey', () => {
  it('is namespace/name for namespaced objects and name for cluster-scoped ones', () => {
    assert.equal(objectKey(cm('a', '1')), 'ns/a');
    assert.equal(objectKey({ metadata: { name: 'node-1' } }), 'node-1');
  });
});

describe('ObjectStore', () => {
  it('deep-freezes objects and strips managedFields on ingest', () => {
    const store = new ObjectStore<Obj>();
    store.apply(cm('a', '1', { data: { k: 'v' } }));
    const got = store.get('ns/a');
    assert.ok(got !== undefined);
    assert.equal(got.metadata?.managedFields, undefined);
    assert.equal('managedFields' in (got.metadata ?? {}), false);
    assert.ok(Object.isFrozen(got) && Object.isFrozen(got.metadata) && Object.isFrozen(got.data));
    assert.ok(Object.isFrozen(got.metadata?.ownerReferences));
    assert.throws(() => {
      (got.data as Record<string, string>)['k'] = 'changed';
    }, TypeError);
    assert.ok(Object.isFrozen(store.list()));
  });

  it('reports add, then update with the old and new object, then delete', () => {
    const store = new ObjectStore<Obj>();
    assert.deepEqual(
      store.apply(cm('a', '1')).map((d) => d.type),
      ['add'],
    );
    const [upd] = store.apply(cm('a', '2', { data: { k: 'v2' } }));
    assert.ok(upd?.type === 'update');
    assert.equal(upd.old.metadata?.resourceVersion, '1');
    assert.equal(upd.obj.data?.['k'], 'v2');
    assert.deepEqual(store.remove(cm('a', '3')), [{ type: 'delete', obj: ingest(cm('a', '3')), finalStateUnknown: false }]);
    assert.equal(store.get('ns/a'), undefined);
  });

  it('ignores an update whose resourceVersion did not change', () => {
    const store = new ObjectStore<Obj>();
    store.apply(cm('a', '5'));
    assert.deepEqual(store.apply(cm('a', '5', { data: { k: 'v' } })), []);
    assert.equal(store.get('ns/a')?.data, undefined);
  });

  it('never lets an older resourceVersion overwrite a newer one (10 is newer than 9)', () => {
    const store = new ObjectStore<Obj>();
    store.apply(cm('a', '10', { data: { k: 'new' } }));
    assert.deepEqual(store.apply(cm('a', '9', { data: { k: 'old' } })), []);
    assert.deepEqual(store.remove(cm('a', '9')), []);
    assert.equal(store.get('ns/a')?.data?.['k'], 'new');
  });

  it('treats a new UID under the same key as delete of the old object and add of the new', () => {
    const store = new ObjectStore<Obj>();
    store.apply(cm('a', '1', { uid: 'first' }));
    const deltas = store.apply(cm('a', '7', { uid: 'second' }));
    assert.deepEqual(
      deltas.map((d) => `${d.type}:${d.obj.metadata?.uid}`),
      ['delete:first', 'add:second'],
    );
    assert.deepEqual(store.remove(cm('a', '8', { uid: 'first' })), [], 'a delete of the old incarnation is ignored');
  });

  it('replaces the contents on relist: tombstones for vanished objects, updates for changed, nothing for unchanged', () => {
    const store = new ObjectStore<Obj>(indexers);
    store.apply(cm('keep', '1'));
    store.apply(cm('change', '2'));
    store.apply(cm('gone', '3', { owners: ['o1'] }));
    const seen: string[] = [];
    const deltas = store.replace([cm('keep', '1'), cm('change', '8'), cm('new', '9')]);
    for (const d of deltas) seen.push(`${d.type}:${d.obj.metadata?.name}${d.type === 'update' ? `:${d.old.metadata?.resourceVersion}->${d.obj.metadata?.resourceVersion}` : ''}`);
    assert.deepEqual(seen.sort(), ['add:new', 'delete:gone', 'update:change:2->8']);
    const tomb = deltas.find((d) => d.type === 'delete');
    assert.ok(tomb?.type === 'delete' && tomb.finalStateUnknown);
    assert.equal(tomb.obj.metadata?.resourceVersion, '3', 'the tombstone carries the last state seen');
    assert.deepEqual(names(store.list()), ['change', 'keep', 'new']);
    assert.deepEqual(store.byIndex('owner', 'o1'), []);
  });

  it("a relist is the server's state: an older resourceVersion than the cached one replaces it (an etcd restore)", () => {
    const store = new ObjectStore<Obj>(indexers);
    store.apply(cm('a', '100', { owners: ['o1'] }));
    const deltas = store.replace([cm('a', '40', { owners: ['o2'] })]);
    assert.deepEqual(
      deltas.map((d) => `${d.type}:${d.type === 'update' ? `${d.old.metadata?.resourceVersion}->` : ''}${d.obj.metadata?.resourceVersion}`),
      ['update:100->40'],
    );
    assert.equal(store.get('ns/a')?.metadata?.resourceVersion, '40');
    assert.deepEqual(names(store.byIndex('owner', 'o2')), ['a']);
    assert.deepEqual(
      store.apply(cm('a', '41', { owners: ['o2'] })).map((d) => d.type),
      ['update'],
      'the watch goes on from the restored version',
    );
  });

  it('relist with nothing yields a tombstone for everything and an empty store', () => {
    const store = new ObjectStore<Obj>();
    store.apply(cm('a', '1'));
    store.apply(cm('b', '2'));
    assert.deepEqual(
      store.replace([]).map((d) => d.type),
      ['delete', 'delete'],
    );
    assert.equal(store.size, 0);
  });

  it('maintains indexes through add, update (value changes), delete and replace', () => {
    const store = new ObjectStore<Obj>(indexers);
    store.apply(cm('a', '1', { owners: ['o1'] }));
    store.apply(cm('b', '1', { owners: ['o1', 'o2'] }));
    store.apply(cm('c', '1', { ns: 'other', owners: ['o2'] }));
    assert.deepEqual(names(store.byIndex('owner', 'o1')), ['a', 'b']);
    assert.deepEqual(names(store.byIndex('owner', 'o2')), ['b', 'c']);
    assert.deepEqual(names(store.byIndex('namespace', 'other')), ['c']);

    store.apply(cm('b', '2', { owners: ['o2'] })); // b released by o1
    assert.deepEqual(names(store.byIndex('owner', 'o1')), ['a']);
    store.remove(cm('a', '3'));
    assert.deepEqual(store.byIndex('owner', 'o1'), []);
    store.replace([cm('c', '1', { ns: 'other', owners: ['o2'] }), cm('d', '5', { owners: ['o1'] })]);
    assert.deepEqual(names(store.byIndex('owner', 'o1')), ['d']);
    assert.deepEqual(names(store.byIndex('owner', 'o2')), ['c']);
    assert.deepEqual(names(store.byIndex('namespace', 'ns')), ['d']);
  });

  it('fails clearly for an index that was never registered', () => {
    const store = new ObjectStore<Obj>(indexers);
    assert.throws(() => store.byIndex('byLabel', 'x'), /no index named "byLabel"/);
  });
});
