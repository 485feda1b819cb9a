import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneSetCrd } from '../api/crd-schema.ts';
import { applyCelRules, withCelRules, type CelRule } from './cel-rules.ts';
import { IMMUTABLE_SPEC_MESSAGE } from './validate.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema node at a property path ('[]' = list items). */
function node(schema: unknown, path: readonly string[]): Obj {
  let cur: unknown = schema;
  for (const p of path) {
    const o = isObj(cur) ? cur : {};
    cur = p === '[]' ? o['items'] : isObj(o['properties']) ? o['properties'][p] : undefined;
  }
  assert.ok(isObj(cur), `no schema at ${path.join('.')}`);
  return cur;
}

const rulesAt = (schema: unknown, path: readonly string[]): CelRule[] => {
  const v = node(schema, path)['x-kubernetes-validations'];
  return Array.isArray(v) ? (v as CelRule[]) : [];
};
const messages = (schema: unknown, path: readonly string[]): string[] => rulesAt(schema, path).map((r) => r.message ?? r.messageExpression ?? '');

const intOrString = (): Obj => ({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
const rollingProps = (): Obj => ({
  partition: intOrString(),
  maxUnavailable: intOrString(),
  maxSurge: intOrString(),
  paused: { type: 'boolean' },
  priorityStrategy: {
    type: 'object',
    properties: {
      weightPriority: { type: 'array', items: { type: 'object', properties: { weight: { type: 'integer' } } } },
      orderPriority: { type: 'array', items: { type: 'object', properties: { orderedKey: { type: 'string' } } } },
    },
  },
  scatterStrategy: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } } } },
});

/** A CRD with Kruise's two schema shapes: v1alpha1 (strategy fields under updateStrategy) and v1beta1 (under rollingUpdate). */
function twoVersionCrd(): Obj {
  const spec = (update: Obj): Obj => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          selector: { type: 'object', properties: { matchLabels: { type: 'object' }, matchExpressions: { type: 'array' } } },
          template: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          minReadySeconds: { type: 'integer' },
          progressDeadlineSeconds: { type: 'integer' },
          updateStrategy: update,
        },
      },
    },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: {
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: false,
          schema: {
            openAPIV3Schema: spec({
              type: 'object',
              properties: {
                type: { type: 'string' },
                ...rollingProps(),
                inPlaceUpdateStrategy: { type: 'object', properties: { imagePreDownloadParallelism: intOrString() } },
              },
            }),
          },
        },
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: spec({
              type: 'object',
              properties: {
                type: { type: 'string' },
                rollingUpdate: {
                  type: 'object',
                  properties: {
                    ...rollingProps(),
                    podUpdatePolicy: { type: 'string' },
                    inPlaceUpdateStrategy: { type: 'object', properties: { imagePreDownloadParallelism: intOrString(), imagePreDownloadTimeoutSeconds: { type: 'integer' } } },
                  },
                },
              },
            }),
          },
        },
        { name: 'v1', served: false, storage: false, schema: { openAPIV3Schema: spec({ type: 'object' }) } },
      ],
    },
  };
}

const schemaOf = (crd: Obj, version: string): unknown => {
  const versions = (crd['spec'] as { versions: { name: string; schema: { openAPIV3Schema: unknown } }[] }).versions;
  return versions.find((v) => v.name === version)?.schema.openAPIV3Schema;
};

describe('applyCelRules', () => {
  const crd = applyCelRules(twoVersionCrd());
  const a = schemaOf(crd, 'v1alpha1');
  const b = schemaOf(crd, 'v1beta1');

  test('puts the shared rules on both versions: replicas, selector immutable and non-empty, pod template', () => {
    for (const s of [a, b]) {
      assert.deepEqual(messages(s, ['spec', 'replicas']), ['must be greater than or equal to 0']);
      assert.deepEqual(rulesAt(s, ['spec', 'selector']).map((r) => r.rule)[0], 'self == oldSelf');
      assert.deepEqual(messages(s, ['spec', 'selector']), [IMMUTABLE_SPEC_MESSAGE, 'empty selector is invalid for cloneset']);
      assert.deepEqual(node(s, ['spec', 'template', 'spec', 'restartPolicy'])['type'], 'string');
      assert.deepEqual(
        rulesAt(s, ['spec', 'template', 'spec']).map((r) => r.fieldPath),
        ['.activeDeadlineSeconds', '.containers'],
      );
      assert.equal(node(s, ['spec', 'template'])['x-kubernetes-preserve-unknown-fields'], true);
    }
  });

  test('finds the strategy fields where each version has them', () => {
    const alphaPartition = rulesAt(a, ['spec', 'updateStrategy', 'partition']);
    const betaPartition = rulesAt(b, ['spec', 'updateStrategy', 'rollingUpdate', 'partition']);
    assert.equal(alphaPartition.length, 2);
    assert.deepEqual(betaPartition, alphaPartition);
    assert.equal(node(b, ['spec', 'updateStrategy', 'rollingUpdate', 'maxSurge'])['maxLength'], 64);
    assert.deepEqual(messages(a, ['spec', 'updateStrategy']), ['can not use maxSurge with strategy type InPlaceOnly']);
    assert.deepEqual(messages(b, ['spec', 'updateStrategy', 'rollingUpdate']), ['can not use maxSurge with podUpdatePolicy InPlaceOnly']);
    assert.deepEqual(messages(a, ['spec', 'updateStrategy', 'priorityStrategy', 'orderPriority', '[]', 'orderedKey']), ['order key can not be empty']);
    assert.deepEqual(messages(b, ['spec', 'updateStrategy', 'rollingUpdate', 'scatterStrategy', '[]', 'key']), ['key should not be empty']);
  });

  test('version-specific rules: type values, OnDelete shape, pre-download on v1beta1 only, progress deadline on v1alpha1 only', () => {
    assert.deepEqual(messages(a, ['spec', 'updateStrategy', 'type']), ["must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"]);
    assert.deepEqual(messages(b, ['spec', 'updateStrategy', 'type']), ["must be 'RollingUpdate' or 'OnDelete'"]);
    assert.match(messages(b, ['spec', 'updateStrategy'])[0] ?? '', /nil value for IntOrString/);
    assert.equal(rulesAt(b, ['spec', 'updateStrategy', 'rollingUpdate', 'inPlaceUpdateStrategy', 'imagePreDownloadParallelism']).length, 1);
    assert.deepEqual(rulesAt(a, ['spec', 'updateStrategy', 'inPlaceUpdateStrategy', 'imagePreDownloadParallelism']), []);
    assert.deepEqual(messages(a, ['spec']), ['must be greater than minReadySeconds']);
    assert.deepEqual(messages(b, ['spec']), []);
  });

  test('leaves versions that are not served alone, is idempotent and pure', () => {
    const input = twoVersionCrd();
    const before = JSON.stringify(input);
    const once = applyCelRules(input);
    assert.equal(JSON.stringify(input), before);
    assert.deepEqual(applyCelRules(once), once);
    assert.deepEqual(rulesAt(schemaOf(once, 'v1'), ['spec']), []);
  });

  test('keeps the checks the schema already makes out of CEL (replicas minimum, type enum)', () => {
    const s = schemaOf(applyCelRules(cloneSetCrd() as Obj), 'v1alpha1');
    assert.deepEqual(rulesAt(s, ['spec', 'replicas']), []);
    assert.deepEqual(rulesAt(s, ['spec', 'updateStrategy', 'type']), []);
  });

  test('withCelRules keeps the generated-file header and renders the rules', () => {
    const out = withCelRules('# header line\nkind: CustomResourceDefinition\nspec:\n  versions: []\n');
    assert.equal(out, '# header line\nkind: CustomResourceDefinition\nspec:\n  versions: []\n');
  });
});
