import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../api/cloneset.ts';
import { revisionData } from '../cloneset/plan/revisions.ts';
import { defaultCloneSet, shouldInjectTemplateDefaults } from './mutating.ts';

type Obj = Record<string, unknown>;

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** The user manual's sample as a user writes it. */
const sample = (apiVersion: string, extra: Obj = {}): Obj => ({
  apiVersion,
  kind: 'CloneSet',
  metadata: { name: 'sample', namespace: 'default' },
  spec: {
    replicas: 5,
    selector: { matchLabels: { app: 'sample' } },
    template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
    ...extra,
  },
});

/** The template Kruise stores for the sample: pod defaults plus the Go round-trip (creationTimestamp, resources). */
const storedTemplate = {
  metadata: { creationTimestamp: null, labels: { app: 'sample' } },
  spec: {
    containers: [
      {
        name: 'nginx',
        image: 'nginx:alpine',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'Always',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
  },
};

describe('defaultCloneSet v1beta1', () => {
  test('the manual sample is stored as Kruise stores it: replicas kept, history 10, RollingUpdate/ReCreate, 0/20%/0', () => {
    const out = defaultCloneSet(sample('apps.kruise.io/v1beta1'), 'v1beta1', { injectTemplateDefaults: true });
    assert.deepEqual(out['spec'], {
      replicas: 5,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'sample' } },
      template: storedTemplate,
      scaleStrategy: {},
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
      },
    });
  });

  test('replicas default to 1 and an in-place policy gets an empty inPlaceUpdateStrategy', () => {
    const cs = sample('apps.kruise.io/v1beta1', { updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: '50%' } } });
    delete (cs['spec'] as Obj)['replicas'];
    const spec = defaultCloneSet(cs, 'v1beta1', { injectTemplateDefaults: true })['spec'] as Obj;
    assert.equal(spec['replicas'], 1);
    assert.deepEqual(spec['updateStrategy'], {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: {}, partition: '50%', maxUnavailable: '20%', maxSurge: 0 },
    });
  });

  test('OnDelete gets nothing under rollingUpdate (and no rollingUpdate when there was none)', () => {
    const a = defaultCloneSet(sample('apps.kruise.io/v1beta1', { updateStrategy: { type: 'OnDelete' } }), 'v1beta1', { injectTemplateDefaults: true });
    assert.deepEqual((a['spec'] as Obj)['updateStrategy'], { type: 'OnDelete' });
    const b = defaultCloneSet(sample('apps.kruise.io/v1beta1', { updateStrategy: { type: 'OnDelete', rollingUpdate: { maxSurge: 1 } } }), 'v1beta1', {
      injectTemplateDefaults: true,
    });
    assert.deepEqual((b['spec'] as Obj)['updateStrategy'], { type: 'OnDelete', rollingUpdate: { maxSurge: 1 } });
  });

  test('zero values of omitempty fields disappear as in Go (paused false, minReadySeconds 0, empty lists, null pointers)', () => {
    const cs = sample('apps.kruise.io/v1beta1', {
      minReadySeconds: 0,
      lifecycle: { preDelete: { markPodNotReady: false, finalizersHandler: [] }, inPlaceUpdate: null },
      scaleStrategy: { podsToDelete: [], enablePVCReuse: false, maxUnavailable: null },
      updateStrategy: { rollingUpdate: { paused: false, scatterStrategy: [], priorityStrategy: null } },
    });
    const spec = defaultCloneSet(cs, 'v1beta1', { injectTemplateDefaults: true })['spec'] as Obj;
    assert.equal('minReadySeconds' in spec, false);
    assert.deepEqual(spec['lifecycle'], { preDelete: {} });
    assert.deepEqual(spec['scaleStrategy'], {});
    assert.deepEqual(spec['updateStrategy'], {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
    });
  });

  test('volume claim templates get status.phase Pending and canonical quantities', () => {
    const cs = sample('apps.kruise.io/v1beta1', {
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5Gi' } } } }],
    });
    const spec = defaultCloneSet(cs, 'v1beta1', { injectTemplateDefaults: true })['spec'] as Obj;
    assert.deepEqual(spec['volumeClaimTemplates'], [
      {
        metadata: { name: 'data', creationTimestamp: null },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1536Mi' } } },
        status: { phase: 'Pending' },
      },
    ]);
  });

  test('without template defaults (UPDATE of an unchanged template) the template is only round-tripped', () => {
    const spec = defaultCloneSet(sample('apps.kruise.io/v1beta1'), 'v1beta1', { injectTemplateDefaults: false })['spec'] as Obj;
    assert.deepEqual(spec['template'], {
      metadata: { creationTimestamp: null, labels: { app: 'sample' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:alpine', resources: {} }] },
    });
  });

  test('is pure: frozen input, new output', () => {
    const input = deepFreeze(sample('apps.kruise.io/v1beta1'));
    const out = defaultCloneSet(input, 'v1beta1', { injectTemplateDefaults: true });
    assert.notEqual(out, input);
    assert.equal((input['spec'] as Obj)['revisionHistoryLimit'], undefined);
  });

  test('garbage is left for validation to report instead of throwing', () => {
    for (const spec of [5, 'x', [], { template: 7, updateStrategy: 'x', scaleStrategy: [] }, { template: { spec: { containers: 'no' } } }]) {
      assert.doesNotThrow(() => defaultCloneSet({ spec }, 'v1beta1', { injectTemplateDefaults: true }));
      assert.doesNotThrow(() => defaultCloneSet({ spec }, 'v1alpha1', { injectTemplateDefaults: true }));
    }
  });
});

describe('defaultCloneSet v1alpha1', () => {
  test('the manual sample gets ReCreate with partition 0, maxUnavailable 20%, maxSurge 0 directly under updateStrategy', () => {
    const out = defaultCloneSet(sample('apps.kruise.io/v1alpha1'), 'v1alpha1', { injectTemplateDefaults: true });
    assert.deepEqual(out['spec'], {
      replicas: 5,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'sample' } },
      template: storedTemplate,
      scaleStrategy: {},
      updateStrategy: { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
    });
  });

  test('in-place types get an empty inPlaceUpdateStrategy; explicit values are kept', () => {
    const cs = sample('apps.kruise.io/v1alpha1', { updateStrategy: { type: 'InPlaceOnly', maxUnavailable: 2, partition: '10%' } });
    const spec = defaultCloneSet(cs, 'v1alpha1', { injectTemplateDefaults: true })['spec'] as Obj;
    assert.deepEqual(spec['updateStrategy'], { type: 'InPlaceOnly', inPlaceUpdateStrategy: {}, partition: '10%', maxUnavailable: 2, maxSurge: 0 });
  });
});

describe('shouldInjectTemplateDefaults', () => {
  const gates = { TemplateNoDefaults: false };
  const a = sample('apps.kruise.io/v1beta1');
  const b = sample('apps.kruise.io/v1beta1');
  ((b['spec'] as { template: { spec: { containers: Obj[] } } }).template.spec.containers[0] as Obj)['image'] = 'nginx:1.27';

  test('on CREATE always, on UPDATE only when the decoded template changed, never with TemplateNoDefaults', () => {
    assert.equal(shouldInjectTemplateDefaults({ operation: 'CREATE', object: a }, gates), true);
    assert.equal(shouldInjectTemplateDefaults({ operation: 'UPDATE', object: a, oldObject: structuredClone(a) }, gates), false);
    assert.equal(shouldInjectTemplateDefaults({ operation: 'UPDATE', object: b, oldObject: a }, gates), true);
    assert.equal(shouldInjectTemplateDefaults({ operation: 'CREATE', object: a }, { TemplateNoDefaults: true }), false);
  });

  test('a template that differs only in what Go does not decode (an unknown field) counts as unchanged', () => {
    const c = structuredClone(a);
    (c['spec'] as { template: { spec: Obj } }).template.spec['notAField'] = true;
    assert.equal(shouldInjectTemplateDefaults({ operation: 'UPDATE', object: c, oldObject: a }, gates), false);
  });
});

describe('defaulted objects and revision hashes', () => {
  test("the stored template hashes like the user's template defaulted by the controller (defaults are idempotent)", () => {
    const raw = sample('apps.kruise.io/v1alpha1');
    const spec = raw['spec'] as { template: { spec: { containers: Obj[]; volumes?: unknown } } };
    Object.assign(spec.template.spec.containers[0] ?? {}, {
      ports: [{ containerPort: 80 }],
      resources: { limits: { cpu: '0.5' } },
      readinessProbe: { httpGet: { port: 80 } },
      env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    });
    spec.template.spec.volumes = [{ name: 'cfg', configMap: { name: 'c' } }, { name: 'tmp' }];
    const stored = defaultCloneSet(raw, 'v1alpha1', { injectTemplateDefaults: true });
    const fromRaw = revisionData(raw as unknown as CloneSet);
    assert.equal(revisionData(stored as unknown as CloneSet), fromRaw);
    assert.equal(revisionData(stored as unknown as CloneSet, { applyDefaults: false }), fromRaw);
  });
});
