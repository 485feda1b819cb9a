// The controller's revision memo (revision-memo.ts): the same choices as computing every pass, each template
// and revision derived once while the cache holds the same object, and only frozen (cached) objects remembered.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CloneSet } from '../api/cloneset.ts';
import type { ControllerRevision } from '../kube/types.ts';
import { deepFreeze } from '../runtime/store.ts';
import { Interner, shareTemplates } from './cache-transforms.ts';
import { chooseRevisions, newRevision } from './plan/revisions.ts';
import { RevisionMemo } from './revision-memo.ts';

/** The manual's sample CloneSet (plan/revisions.test.ts has the hashes of these templates). */
function sample(image: string, status: CloneSet['status'] = undefined): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'sample', namespace: 'default', uid: 'uid-1', labels: { app: 'sample' } },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'sample' } },
      template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'nginx', image }] } },
    },
    ...(status !== undefined ? { status } : {}),
  };
}

const counts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 };

/** A revision as the cache holds it: parsed from the wire, frozen. */
function cached(cs: CloneSet, number: number, created: string): ControllerRevision {
  const r = newRevision(cs, number, 0);
  return deepFreeze({ ...r, metadata: { ...r.metadata, creationTimestamp: created }, data: JSON.parse(JSON.stringify(r.data)) as unknown });
}

describe('the revision memo', () => {
  const r1 = cached(sample('nginx:alpine'), 1, '2024-01-01T00:00:00Z');
  const r2 = cached(sample('nginx:mainline'), 2, '2024-01-02T00:00:00Z');

  test('chooses what computing on every pass chooses: use, rollback, create', () => {
    const memo = new RevisionMemo();
    const unchanged = deepFreeze(sample('nginx:mainline', { ...counts, currentRevision: 'sample-d4d4fb5bd' }));
    const rollback = deepFreeze(sample('nginx:alpine'));
    const fresh = deepFreeze(sample('nginx:1.27', { ...counts, collisionCount: 2 }));
    for (const cs of [unchanged, rollback, fresh]) {
      // Twice: the second pass answers from the memo.
      assert.deepEqual(chooseRevisions(cs, [r1, r2], {}, memo), chooseRevisions(cs, [r1, r2]));
      assert.deepEqual(chooseRevisions(cs, [r1, r2], {}, memo), chooseRevisions(cs, [r1, r2]));
    }
    const choice = chooseRevisions(fresh, [r1, r2], {}, memo);
    assert.equal(choice.kind, 'create');
    assert.equal(choice.kind === 'create' ? choice.candidate.metadata.name : '', 'sample-b94c44bf');
    assert.equal(chooseRevisions(unchanged, [r1, r2], {}, memo).kind, 'use');
    assert.equal(chooseRevisions(rollback, [r1, r2], {}, memo).kind, 'bumpExisting');
  });

  test('a template that stays the same object is derived once, whatever else of the CloneSet changes', () => {
    const memo = new RevisionMemo();
    const first = deepFreeze(sample('nginx:alpine'));
    const statusWrite = deepFreeze({ ...first, status: { ...counts, replicas: 5, collisionCount: 1 } });
    const data = memo.templateData(first);
    assert.equal(memo.templateData(statusWrite), data);
    assert.equal(data.hash(0), 'd4d4fb5bd');
    assert.equal(data.hash(1), data.hash(1));
    assert.equal(memo.dataBytes(r1), memo.dataBytes(r1));
    assert.ok(Object.isFrozen(data.object), 'the data handed to every candidate revision is frozen');
  });

  test('an object that is not frozen (not from the cache) is derived again every time', () => {
    const memo = new RevisionMemo();
    const container = { name: 'nginx', image: 'nginx:alpine' };
    const cs: CloneSet = { ...sample(''), spec: { ...sample('').spec, template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [container] } } } };
    assert.notEqual(memo.templateData(cs), memo.templateData(cs));
    assert.equal(memo.templateData(cs).hash(0), 'd4d4fb5bd');
    container.image = 'nginx:mainline';
    assert.equal(memo.templateData(cs).hash(0), '56dfb978d4');
  });

  test('the CloneSet cache transform hands an unchanged template over to the next version, and a changed one not', () => {
    const templates = new Interner();
    const v1 = deepFreeze(shareTemplates(sample('nginx:alpine'), templates));
    const statusWrite = deepFreeze(shareTemplates(sample('nginx:alpine', { ...counts, replicas: 5 }), templates));
    const edit = deepFreeze(shareTemplates(sample('nginx:mainline'), templates));
    assert.equal(statusWrite.spec.template, v1.spec.template);
    assert.notEqual(edit.spec.template, v1.spec.template);
    assert.equal(edit.spec.template.spec?.containers[0]?.image, 'nginx:mainline');
    const memo = new RevisionMemo();
    assert.equal(memo.templateData(statusWrite), memo.templateData(v1));
  });
});
