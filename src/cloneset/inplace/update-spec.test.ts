// docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update_defaults.go): which template changes an in-place update can apply, decided on the revisions as stored (the Go-typed,
// defaulted template bytes of revisions.ts), one test per kind of change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../api/cloneset.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../api/well-known.ts';
import type { Container, PodTemplateSpec } from '../../kube/types.ts';
import { newRevision, templateFromRevision } from '../plan/revisions.ts';
import { createJsonPatch } from '../../api/json-diff.ts';
import { calculateUpdateSpec, podQosClass, type InPlaceRevision, type SpecDecision } from './update-spec.ts';

const base: Container = { name: 'app', image: 'nginx:1.25', env: [{ name: 'A', value: '1' }] };

function cloneSetWith(template: PodTemplateSpec, vct?: string): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template,
      ...(vct !== undefined ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: vct } } } }] } : {}),
    },
  };
}

function template(
  containers: readonly Container[],
  labels: Record<string, string> = {},
  annotations?: Record<string, string>,
  extra: Record<string, unknown> = {},
): PodTemplateSpec {
  return {
    metadata: { labels: { app: 'web', ...labels }, ...(annotations !== undefined ? { annotations } : {}) },
    spec: { containers, ...extra },
  };
}

/** The revision as the controller stores and reads it back (defaults applied, Go-typed JSON). */
function revision(t: PodTemplateSpec, vct?: string): InPlaceRevision {
  const rev = newRevision(cloneSetWith(t, vct), 1, 0);
  const tpl = templateFromRevision(rev);
  assert.ok(tpl !== undefined);
  return { name: rev.metadata.name ?? '', template: tpl, vctHash: rev.metadata.annotations?.['kruise.io/cloneset-volumeclaimtemplate-hash'] };
}

function decide(
  from: PodTemplateSpec,
  to: PodTemplateSpec,
  gates: Partial<FeatureGates> = {},
  opts: { vct?: [string, string]; inPlaceOnly?: boolean; grace?: number } = {},
): SpecDecision {
  return calculateUpdateSpec(revision(from, opts.vct?.[0]), revision(to, opts.vct?.[1]), {
    gates: { ...FEATURE_GATE_DEFAULTS, ...gates },
    gracePeriodSeconds: opts.grace ?? 0,
    ignoreVolumeClaimTemplatesHashDiff: opts.inPlaceOnly === true,
  });
}

function inPlace(d: SpecDecision): Extract<SpecDecision, { inPlace: true }>['spec'] {
  assert.ok(d.inPlace, d.inPlace ? '' : d.reason);
  return d.spec;
}

function notInPlace(d: SpecDecision, reason: RegExp): void {
  assert.equal(d.inPlace, false);
  if (!d.inPlace) assert.match(d.reason, reason);
}

const sidecar: Container = { name: 'log', image: 'busybox:1.36' };

describe('calculateUpdateSpec (docs/features.md#in-place-update)', () => {
  test('a container image change is applied in place, named by container', () => {
    const spec = inPlace(decide(template([base, sidecar]), template([base, { ...sidecar, image: 'busybox:1.37' }]), {}, { grace: 7 }));
    assert.deepEqual(spec.containerImages, { log: 'busybox:1.37' });
    assert.equal(spec.graceSeconds, 7);
    assert.equal(spec.metaDataPatch, undefined);
    assert.equal(spec.updateEnvFromMetadata, false);
  });

  test('template labels and annotations are applied in place as a two-way strategic merge patch', () => {
    const spec = inPlace(decide(template([base], { a: '1', gone: 'x' }, { note: 'old' }), template([base], { a: '2', b: 'new' }, { note: 'new' })));
    assert.deepEqual(spec.containerImages, {});
    assert.deepEqual(spec.metaDataPatch, { metadata: { labels: { a: '2', b: 'new', gone: null }, annotations: { note: 'new' } } });
  });

  test('removed template finalizers are deleted with a strategic-merge directive, added ones merged, the rest kept', () => {
    const withFinalizers = (f: string[] | undefined): PodTemplateSpec => ({
      ...template([base]),
      metadata: { labels: { app: 'web' }, ...(f !== undefined ? { finalizers: f } : {}) },
    });
    const spec = inPlace(decide(withFinalizers(['example.com/keep', 'example.com/gone']), withFinalizers(['example.com/new', 'example.com/keep'])));
    assert.deepEqual(spec.metaDataPatch, {
      metadata: {
        '$deleteFromPrimitiveList/finalizers': ['example.com/gone'],
        '$setElementOrder/finalizers': ['example.com/new', 'example.com/keep'],
        finalizers: ['example.com/new'],
      },
    });
    assert.deepEqual(inPlace(decide(withFinalizers(['example.com/gone']), withFinalizers(undefined))).metaDataPatch, { metadata: { finalizers: null } });
    assert.deepEqual(inPlace(decide(withFinalizers(undefined), withFinalizers(['example.com/new']))).metaDataPatch, {
      metadata: { '$setElementOrder/finalizers': ['example.com/new'], finalizers: ['example.com/new'] },
    });
  });

  test('an image plus a label change together are still in place', () => {
    const spec = inPlace(decide(template([base], { v: '1' }), template([{ ...base, image: 'nginx:1.26' }], { v: '2' })));
    assert.deepEqual(spec.containerImages, { app: 'nginx:1.26' });
    assert.deepEqual(spec.metaDataPatch, { metadata: { labels: { v: '2' } } });
  });

  for (const [what, to] of [
    ['an env value', template([{ ...base, env: [{ name: 'A', value: '2' }] }])],
    [
      'an added env var',
      template([
        {
          ...base,
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
      ]),
    ],
    ['the command', template([{ ...base, command: ['sleep', '1'] }])],
    ['an added container', template([base, sidecar])],
    ['an init container image', template([base], {}, undefined, { initContainers: [{ name: 'init', image: 'busybox:2' }] })],
    ['a volume', template([base], {}, undefined, { volumes: [{ name: 'v', emptyDir: {} }] })],
    ['the node selector', template([base], {}, undefined, { nodeSelector: { zone: 'a' } })],
  ] as const) {
    test(`${what} cannot be applied in place`, () => {
      notInPlace(
        decide(template([base], {}, undefined, what === 'an init container image' ? { initContainers: [{ name: 'init', image: 'busybox:1' }] } : {}), to),
        /cannot be applied in place/,
      );
    });
  }

  test('removing a container cannot be applied in place', () => {
    notInPlace(decide(template([base, sidecar]), template([base])), /remove of \/spec\/containers\/1/);
  });

  test('renaming a container cannot be applied in place', () => {
    notInPlace(decide(template([base]), template([{ ...base, name: 'other' }])), /\/spec\/containers\/0\/name/);
  });

  describe('resources (gate InPlaceWorkloadVerticalScaling)', () => {
    const sized = (cpu: string, memory = '128Mi', limitCpu = '500m'): Container => ({
      ...base,
      resources: { requests: { cpu, memory }, limits: { cpu: limitCpu, memory: '256Mi' } },
    });

    test('without the gate a cpu change recreates', () => {
      notInPlace(decide(template([sized('100m')]), template([sized('200m')])), /resources\/requests\/cpu/);
    });

    test('with the gate cpu and memory value changes are in place', () => {
      const spec = inPlace(decide(template([sized('100m')]), template([sized('200m', '200Mi', '1')]), { InPlaceWorkloadVerticalScaling: true }));
      assert.deepEqual(spec.containerResources, { app: { requests: { cpu: '200m', memory: '200Mi' }, limits: { cpu: '1' } } });
      assert.deepEqual(spec.containerImages, {});
    });

    test('a change of QoS class (Burstable → Guaranteed) recreates', () => {
      const guaranteed: Container = { ...base, resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '500m', memory: '256Mi' } } };
      notInPlace(decide(template([sized('100m')]), template([guaranteed]), { InPlaceWorkloadVerticalScaling: true }), /QoS class from Burstable to Guaranteed/);
    });

    test('adding a resource is not a value change', () => {
      const only = (r: Record<string, string>): Container => ({ ...base, resources: { requests: r } });
      notInPlace(decide(template([only({ cpu: '100m' })]), template([only({ cpu: '100m', memory: '1Gi' })]), { InPlaceWorkloadVerticalScaling: true }), /add of/);
    });

    test('other resources than cpu and memory recreate', () => {
      const eph = (v: string): Container => ({ ...base, resources: { requests: { 'ephemeral-storage': v } } });
      notInPlace(decide(template([eph('1Gi')]), template([eph('2Gi')]), { InPlaceWorkloadVerticalScaling: true }), /only cpu and memory/);
    });
  });

  describe('volumeClaimTemplates (gate RecreatePodWhenChangeVCTInCloneSetGate)', () => {
    const from = template([base]);
    const to = template([{ ...base, image: 'nginx:1.26' }]);
    test('a changed claim template hash forces a re-creation', () => {
      notInPlace(decide(from, to, { RecreatePodWhenChangeVCTInCloneSetGate: true }, { vct: ['1Gi', '2Gi'] }), /volumeClaimTemplates changed/);
    });
    test('not for InPlaceOnly', () => {
      inPlace(decide(from, to, { RecreatePodWhenChangeVCTInCloneSetGate: true }, { vct: ['1Gi', '2Gi'], inPlaceOnly: true }));
    });
    test('not without the gate', () => {
      inPlace(decide(from, to, {}, { vct: ['1Gi', '2Gi'] }));
    });
  });

  describe('env from metadata (gate InPlaceUpdateEnvFromMetadata, on by default with KruiseDaemon)', () => {
    const withRef: Container = { ...base, env: [{ name: 'VERSION', valueFrom: { fieldRef: { fieldPath: "metadata.labels['version']" } } }] };
    test('a label read by an env var goes to containerRefMetadata, not to the metadata patch', () => {
      const spec = inPlace(decide(template([withRef, sidecar], { version: 'v1', other: 'a' }), template([withRef, sidecar], { version: 'v2', other: 'b' })));
      assert.deepEqual(spec.containerRefMetadata, { app: { labels: { version: 'v2' } } });
      assert.equal(spec.updateEnvFromMetadata, true);
      assert.deepEqual(spec.metaDataPatch, { metadata: { labels: { other: 'b' } } });
    });
    test('with KruiseDaemon off it is a plain label change', () => {
      const spec = inPlace(decide(template([withRef], { version: 'v1' }), template([withRef], { version: 'v2' }), { KruiseDaemon: false }));
      assert.deepEqual(spec.containerRefMetadata, {});
      assert.equal(spec.updateEnvFromMetadata, false);
      assert.deepEqual(spec.metaDataPatch, { metadata: { labels: { version: 'v2' } } });
    });
  });

  test('a missing revision is never in place', () => {
    const to = revision(template([base]));
    const opts = { gates: FEATURE_GATE_DEFAULTS, gracePeriodSeconds: 0, ignoreVolumeClaimTemplatesHashDiff: false };
    notInPlace(calculateUpdateSpec(undefined, to, opts), /not found/);
    notInPlace(calculateUpdateSpec(to, undefined, opts), /not found/);
  });
});

describe('createJsonPatch', () => {
  test('objects, arrays and type changes', () => {
    assert.deepEqual(createJsonPatch({ a: 1, b: [1, 2, 3], c: { d: 'x' }, n: null }, { a: '1', b: [1, 5], c: {}, e: true, n: null }), [
      { op: 'replace', path: '/a', value: '1' },
      { op: 'replace', path: '/b/1', value: 5 },
      { op: 'remove', path: '/b/2' },
      { op: 'remove', path: '/c/d' },
      { op: 'add', path: '/e', value: true },
    ]);
  });
  test('keys are escaped (RFC 6901)', () => {
    assert.deepEqual(createJsonPatch({ l: { 'a/b~c': '1' } }, { l: { 'a/b~c': '2' } }), [{ op: 'replace', path: '/l/a~1b~0c', value: '2' }]);
  });
});

describe('podQosClass', () => {
  test('BestEffort, Burstable, Guaranteed', () => {
    assert.equal(podQosClass({ containers: [{ name: 'a' }] }), 'BestEffort');
    assert.equal(podQosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] }), 'Burstable');
    assert.equal(podQosClass({ containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } } }] }), 'Guaranteed');
    assert.equal(
      podQosClass({ containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } }, { name: 'b' }] }),
      'Burstable',
    );
  });
});
