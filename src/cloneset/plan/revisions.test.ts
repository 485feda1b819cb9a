import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import {
  chooseRevisions,
  encodeControllerRevision,
  equalRevision,
  findEqualRevisions,
  hashRevision,
  newRevision,
  nextRevisionNumber,
  renameForCollision,
  revisionData,
  revisionDataBytes,
  revisionName,
  sortRevisions,
  templateFromRevision,
  volumeClaimTemplatesHash,
} from './revisions.ts';
import { defaultPodTemplate } from '../../api/defaults.ts';
import type { CloneSet } from '../../api/cloneset.ts';
import type { ControllerRevision, PodTemplateSpec } from '../../kube/types.ts';

/** The manual's sample CloneSet, as stored without a mutating webhook (no defaults). */
function sample(image: string, extra: Record<string, unknown> = {}): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'sample', namespace: 'default', uid: 'uid-1', labels: { app: 'sample' }, annotations: { note: 'x' } },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'sample' } },
      template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'nginx', image, ...extra }] } },
    },
  };
}

function withTemplate(cs: CloneSet, template: PodTemplateSpec): CloneSet {
  return { ...cs, spec: { ...cs.spec, template } };
}

const counts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 };

const SAMPLE_DATA =
  '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"sample"}},"spec":{"containers":[{"image":"nginx:alpine","imagePullPolicy":"Always","name":"nginx","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}';

describe('revision data and hash (docs/features.md#revisions)', () => {
  test('the sample data bytes, from the object without defaults', () => {
    assert.equal(revisionData(sample('nginx:alpine')), SAMPLE_DATA);
  });

  const vectors: [string, Record<string, unknown>, number, string][] = [
    ['nginx:alpine', {}, 0, 'd4d4fb5bd'],
    ['nginx:mainline', {}, 0, '56dfb978d4'],
    ['nginx:mainline', {}, 1, '56dfb978d5'],
    ['nginx:alpine', { env: [{ name: 'A', value: 'x<y&z' }] }, 0, '6fb4945ddc'],
    ['nginx:alpine', { env: [{ name: 'A', value: 'x<y&z' }] }, 1, '6fb4945ddb'],
  ];
  for (const [image, extra, collision, hash] of vectors) {
    test(`${image} ${JSON.stringify(extra)} collision ${collision} → ${hash}`, () => {
      const raw = sample(image, extra);
      assert.equal(hashRevision(revisionData(raw), collision), hash);
      // Same result from an already-defaulted template (as Kruise's webhook stores it).
      const defaulted = withTemplate(raw, defaultPodTemplate(raw.spec.template));
      assert.equal(hashRevision(revisionData(defaulted), collision), hash);
      assert.equal(hashRevision(revisionData(defaulted, { applyDefaults: false }), collision), hash);
    });
  }

  test('config/samples/cloneset-sample.yaml hashes to sample-d4d4fb5bd', () => {
    const cs = parse(readFileSync(resolve(import.meta.dirname, '../../../config/samples/cloneset-sample.yaml'), 'utf8')) as CloneSet;
    assert.equal(newRevision(cs, 1, 0).metadata.name, 'sample-d4d4fb5bd');
  });

  test('the uint32 behind d4d4fb5bd is 808096168; data with env escapes HTML characters', () => {
    assert.equal(hashRevision(SAMPLE_DATA, 0), 'd4d4fb5bd');
    assert.ok(revisionData(sample('nginx:alpine', { env: [{ name: 'A', value: 'x<y&z' }] })).includes('x\\u003cy\\u0026z'));
  });

  test('without collision count nothing is appended', () => {
    assert.notEqual(hashRevision(SAMPLE_DATA, undefined), hashRevision(SAMPLE_DATA, 0));
  });

  test('a change outside the template does not change the data', () => {
    const a = sample('nginx:alpine');
    const b: CloneSet = { ...a, spec: { ...a.spec, replicas: 9, updateStrategy: { partition: 3 } } };
    assert.equal(revisionData(a), revisionData(b));
  });

  test('names truncate the CloneSet name to 223 characters', () => {
    assert.equal(revisionName('x'.repeat(300), 'abc'), `${'x'.repeat(223)}-abc`);
  });
});

describe('volume claim template hash (docs/features.md#revisions)', () => {
  test('test vectors', () => {
    assert.equal(volumeClaimTemplatesHash(undefined), '');
    assert.equal(volumeClaimTemplatesHash([]), '');
    assert.equal(
      volumeClaimTemplatesHash([
        {
          metadata: { name: 'pvc-1' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' }, limits: { storage: '2Gi' } } },
        },
      ]),
      '1129974074',
    );
    assert.equal(
      volumeClaimTemplatesHash([
        {
          metadata: { name: 'data-vol', labels: { ignored: 'yes' } },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } },
        },
      ]),
      '16312009',
    );
  });
  test('order of templates does not matter (sorted by name)', () => {
    const a = { metadata: { name: 'a' }, spec: { accessModes: ['ReadWriteOnce'] } };
    const b = { metadata: { name: 'b' }, spec: { accessModes: ['ReadOnlyMany'] } };
    assert.equal(volumeClaimTemplatesHash([a, b]), volumeClaimTemplatesHash([b, a]));
  });
});

describe('newRevision (docs/features.md#revisions)', () => {
  test('shape of the object', () => {
    const rev = newRevision(sample('nginx:alpine'), 3, 0);
    assert.deepEqual(rev.metadata, {
      name: 'sample-d4d4fb5bd',
      namespace: 'default',
      labels: { app: 'sample', 'controller.kubernetes.io/hash': 'd4d4fb5bd' },
      annotations: { note: 'x', 'kruise.io/cloneset-volumeclaimtemplate-hash': '' },
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'sample', uid: 'uid-1', controller: true, blockOwnerDeletion: true }],
    });
    assert.equal(rev.revision, 3);
    assert.equal(rev.apiVersion, 'apps/v1');
    assert.equal(revisionDataBytes(rev), SAMPLE_DATA);
  });

  test('renameForCollision changes the name but keeps the hash label', () => {
    const cs = sample('nginx:mainline');
    const rev = renameForCollision(newRevision(cs, 1, 0), 'sample', 1);
    assert.equal(rev.metadata.name, 'sample-56dfb978d5');
    assert.equal(rev.metadata.labels?.['controller.kubernetes.io/hash'], '56dfb978d4');
  });

  test('encodeControllerRevision embeds the exact data bytes', () => {
    const rev = newRevision(sample('nginx:alpine', { env: [{ name: 'A', value: 'x<y&z' }] }), 1, 0);
    const body = encodeControllerRevision(rev);
    assert.ok(body.includes(`"data":${revisionDataBytes(rev)}`));
    assert.ok(body.includes('x\\u003cy\\u0026z'));
    assert.deepEqual(JSON.parse(body), JSON.parse(JSON.stringify(rev)));
  });

  test('templateFromRevision gives back the (defaulted) template', () => {
    const rev = newRevision(sample('nginx:alpine'), 1, 0);
    const t = templateFromRevision(rev);
    assert.equal(t?.spec.containers[0]?.image, 'nginx:alpine');
    assert.equal(t?.spec.containers[0]?.imagePullPolicy, 'Always');
    assert.ok(t !== undefined && !('$patch' in t));
    assert.equal(templateFromRevision({ metadata: {}, revision: 1, data: 'x' }), undefined);
  });
});

function listed(cs: CloneSet, number: number, created: string, extra: Partial<ControllerRevision> = {}): ControllerRevision {
  const r = newRevision(cs, number, 0);
  // As listed from the API server: data is parsed JSON, key order may differ.
  return { ...r, ...extra, metadata: { ...r.metadata, creationTimestamp: created, ...(extra.metadata ?? {}) }, data: JSON.parse(JSON.stringify(r.data)) };
}

describe('ordering and equality (docs/features.md#revisions)', () => {
  const a = listed(sample('a:1'), 1, '2024-01-01T00:00:00Z');
  const b = listed(sample('b:1'), 2, '2024-01-01T00:00:00Z');
  const c = listed(sample('c:1'), 2, '2023-01-01T00:00:00Z');

  test('sort by revision, then creation time, then name', () => {
    assert.deepEqual(
      sortRevisions([b, a, c]).map((r) => r.metadata.name),
      [a, c, b].map((r) => r.metadata.name),
    );
    const x = { ...b, metadata: { ...b.metadata, name: 'sample-x' } };
    const y = { ...b, metadata: { ...b.metadata, name: 'sample-y' } };
    assert.deepEqual(
      sortRevisions([y, x]).map((r) => r.metadata.name),
      ['sample-x', 'sample-y'],
    );
  });

  test('equality is by data bytes; differing numeric hash labels are never equal', () => {
    const a2 = listed(sample('a:1'), 7, '2024-05-01T00:00:00Z');
    assert.ok(equalRevision(a, a2));
    assert.ok(!equalRevision(a, b));
    const numeric = (r: ControllerRevision, h: string): ControllerRevision => ({ ...r, metadata: { ...r.metadata, labels: { 'controller.kubernetes.io/hash': h } } });
    assert.ok(!equalRevision(numeric(a, '444'), numeric(a2, '445')));
    assert.ok(equalRevision(numeric(a, '444'), numeric(a2, '444')));
    assert.ok(equalRevision(numeric(a, '444'), numeric(a2, 'abc')));
    assert.deepEqual(
      findEqualRevisions([a, b, a2], a).map((r) => r.revision),
      [1, 7],
    );
  });

  test('next revision number', () => {
    assert.equal(nextRevisionNumber([]), 1);
    assert.equal(nextRevisionNumber([b, a]), 3);
  });
});

describe('chooseRevisions (docs/features.md#revisions)', () => {
  const v1 = sample('nginx:alpine');
  const v2 = sample('nginx:mainline');
  const r1 = listed(v1, 1, '2024-01-01T00:00:00Z');
  const r2 = listed(v2, 2, '2024-01-02T00:00:00Z');

  test('no revisions: create the candidate; current is the update revision', () => {
    const choice = chooseRevisions(v1, []);
    assert.equal(choice.kind, 'create');
    if (choice.kind !== 'create') return;
    assert.equal(choice.candidate.metadata.name, 'sample-d4d4fb5bd');
    assert.equal(choice.candidate.revision, 1);
    assert.equal(choice.current, undefined);
    assert.equal(choice.collisionCount, 0);
  });

  test('template unchanged: use the newest revision, no API call', () => {
    const cs: CloneSet = { ...v2, status: { ...counts, currentRevision: r1.metadata.name ?? '' } };
    const choice = chooseRevisions(cs, [r2, r1]);
    assert.equal(choice.kind, 'use');
    if (choice.kind !== 'use') return;
    assert.equal(choice.update, r2);
    assert.equal(choice.current, r1);
  });

  test('rollback to an older revision: bump its number and refresh the VCT hash', () => {
    const stale = { ...r1, metadata: { ...r1.metadata, annotations: { note: 'x' } } };
    const choice = chooseRevisions(v1, [stale, r2]);
    assert.equal(choice.kind, 'bumpExisting');
    if (choice.kind !== 'bumpExisting') return;
    assert.equal(choice.revision, stale);
    assert.equal(choice.newNumber, 3);
    assert.equal(choice.updated.revision, 3);
    assert.equal(choice.updated.metadata.annotations?.['kruise.io/cloneset-volumeclaimtemplate-hash'], '');
    assert.equal(choice.updated.metadata.name, r1.metadata.name);
  });

  test('new template: create with the status collision count', () => {
    const v3 = sample('nginx:1.27');
    const cs: CloneSet = { ...v3, status: { ...counts, collisionCount: 2, currentRevision: r2.metadata.name ?? '' } };
    const choice = chooseRevisions(cs, [r1, r2]);
    assert.equal(choice.kind, 'create');
    if (choice.kind !== 'create') return;
    assert.equal(choice.collisionCount, 2);
    assert.equal(choice.candidate.revision, 3);
    // nginx:1.27's revision is sample-b94c44c5 at collision count 0, another name at 2
    assert.equal(choice.candidate.metadata.name, 'sample-b94c44bf');
    assert.equal(choice.current, r2);
  });
});
