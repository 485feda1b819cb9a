import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { cloneSetCrd, renderCrdYaml } from './crd-schema.ts';
import { withCelRules } from '../admission/cel-rules.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (p: string): string => readFileSync(resolve(ROOT, p), 'utf8');

type Schema = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function openApiSchema(version = 'v1alpha1'): Schema {
  const crd = parse(read('config/crd/apps.kruise.io_clonesets.yaml')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };
  const v = crd.spec.versions.find((x) => x.name === version);
  assert.ok(v !== undefined);
  return v.schema.openAPIV3Schema;
}

/** A small structural validator: the problems the API server would report or prune for. */
function check(schema: Schema, value: unknown, path: string, problems: string[]): void {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (typeof value !== 'number' && typeof value !== 'string') problems.push(`${path}: not int-or-string`);
    return;
  }
  switch (schema['type']) {
    case 'string':
      if (typeof value !== 'string') problems.push(`${path}: not a string`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path}: not a boolean`);
      break;
    case 'integer':
      if (!Number.isInteger(value)) problems.push(`${path}: not an integer`);
      else if (typeof schema['minimum'] === 'number' && (value as number) < schema['minimum']) problems.push(`${path}: below minimum`);
      break;
    case 'array':
      if (!Array.isArray(value)) problems.push(`${path}: not an array`);
      else
        value.forEach((v: unknown, i) => {
          check(schema['items'] as Schema, v, `${path}[${i}]`, problems);
        });
      break;
    case 'object': {
      if (!isObj(value)) {
        problems.push(`${path}: not an object`);
        break;
      }
      const props = schema['properties'];
      const additional = schema['additionalProperties'];
      for (const r of (schema['required'] as string[] | undefined) ?? []) if (!(r in value)) problems.push(`${path}.${r}: required`);
      for (const [k, v] of Object.entries(value)) {
        if (isObj(props) && isObj(props[k])) check(props[k], v, `${path}.${k}`, problems);
        else if (isObj(additional)) check(additional, v, `${path}.${k}`, problems);
        else if (isObj(props)) problems.push(`${path}.${k}: unknown field (would be pruned)`);
      }
      break;
    }
    default:
      problems.push(`${path}: schema without type`);
  }
  if (Array.isArray(schema['enum']) && !schema['enum'].includes(value)) problems.push(`${path}: not in enum`);
}

describe('CRD clonesets.apps.kruise.io', () => {
  test('config/crd/apps.kruise.io_clonesets.yaml is up to date (regenerate: node hack/gen-crd.ts)', () => {
    assert.equal(read('config/crd/apps.kruise.io_clonesets.yaml'), withCelRules(renderCrdYaml()));
  });

  test('identity, versions, conversion, subresources and printer columns as Kruise', () => {
    const crd = parse(renderCrdYaml()) as {
      metadata: { name: string };
      spec: {
        group: string;
        scope: string;
        names: Record<string, unknown>;
        versions: { name: string; served: boolean; storage: boolean; subresources: unknown; additionalPrinterColumns: { name: string; jsonPath: string; priority?: number }[] }[];
        conversion: unknown;
      };
    };
    assert.equal(crd.metadata.name, 'clonesets.apps.kruise.io');
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(crd.spec.names, { kind: 'CloneSet', listKind: 'CloneSetList', plural: 'clonesets', singular: 'cloneset', shortNames: ['clone'] });
    assert.deepEqual(
      crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
      [
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ],
    );
    assert.deepEqual(crd.spec.conversion, {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { service: { name: 'cloneset-controller-webhook-service', namespace: 'cloneset-system', path: '/convert', port: 443 } },
      },
    });
    for (const v of crd.spec.versions) {
      assert.deepEqual(v.subresources, {
        status: {},
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
      });
      assert.deepEqual(
        v.additionalPrinterColumns.map((c) => `${c.name} ${c.jsonPath}${c.priority === undefined ? '' : ` p${c.priority}`}`),
        [
          'DESIRED .spec.replicas',
          'UPDATED .status.updatedReplicas',
          'UPDATED_READY .status.updatedReadyReplicas',
          'UPDATED_AVAILABLE .status.updatedAvailableReplicas',
          'READY .status.readyReplicas',
          'TOTAL .status.replicas',
          'AGE .metadata.creationTimestamp',
          'CONTAINERS .spec.template.spec.containers[*].name p1',
          'IMAGES .spec.template.spec.containers[*].image p1',
          'SELECTOR .status.labelSelector p1',
        ],
      );
    }
  });

  test('the schema is structural: every node has a type (or is int-or-string)', () => {
    const walk = (s: Schema, path: string): void => {
      assert.ok(typeof s['type'] === 'string' || s['x-kubernetes-int-or-string'] === true, `${path} has no type`);
      if (isObj(s['properties'])) for (const [k, v] of Object.entries(s['properties'])) walk(v as Schema, `${path}.${k}`);
      if (isObj(s['items'])) walk(s['items'], `${path}[]`);
      if (isObj(s['additionalProperties'])) walk(s['additionalProperties'], `${path}{}`);
    };
    walk(openApiSchema('v1alpha1'), '');
    walk(openApiSchema('v1beta1'), '');
  });

  for (const version of ['v1alpha1', 'v1beta1'])
    test(`${version} required lists: spec.selector/template, the five status counters`, () => {
      const s = openApiSchema(version) as { properties: { spec: Schema; status: Schema } };
      assert.deepEqual(s.properties.spec['required'], ['selector', 'template']);
      assert.deepEqual(s.properties.status['required'], ['availableReplicas', 'readyReplicas', 'replicas', 'updatedReadyReplicas', 'updatedReplicas']);
      const template = (s.properties.spec['properties'] as Record<string, Schema>)['template'];
      assert.equal(template?.['x-kubernetes-preserve-unknown-fields'], true);
    });

  test('the manual sample applies unchanged (nothing rejected or pruned)', () => {
    const sample = parse(read('config/samples/cloneset-sample.yaml')) as unknown;
    const problems: string[] = [];
    check(openApiSchema(), sample, '', problems);
    assert.deepEqual(problems, []);
    assert.deepEqual(sample, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { labels: { app: 'sample' }, name: 'sample' },
      spec: {
        replicas: 5,
        selector: { matchLabels: { app: 'sample' } },
        template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
      },
    });
  });

  test('a fully populated object passes; wrong types and enum values do not', () => {
    const full = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'x' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] },
        template: { anything: { goes: true } },
        volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }],
        scaleStrategy: { podsToDelete: ['p'], maxUnavailable: '10%', disablePVCReuse: true },
        updateStrategy: {
          type: 'InPlaceIfPossible',
          partition: 1,
          maxUnavailable: '20%',
          maxSurge: 0,
          paused: false,
          priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { a: 'b' } } }], orderPriority: [{ orderedKey: 'k' }] },
          scatterStrategy: [{ key: 'k', value: 'v' }],
          inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
        },
        revisionHistoryLimit: 5,
        minReadySeconds: 1,
        progressDeadlineSeconds: 600,
        lifecycle: { preDelete: { finalizersHandler: ['f'], markPodNotReady: true }, inPlaceUpdate: { labelsHandler: { a: 'b' } }, preNormal: {} },
      },
      status: {
        observedGeneration: 1,
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        updatedReplicas: 1,
        updatedReadyReplicas: 1,
        updatedAvailableReplicas: 1,
        expectedUpdatedReplicas: 1,
        updateRevision: 'x-1',
        currentRevision: 'x-1',
        collisionCount: 0,
        labelSelector: 'a=b',
        conditions: [{ type: 'Progressing', status: 'True', lastUpdateTime: 't', lastTransitionTime: 't', reason: 'r', message: 'm' }],
      },
    };
    const problems: string[] = [];
    check(openApiSchema(), full, '', problems);
    assert.deepEqual(problems, []);
    const bad: string[] = [];
    check(openApiSchema(), { ...full, spec: { ...full.spec, replicas: -1, updateStrategy: { type: 'RollingUpdate' } } }, '', bad);
    assert.deepEqual(bad, ['.spec.replicas: below minimum', '.spec.updateStrategy.type: not in enum']);
  });

  test("v1alpha1 rejects OnDelete, as its admission does (and Kruise's through v1alpha1); v1beta1 accepts it", () => {
    const withType = (apiVersion: string, type: string) => ({
      apiVersion,
      kind: 'CloneSet',
      metadata: { name: 'x' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: {}, updateStrategy: { type } },
    });
    const alpha: string[] = [];
    check(openApiSchema('v1alpha1'), withType('apps.kruise.io/v1alpha1', 'OnDelete'), '', alpha);
    assert.deepEqual(alpha, ['.spec.updateStrategy.type: not in enum']);
    const beta: string[] = [];
    check(openApiSchema('v1beta1'), withType('apps.kruise.io/v1beta1', 'OnDelete'), '', beta);
    assert.deepEqual(beta, []);
  });

  test('a fully populated v1beta1 object passes (OnDelete, rollingUpdate, enablePVCReuse, pre-download fields)', () => {
    const full = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'x' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { a: 'b' } },
        template: {},
        scaleStrategy: { podsToDelete: ['p'], maxUnavailable: '10%', enablePVCReuse: true, excludePreparingDelete: true },
        updateStrategy: {
          type: 'OnDelete',
          rollingUpdate: {
            partition: 1,
            maxUnavailable: '20%',
            maxSurge: 0,
            podUpdatePolicy: 'InPlaceOnly',
            paused: false,
            scatterStrategy: [{ key: 'k', value: 'v' }],
            inPlaceUpdateStrategy: { gracePeriodSeconds: 10, imagePreDownloadParallelism: 2, imagePreDownloadTimeoutSeconds: 60, imagePreDownloadMinUpdatedReadyPods: 1 },
          },
        },
        progressDeadlineSeconds: -1,
      },
    };
    const problems: string[] = [];
    check(openApiSchema('v1beta1'), full, '', problems);
    assert.deepEqual(problems, [], 'v1beta1 does not validate progressDeadlineSeconds (docs/features.md#v1beta1-and-conversion)');
    const bad: string[] = [];
    check(openApiSchema('v1beta1'), { ...full, spec: { ...full.spec, scaleStrategy: { disablePVCReuse: true }, updateStrategy: { type: 'ReCreate' } } }, '', bad);
    assert.deepEqual(bad, ['.spec.scaleStrategy.disablePVCReuse: unknown field (would be pruned)', '.spec.updateStrategy.type: not in enum']);
  });

  test('cloneSetCrd() is JSON-serialisable (no undefined, no functions)', () => {
    const crd = cloneSetCrd();
    assert.deepEqual(JSON.parse(JSON.stringify(crd)), crd);
  });
});
