// Bad input never hurts: 10 000 random CloneSets of both versions — mostly plausible, with
// wrong values and wrong JSON types mixed in at every level — go through defaulting and validation (CREATE and
// UPDATE), and the accepted ones through the planner. Properties: no exception escapes, every rejection names a
// field, every accepted object plans without error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { STORAGE_API_VERSION, type CloneSet } from '../api/cloneset.ts';
import type { CloneSetV1beta1 } from '../api/cloneset-v1beta1.ts';
import { cloneSetFromV1beta1, convertCloneSet } from '../api/conversion.ts';
import { FEATURE_GATE_DEFAULTS } from '../api/well-known.ts';
import { planCloneSet } from '../cloneset/plan/index.ts';
import { plannerConfig, readyPods, revisions, sequentialIds, T0 } from '../cloneset/plan/testing/builders.ts';
import { defaultCloneSet, shouldInjectTemplateDefaults, type CloneSetVersion } from './mutating.ts';
import { formatInvalid } from './field-errors.ts';
import { deletionProtectionDenial, validateCloneSet } from './validate.ts';

type Obj = Record<string, unknown>;

const RUNS = 10_000;

/** A value of the wrong kind for almost any field. */
const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, min: -1e3, max: 1e3 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer({ min: 0, max: 3 }), { maxKeys: 2 }),
);
/** Mostly `arb`, sometimes garbage. */
const mostly = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 12, arbitrary: arb }, { weight: 1, arbitrary: garbage });
/** A record whose keys are all optional. */
const someOf = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T): fc.Arbitrary<Obj> => fc.record(fields, { requiredKeys: [] });

const intOrPercent = fc.oneof(fc.integer({ min: -2, max: 6 }), fc.constantFrom('0%', '20%', '50%', '100%', '12.5%', '150%', '5', 'x%', '-10%', '', '%'));
const name = fc.constantFrom('main', 'side', 'web', 'Bad_Name', '', 'a-b');
const labelValue = fc.constantFrom('demo', 'other', '', 'x'.repeat(70), 'bad value');
const selector = someOf({
  matchLabels: mostly(fc.dictionary(fc.constantFrom('app', 'tier', 'bad key!'), labelValue, { maxKeys: 2 })),
  matchExpressions: mostly(
    fc.array(
      someOf({
        key: mostly(fc.constantFrom('app', 'tier')),
        operator: mostly(fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Like')),
        values: mostly(fc.array(labelValue, { maxLength: 2 })),
      }),
      { maxLength: 2 },
    ),
  ),
});
const probe = someOf({
  httpGet: mostly(someOf({ port: mostly(fc.oneof(fc.integer({ min: 0, max: 70000 }), fc.constantFrom('http', ''))), path: mostly(fc.constant('/')) })),
  tcpSocket: mostly(someOf({ port: mostly(fc.integer({ min: 0, max: 70000 })) })),
  periodSeconds: mostly(fc.integer({ min: -1, max: 20 })),
  successThreshold: mostly(fc.integer({ min: -1, max: 3 })),
});
const container = someOf({
  name: mostly(name),
  image: mostly(fc.constantFrom('nginx:1.25', 'nginx', 'busybox@sha256:' + 'a'.repeat(64), '', ' nginx')),
  imagePullPolicy: mostly(fc.constantFrom('Always', 'IfNotPresent', 'Never', 'Sometimes')),
  ports: mostly(
    fc.array(
      someOf({
        containerPort: mostly(fc.integer({ min: 0, max: 70000 })),
        name: mostly(fc.constantFrom('http', 'metrics', 'HTTP', 'a--b')),
        protocol: mostly(fc.constantFrom('TCP', 'UDP', 'ICMP')),
      }),
      { maxLength: 2 },
    ),
  ),
  env: mostly(fc.array(someOf({ name: mostly(fc.constantFrom('A', 'B_1', '1X', '')), value: mostly(fc.constantFrom('x', '')) }), { maxLength: 2 })),
  resources: mostly(
    someOf({
      limits: mostly(fc.dictionary(fc.constantFrom('cpu', 'memory'), fc.constantFrom('1', '500m', '1Gi', 'lots', '-1'), { maxKeys: 2 })),
      requests: mostly(fc.dictionary(fc.constantFrom('cpu', 'memory'), fc.constantFrom('2', '100m', '512Mi', '1.5'), { maxKeys: 2 })),
    }),
  ),
  volumeMounts: mostly(fc.array(someOf({ name: mostly(fc.constantFrom('data', 'cfg', 'nope')), mountPath: mostly(fc.constantFrom('/data', '/etc/cfg', '')) }), { maxLength: 2 })),
  readinessProbe: mostly(probe),
  livenessProbe: mostly(probe),
});
const template = someOf({
  metadata: mostly(someOf({ labels: mostly(fc.dictionary(fc.constantFrom('app', 'tier', 'bad key!'), labelValue, { maxKeys: 2 })) })),
  spec: mostly(
    someOf({
      containers: mostly(fc.array(container, { maxLength: 3 })),
      initContainers: mostly(fc.array(container, { maxLength: 1 })),
      volumes: mostly(
        fc.array(someOf({ name: mostly(fc.constantFrom('data', 'cfg', 'BAD')), emptyDir: mostly(fc.constant({})), configMap: mostly(someOf({ name: fc.constant('c') })) }), {
          maxLength: 2,
        }),
      ),
      restartPolicy: mostly(fc.constantFrom('Always', 'OnFailure', 'Never', '')),
      activeDeadlineSeconds: mostly(fc.integer({ min: -1, max: 100 })),
      dnsPolicy: mostly(fc.constantFrom('ClusterFirst', 'Default', 'Sometimes')),
      hostNetwork: mostly(fc.boolean()),
      terminationGracePeriodSeconds: mostly(fc.integer({ min: -1, max: 60 })),
    }),
  ),
});
const hook = someOf({
  labelsHandler: mostly(fc.dictionary(fc.constantFrom('hold', 'wait'), fc.constantFrom('true', ''), { maxKeys: 2 })),
  finalizersHandler: mostly(fc.array(fc.constantFrom('example.com/hold'), { maxLength: 1 })),
  markPodNotReady: mostly(fc.boolean()),
});
const priority = someOf({
  weightPriority: mostly(fc.array(someOf({ weight: mostly(fc.integer({ min: -1, max: 101 })), matchSelector: mostly(selector) }), { maxLength: 2 })),
  orderPriority: mostly(fc.array(someOf({ orderedKey: mostly(fc.constantFrom('order', '')) }), { maxLength: 2 })),
});
const scatter = fc.array(someOf({ key: mostly(fc.constantFrom('zone', '')), value: mostly(fc.constantFrom('a', 'b')) }), { maxLength: 3 });
const rollingFields = {
  partition: mostly(intOrPercent),
  maxUnavailable: mostly(intOrPercent),
  maxSurge: mostly(intOrPercent),
  paused: mostly(fc.boolean()),
  priorityStrategy: mostly(priority),
  scatterStrategy: mostly(scatter),
};
const podNames = fc.array(fc.constantFrom('old-0', 'old-1', 'old-2', 'ghost'), { maxLength: 3 });
const common = {
  replicas: mostly(fc.integer({ min: -1, max: 8 })),
  selector: mostly(selector),
  template: mostly(template),
  volumeClaimTemplates: mostly(
    fc.array(
      someOf({
        metadata: mostly(someOf({ name: mostly(fc.constantFrom('data', 'logs', '')) })),
        spec: mostly(someOf({ resources: mostly(someOf({ requests: mostly(fc.dictionary(fc.constant('storage'), fc.constantFrom('1Gi', '1.5Gi', 'big'), { maxKeys: 1 })) })) })),
      }),
      { maxLength: 2 },
    ),
  ),
  revisionHistoryLimit: mostly(fc.integer({ min: -1, max: 20 })),
  minReadySeconds: mostly(fc.integer({ min: -1, max: 30 })),
  progressDeadlineSeconds: mostly(fc.oneof(fc.integer({ min: -1, max: 60 }), fc.constant(2147483647))),
  lifecycle: mostly(someOf({ preDelete: mostly(hook), inPlaceUpdate: mostly(hook), preNormal: mostly(hook) })),
};
const v1alpha1Spec = someOf({
  ...common,
  scaleStrategy: mostly(someOf({ podsToDelete: mostly(podNames), maxUnavailable: mostly(intOrPercent), disablePVCReuse: mostly(fc.boolean()) })),
  updateStrategy: mostly(
    someOf({
      type: mostly(fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', 'OnDelete', '')),
      ...rollingFields,
      inPlaceUpdateStrategy: mostly(someOf({ gracePeriodSeconds: mostly(fc.integer({ min: -1, max: 10 })) })),
    }),
  ),
});
const v1beta1Spec = someOf({
  ...common,
  scaleStrategy: mostly(
    someOf({
      podsToDelete: mostly(podNames),
      maxUnavailable: mostly(intOrPercent),
      enablePVCReuse: mostly(fc.boolean()),
      excludePreparingDelete: mostly(fc.boolean()),
    }),
  ),
  updateStrategy: mostly(
    someOf({
      type: mostly(fc.constantFrom('RollingUpdate', 'OnDelete', 'ReCreate', '')),
      rollingUpdate: mostly(
        someOf({
          ...rollingFields,
          podUpdatePolicy: mostly(fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', 'Sometimes')),
          inPlaceUpdateStrategy: mostly(
            someOf({
              gracePeriodSeconds: mostly(fc.integer({ min: -1, max: 10 })),
              imagePreDownloadParallelism: mostly(fc.oneof(fc.integer({ min: -1, max: 5 }), fc.constantFrom('2', '50%', 'x'))),
              imagePreDownloadTimeoutSeconds: mostly(fc.integer({ min: -1, max: 600 })),
            }),
          ),
        }),
      ),
    }),
  ),
});

// Plausible specs: only sensible values, so that many are accepted and reach the planner.
const plausibleRolling = {
  partition: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('0%', '40%', '100%', '12.5%')),
  maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('20%', '50%', '100%')),
  maxSurge: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom('0%', '25%')),
  paused: fc.boolean(),
  priorityStrategy: fc.oneof(
    fc.record({ weightPriority: fc.constant([{ weight: 50, matchSelector: { matchLabels: { tier: 'web' } } }]) }),
    fc.record({ orderPriority: fc.constant([{ orderedKey: 'order' }]) }),
  ),
  scatterStrategy: fc.constant([{ key: 'zone', value: 'a' }]),
};
const plausibleCommon = {
  replicas: fc.integer({ min: 0, max: 8 }),
  selector: fc.constant({ matchLabels: { app: 'demo' } }),
  template: fc.record({
    metadata: fc.constant({ labels: { app: 'demo' } }),
    spec: fc.record({
      containers: fc.uniqueArray(
        fc.record(
          {
            name: fc.constantFrom('main', 'side', 'log'),
            image: fc.constantFrom('nginx:1.25', 'busybox'),
            ports: fc.constant([{ containerPort: 8080, name: 'http' }]),
            env: fc.constant([{ name: 'MODE', value: 'fast' }]),
            resources: fc.constant({ requests: { cpu: '100m' }, limits: { cpu: '1' } }),
            readinessProbe: fc.constant({ httpGet: { port: 'http' } }),
          },
          { requiredKeys: ['name', 'image'] },
        ),
        { minLength: 1, maxLength: 2, selector: (c) => c.name },
      ),
    }),
  }),
  minReadySeconds: fc.integer({ min: 0, max: 5 }),
  lifecycle: fc.constant({ preDelete: { finalizersHandler: ['example.com/hold'] } }),
};
const plausibleV1alpha1 = fc.record(
  {
    ...plausibleCommon,
    updateStrategy: someOf({ type: fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'), ...plausibleRolling }),
  },
  { requiredKeys: ['replicas', 'selector', 'template'] },
);
const plausibleV1beta1 = fc.record(
  {
    ...plausibleCommon,
    scaleStrategy: someOf({ enablePVCReuse: fc.boolean(), excludePreparingDelete: fc.boolean(), maxUnavailable: fc.constantFrom(1, '50%') }),
    updateStrategy: fc.oneof(
      fc.constant({ type: 'OnDelete' }),
      someOf({ rollingUpdate: someOf({ podUpdatePolicy: fc.constantFrom('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'), ...plausibleRolling }) }),
    ),
  },
  { requiredKeys: ['replicas', 'selector', 'template'] },
);

const sample = fc.oneof(
  fc.record({ version: fc.constant<CloneSetVersion>('v1alpha1'), spec: mostly(v1alpha1Spec), old: v1alpha1Spec }),
  fc.record({ version: fc.constant<CloneSetVersion>('v1beta1'), spec: mostly(v1beta1Spec), old: v1beta1Spec }),
  fc.record({ version: fc.constant<CloneSetVersion>('v1alpha1'), spec: plausibleV1alpha1, old: plausibleV1alpha1 }),
  fc.record({ version: fc.constant<CloneSetVersion>('v1beta1'), spec: plausibleV1beta1, old: plausibleV1beta1 }),
);

const objectOf = (version: CloneSetVersion, spec: unknown): Obj => ({
  apiVersion: `apps.kruise.io/${version}`,
  kind: 'CloneSet',
  metadata: { name: 'sample', namespace: 'default', uid: 'uid-sample' },
  spec,
});

/**
 * What the controller plans with: the object as stored (converted to v1beta1, the storage version) and mapped to
 * the internal model, exactly as the informer does.
 */
function toModel(obj: Obj): CloneSet {
  return cloneSetFromV1beta1(convertCloneSet(obj, STORAGE_API_VERSION) as unknown as CloneSetV1beta1);
}

describe('admission fuzz: random CloneSets of both versions', () => {
  test(`${RUNS} specs: no exception escapes, every rejection names a field, every accepted object plans`, (t) => {
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(sample, ({ version, spec, old }) => {
        const ctx = { pods: new Map(), gates: FEATURE_GATE_DEFAULTS };
        const inject = shouldInjectTemplateDefaults({ operation: 'UPDATE', object: objectOf(version, spec), oldObject: objectOf(version, old) }, FEATURE_GATE_DEFAULTS);
        assert.equal(typeof inject, 'boolean');
        const object = defaultCloneSet(objectOf(version, spec), version, { injectTemplateDefaults: true });
        const oldObject = defaultCloneSet(objectOf(version, old), version, { injectTemplateDefaults: true });
        const errs = validateCloneSet({ version, operation: 'CREATE', object }, ctx);
        const updateErrs = validateCloneSet({ version, operation: 'UPDATE', object, oldObject }, ctx);
        for (const e of [...errs, ...updateErrs]) {
          assert.ok(e.field.length > 0 && e.detail !== undefined, `a rejection without a field path: ${JSON.stringify(e)}`);
        }
        assert.ok(formatInvalid('CloneSet.apps.kruise.io', 'sample', errs).length > 0);
        deletionProtectionDenial(object, { ...FEATURE_GATE_DEFAULTS, ResourcesDeletionProtection: true });
        if (errs.length > 0) {
          rejected++;
          return;
        }
        accepted++;
        const cs = toModel(object);
        const replicas = typeof cs.spec.replicas === 'number' ? cs.spec.replicas : 1;
        const pods = readyPods(cs, Math.min(replicas, 4), 'r1');
        const plan = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1', 'r2'), plannerConfig(), sequentialIds());
        assert.ok(Array.isArray(plan.actions));
      }),
      { numRuns: RUNS, seed: 20260414 },
    );
    t.diagnostic(`${accepted} accepted and planned, ${rejected} rejected`);
    // The generator must exercise both outcomes, or the properties above say little.
    assert.ok(accepted > RUNS / 20, `only ${accepted} of ${RUNS} samples were accepted`);
    assert.ok(rejected > RUNS / 4, `only ${rejected} of ${RUNS} samples were rejected`);
  });
});
