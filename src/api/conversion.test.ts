import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ANNOTATION_LOST_FIELDS, cloneSetFromV1beta1, cloneSetToV1beta1, convertCloneSet, hasRollingUpdate } from './conversion.ts';
import type { CloneSetV1beta1 } from './cloneset-v1beta1.ts';

const A = 'apps.kruise.io/v1alpha1';
const B = 'apps.kruise.io/v1beta1';
const LABEL_EXCLUDE = 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';
const ANN_PAR = 'apps.kruise.io/image-predownload-parallelism';
const ANN_TIMEOUT = 'apps.kruise.io/image-predownload-timeout-seconds';
const ANN_MIN = 'apps.kruise.io/image-predownload-min-updated-ready-pods';

const base = {
  replicas: 3,
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
};
const alpha = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: A,
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns', ...metadata },
  spec: { ...base, ...spec },
});
const beta = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> => ({ ...alpha(spec, metadata), apiVersion: B });
const specOf = (o: Record<string, unknown>): Record<string, unknown> => o['spec'] as Record<string, unknown>;
const annotationsOf = (o: Record<string, unknown>): Record<string, string> => ((o['metadata'] as Record<string, unknown>)['annotations'] ?? {}) as Record<string, string>;

describe("Kruise's mapping (docs/features.md#v1beta1-and-conversion)", () => {
  it('maps a v1alpha1 in-place strategy to RollingUpdate with podUpdatePolicy, and PVC reuse to enablePVCReuse', () => {
    const b = convertCloneSet(
      alpha({ updateStrategy: { type: 'InPlaceIfPossible', partition: 2, maxUnavailable: '20%', maxSurge: 0, inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } }),
      B,
    );
    assert.deepEqual(specOf(b)['updateStrategy'], {
      type: 'RollingUpdate',
      rollingUpdate: { partition: 2, maxUnavailable: '20%', maxSurge: 0, podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } },
    });
    assert.deepEqual(specOf(b)['scaleStrategy'], { enablePVCReuse: true });
    assert.equal(annotationsOf(b)[ANNOTATION_LOST_FIELDS], undefined, 'nothing lost, nothing remembered');
  });

  it('turns the v1alpha1 exclude label and pre-download annotations into v1beta1 fields, dropping a percent min-ready value', () => {
    const b = convertCloneSet(
      alpha({ scaleStrategy: { disablePVCReuse: true } }, { labels: { [LABEL_EXCLUDE]: 'true' }, annotations: { [ANN_PAR]: '50%', [ANN_TIMEOUT]: '600', [ANN_MIN]: '50%' } }),
      B,
    );
    assert.deepEqual(specOf(b)['scaleStrategy'], { enablePVCReuse: false, excludePreparingDelete: true });
    const ru = (specOf(b)['updateStrategy'] as Record<string, Record<string, unknown>>)['rollingUpdate'];
    assert.deepEqual(ru?.['inPlaceUpdateStrategy'], { imagePreDownloadParallelism: '50%', imagePreDownloadTimeoutSeconds: 600 });
    assert.equal(annotationsOf(b)[ANN_MIN], '50%', 'metadata is copied as-is');
  });

  it('maps v1beta1 OnDelete to v1alpha1 OnDelete and writes pre-download fields back as annotations', () => {
    const a = convertCloneSet(
      beta({
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceOnly', partition: 1, inPlaceUpdateStrategy: { imagePreDownloadParallelism: 3 } } },
      }),
      A,
    );
    assert.deepEqual(specOf(a)['updateStrategy'], { type: 'InPlaceOnly', partition: 1, inPlaceUpdateStrategy: {} });
    assert.equal(annotationsOf(a)[ANN_PAR], '3');
    assert.deepEqual(specOf(a)['scaleStrategy'], { disablePVCReuse: true }, 'v1beta1 reuse is off by default');
    const onDelete = convertCloneSet(beta({ updateStrategy: { type: 'OnDelete' }, scaleStrategy: { enablePVCReuse: true } }), A);
    assert.deepEqual(specOf(onDelete)['updateStrategy'], { type: 'OnDelete' });
    assert.equal(specOf(onDelete)['scaleStrategy'], undefined, 'an empty scale strategy is left out');
  });

  it('keeps what Kruise loses: a v1alpha1 OnDelete with a partition comes back with it', () => {
    const original = alpha({ updateStrategy: { type: 'OnDelete', partition: 3, maxUnavailable: 1 } });
    const b = convertCloneSet(original, B);
    assert.deepEqual(specOf(b)['updateStrategy'], { type: 'OnDelete' }, 'the stored object is what Kruise stores');
    assert.ok(annotationsOf(b)[ANNOTATION_LOST_FIELDS] !== undefined);
    assert.deepEqual(convertCloneSet(b, A), original);
  });

  it('drops remembered values once the strategy was changed through the other version', () => {
    const b = convertCloneSet(alpha({ updateStrategy: { type: 'OnDelete', partition: 3 } }), B);
    const edited = { ...b, spec: { ...specOf(b), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 1 } } } };
    const a = convertCloneSet(edited, A);
    assert.deepEqual(specOf(a)['updateStrategy'], { type: 'ReCreate', partition: 1 });
  });

  it('keeps remembered values when only podsToDelete or replicas changed', () => {
    const original = alpha({ updateStrategy: { type: 'OnDelete', partition: 3 } });
    const b = convertCloneSet(original, B);
    const edited = { ...b, spec: { ...specOf(b), replicas: 5, scaleStrategy: { ...(specOf(b)['scaleStrategy'] as object), podsToDelete: ['web-x'] } } };
    const a = convertCloneSet(edited, A);
    assert.deepEqual(specOf(a)['updateStrategy'], { type: 'OnDelete', partition: 3 });
    assert.deepEqual(specOf(a)['scaleStrategy'], { podsToDelete: ['web-x'] });
  });

  it('rejects versions it does not convert, saying which it does', () => {
    assert.throws(() => convertCloneSet(alpha({}), 'apps.kruise.io/v2'), /use one of apps.kruise.io\/v1alpha1, apps.kruise.io\/v1beta1/);
    assert.throws(() => convertCloneSet({ ...alpha({}), apiVersion: 'apps/v1' }, B), /apiVersion "apps\/v1"/);
  });

  it('never mutates its input', () => {
    const input = alpha({ updateStrategy: { type: 'OnDelete', partition: 3 } }, { annotations: { [ANN_PAR]: '2' } });
    const before = structuredClone(input);
    convertCloneSet(convertCloneSet(input, B), A);
    assert.deepEqual(input, before);
  });
});

// ---------------------------------------------------------------------------------------------------
// Property: random objects of either version survive A→B→A unchanged.

const intOrString = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom('0', '5', '007', '20%', '12.5%', 'x', ''));
const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });
const compact = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const nonEmpty = <T extends object>(o: T | undefined): T | undefined => (o !== undefined && Object.keys(o).length > 0 ? o : undefined);
const annotationValue = fc.constantFrom('', '3', '50%', '007', 'abc', '+4', '-1', '99999999999');

const ipus = fc
  .record({
    gracePeriodSeconds: opt(fc.integer({ min: 0, max: 30 })),
    imagePreDownloadParallelism: opt(intOrString),
    imagePreDownloadTimeoutSeconds: opt(fc.integer({ min: 0, max: 600 })),
    imagePreDownloadMinUpdatedReadyPods: opt(fc.integer({ min: 0, max: 5 })),
  })
  .map(compact);
const priority = fc.constantFrom({ orderPriority: [{ orderedKey: 'k' }] }, { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { a: 'b' } } }] });
const scatter = fc.constant([{ key: 'zone', value: 'a' }]);
const strategyFields = {
  partition: opt(intOrString),
  maxUnavailable: opt(intOrString),
  maxSurge: opt(intOrString),
  paused: opt(fc.boolean()),
  priorityStrategy: opt(priority),
  scatterStrategy: opt(scatter),
  inPlaceUpdateStrategy: opt(ipus),
};
const metadata = fc
  .record({
    labels: opt(fc.dictionary(fc.constantFrom('app', LABEL_EXCLUDE), fc.constantFrom('true', 'false', 'web'), { noNullPrototype: true })),
    annotations: opt(fc.dictionary(fc.constantFrom(ANN_PAR, ANN_TIMEOUT, ANN_MIN, 'note'), annotationValue, { noNullPrototype: true })),
  })
  // An empty map is not kept (the API server drops empty labels/annotations maps anyway).
  .map((m) => ({ name: 'web', namespace: 'ns', ...compact({ labels: nonEmpty(m.labels), annotations: nonEmpty(m.annotations) }) }));
const status = opt(
  fc.record({
    replicas: fc.nat(5),
    readyReplicas: fc.nat(5),
    availableReplicas: fc.nat(5),
    updatedReplicas: fc.nat(5),
    updatedReadyReplicas: fc.nat(5),
    updateRevision: fc.constant('web-abc'),
  }),
);

const alphaObject = fc
  .record({
    metadata,
    scaleStrategy: opt(
      fc
        .record({ podsToDelete: opt(fc.constant(['web-1'])), maxUnavailable: opt(intOrString), disablePVCReuse: opt(fc.boolean()), excludePreparingDelete: opt(fc.boolean()) })
        .map(compact),
    ),
    updateStrategy: opt(fc.record({ type: opt(fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', 'OnDelete', '', 'Bogus')), ...strategyFields }).map(compact)),
    progressDeadlineSeconds: opt(fc.integer({ min: 0, max: 600 })),
    status,
  })
  .map(({ metadata: m, status: s, ...spec }) => compact({ apiVersion: A, kind: 'CloneSet', metadata: m, spec: compact({ ...base, ...spec }), status: s }))
  .map((o): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>); // plain objects, as decoded from the wire

const betaObject = fc
  .record({
    metadata,
    scaleStrategy: opt(
      fc
        .record({ podsToDelete: opt(fc.constant(['web-1'])), maxUnavailable: opt(intOrString), enablePVCReuse: opt(fc.boolean()), excludePreparingDelete: opt(fc.boolean()) })
        .map(compact),
    ),
    updateStrategy: opt(
      fc
        .record({
          type: opt(fc.constantFrom('RollingUpdate', 'OnDelete', '')),
          rollingUpdate: opt(fc.record({ podUpdatePolicy: opt(fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', '', 'Bogus')), ...strategyFields }).map(compact)),
        })
        .map(compact),
    ),
    status,
  })
  .map(({ metadata: m, status: s, ...spec }) => compact({ apiVersion: B, kind: 'CloneSet', metadata: m, spec: compact({ ...base, ...spec }), status: s }))
  .map((o): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>); // plain objects, as decoded from the wire

describe('round trip (property)', () => {
  it('v1alpha1 → v1beta1 → v1alpha1 returns the object unchanged', () => {
    fc.assert(
      fc.property(alphaObject, (a) => assert.deepEqual(convertCloneSet(convertCloneSet(a, B), A), a)),
      { numRuns: 2000 },
    );
  });

  it('v1beta1 → v1alpha1 → v1beta1 returns the object unchanged', () => {
    fc.assert(
      fc.property(betaObject, (b) => assert.deepEqual(convertCloneSet(convertCloneSet(b, A), B), b)),
      { numRuns: 2000 },
    );
  });

  it('a second round trip gives the same objects as the first (what is stored is stable)', () => {
    fc.assert(
      fc.property(alphaObject, (a) => {
        const b1 = convertCloneSet(a, B);
        const b2 = convertCloneSet(convertCloneSet(b1, A), B);
        assert.deepEqual(b2, b1);
      }),
      { numRuns: 500 },
    );
  });
});

describe('bad input (property)', () => {
  it('never throws on objects of a supported version, whatever their spec, metadata and annotation hold', () => {
    const junk = fc.anything({ maxDepth: 3 });
    const lost = fc.oneof(fc.string(), fc.constant('{"version":"apps.kruise.io/v1alpha1","guard":"x","ops":[{"p":"not-a-list"}]}'));
    fc.assert(
      fc.property(fc.constantFrom(A, B), fc.constantFrom(A, B), junk, junk, lost, (from, to, spec, labels, annotation) => {
        const obj = { apiVersion: from, kind: 'CloneSet', metadata: { name: 'x', labels, annotations: { [ANNOTATION_LOST_FIELDS]: annotation } }, spec };
        const out = convertCloneSet(obj as Record<string, unknown>, to);
        assert.equal(out['apiVersion'], to);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('internal model', () => {
  it('reads a stored OnDelete CloneSet without rollingUpdate as OnDelete with no rolling-update values', () => {
    const cs = cloneSetFromV1beta1(beta({ updateStrategy: { type: 'OnDelete' }, scaleStrategy: { excludePreparingDelete: true } }) as unknown as CloneSetV1beta1);
    assert.deepEqual(cs.spec.updateStrategy, { type: 'OnDelete' });
    assert.equal(hasRollingUpdate(cs), false);
    assert.deepEqual(cs.spec.scaleStrategy, { disablePVCReuse: true, excludePreparingDelete: true });
  });

  it('keeps pre-download fields as fields and flattens rollingUpdate', () => {
    const cs = cloneSetFromV1beta1(
      beta({
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: '50%', inPlaceUpdateStrategy: { imagePreDownloadParallelism: 2 } },
        },
        scaleStrategy: { enablePVCReuse: true },
      }) as unknown as CloneSetV1beta1,
    );
    assert.deepEqual(cs.spec.updateStrategy, { type: 'InPlaceIfPossible', partition: '50%', inPlaceUpdateStrategy: { imagePreDownloadParallelism: 2 } });
    assert.equal(hasRollingUpdate(cs), true);
    assert.equal(cs.spec.scaleStrategy?.disablePVCReuse, false);
    assert.deepEqual(cloneSetToV1beta1(cs).spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: '50%', inPlaceUpdateStrategy: { imagePreDownloadParallelism: 2 } },
    });
  });
});
