// revisionsOf (snapshot.ts): a CloneSet's revisions are the ones it controls and the orphans of its namespace that
// its selector matches, read from the owner and orphan indexes: the same set as filtering the whole namespace.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { CloneSet } from '../api/cloneset.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { labelSelectorMatcher } from '../kube/selectors.ts';
import type { ControllerRevision, Node, OwnerReference, PersistentVolumeClaim, Pod } from '../kube/types.ts';
import { indexByNamespace, indexByOwnerUid, ObjectStore } from '../runtime/store.ts';
import { aCloneSet } from './plan/testing/builders.ts';
import { type CloneSetStores, INDEX_ORPHAN_NAMESPACE, INDEX_OWNER_UID, indexOrphansByNamespace, revisionsOf } from './snapshot.ts';

/** The stores as the manager registers them, holding `revisions`. */
function storesWith(revisions: readonly ControllerRevision[]): CloneSetStores & { readonly revisions: ObjectStore<ControllerRevision> } {
  const store = new ObjectStore<ControllerRevision>({ [INDEX_OWNER_UID]: indexByOwnerUid, [INDEX_ORPHAN_NAMESPACE]: indexOrphansByNamespace });
  store.replace(revisions);
  return { cloneSets: new ObjectStore<CloneSet>(), pods: new ObjectStore<Pod>(), pvcs: new ObjectStore<PersistentVolumeClaim>(), revisions: store, nodes: new ObjectStore<Node>() };
}

const owner = (uid: string, controller: boolean): OwnerReference => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: `cs-${uid}`, uid, controller });

function aRevision(name: string, opts: { readonly namespace?: string; readonly app: string; readonly owners?: readonly OwnerReference[] }): ControllerRevision {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      uid: `uid-${opts.namespace ?? 'default'}-${name}`,
      resourceVersion: '1',
      labels: { app: opts.app },
      ...(opts.owners !== undefined ? { ownerReferences: [...opts.owners] } : {}),
    },
    revision: 1,
    data: {},
  };
}

const names = (revs: readonly ControllerRevision[]): string[] => revs.map((r) => r.metadata.name ?? '').sort();

describe('the revisions of a CloneSet', () => {
  const web = aCloneSet('web').build();
  const webUid = web.metadata.uid ?? '';

  test('are the ones it controls and the orphans its selector matches in its namespace', () => {
    const stores = storesWith([
      aRevision('web-1', { app: 'web', owners: [owner(webUid, true)] }),
      aRevision('web-orphan', { app: 'web' }),
      aRevision('api-1', { app: 'api', owners: [owner('uid-api', true)] }),
      aRevision('api-orphan', { app: 'api' }),
      aRevision('web-elsewhere', { namespace: 'other', app: 'web' }),
    ]);
    assert.deepEqual(names(revisionsOf(stores, web)), ['web-1', 'web-orphan']);
  });

  test('leave out a revision another CloneSet controls, even one its selector matches or that names this one as an owner', () => {
    const stores = storesWith([
      aRevision('taken', { app: 'web', owners: [owner('uid-other', true)] }),
      aRevision('taken-shared', { app: 'web', owners: [owner(webUid, false), owner('uid-other', true)] }),
    ]);
    assert.deepEqual(revisionsOf(stores, web), []);
  });

  test('leave out a revision it controls that its selector no longer matches', () => {
    const stores = storesWith([aRevision('web-1', { app: 'old-web', owners: [owner(webUid, true)] })]);
    assert.deepEqual(revisionsOf(stores, web), []);
  });

  test('list an orphan that names this CloneSet as a mere owner once', () => {
    const stores = storesWith([aRevision('shared', { app: 'web', owners: [owner(webUid, false)] })]);
    assert.deepEqual(names(revisionsOf(stores, web)), ['shared']);
  });

  test('follow a revision that is released, then adopted by another CloneSet', () => {
    const controlled = aRevision('web-1', { app: 'web', owners: [owner(webUid, true)] });
    const stores = storesWith([controlled]);
    const released: ControllerRevision = { ...controlled, metadata: { ...controlled.metadata, resourceVersion: '2', ownerReferences: [] } };
    stores.revisions.apply(released);
    assert.deepEqual(names(revisionsOf(stores, web)), ['web-1'], 'an orphan now');
    stores.revisions.apply({ ...released, metadata: { ...released.metadata, resourceVersion: '3', ownerReferences: [owner('uid-other', true)] } });
    assert.deepEqual(revisionsOf(stores, web), [], 'adopted by the other CloneSet');
  });

  test('property: the same set as filtering every revision of the namespace', () => {
    const uids = [webUid, 'uid-api', 'uid-other'];
    const arbRevision = fc.record({
      namespace: fc.constantFrom('default', 'other'),
      app: fc.constantFrom('web', 'api'),
      owners: fc.uniqueArray(fc.record({ uid: fc.constantFrom(...uids), controller: fc.boolean() }), { maxLength: 2, selector: (o) => o.uid }),
    });
    fc.assert(
      fc.property(fc.array(arbRevision, { maxLength: 12 }), (specs) => {
        // The API server allows at most one controller reference: the later ones are plain owners here.
        const revisions = specs.map((s, i) =>
          aRevision(`r${i}`, { namespace: s.namespace, app: s.app, owners: s.owners.map((o, j) => owner(o.uid, o.controller && s.owners.findIndex((p) => p.controller) === j)) }),
        );
        const byNamespace = new ObjectStore<ControllerRevision>({ namespace: indexByNamespace });
        byNamespace.replace(revisions);
        const selects = labelSelectorMatcher(web.spec.selector);
        const scanned = byNamespace.byIndex('namespace', 'default').filter((r) => {
          const ref = controllerRefOf(r);
          return (ref === undefined || ref.uid === webUid) && selects(r.metadata.labels);
        });
        assert.deepEqual(names(revisionsOf(storesWith(revisions), web)), names(scanned));
      }),
      { numRuns: 300 },
    );
  });
});
