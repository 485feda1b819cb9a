import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS } from '../api/well-known.ts';
import { defaultCloneSet, type CloneSetVersion } from './mutating.ts';
import { formatFieldError } from './field-errors.ts';
import { validateCloneSet } from './validate.ts';

function errorsWith(version: CloneSetVersion, annotations: Record<string, string>): string[] {
  const cs = {
    apiVersion: `apps.kruise.io/${version}`,
    kind: 'CloneSet',
    metadata: { name: 'sample', namespace: 'default', annotations },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'sample' } },
      template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } },
    },
  };
  const object = defaultCloneSet(cs, version, { injectTemplateDefaults: true });
  return validateCloneSet({ version, operation: 'CREATE', object }, { pods: new Map(), gates: FEATURE_GATE_DEFAULTS }).map(formatFieldError);
}

for (const version of ['v1alpha1', 'v1beta1'] as const) {
  describe(`extension annotations at admission (${version})`, () => {
    test('good values of every knob are admitted', () => {
      assert.deepEqual(
        errorsWith(version, {
          'cloneset-controller.io/inactive-pods-limit': '0',
          'cloneset-controller.io/progress-deadline-action': 'rollback',
          'cloneset-controller.io/pvc-retention-when-scaled': 'Retain',
          'cloneset-controller.io/pvc-retention-when-deleted': 'Delete',
          'cloneset-controller.io/pvc-resize-policy': 'InPlace',
          'cloneset-controller.io/progress-deadline-last-action': '{"action":"pause","from":"x","at":"2026-01-01T00:00:00Z"}',
        }),
        [],
      );
    });

    test('a negative or non-numeric inactive-pods-limit is refused with the annotation path', () => {
      const detail = 'must be a non-negative integer in a string, e.g. "5" (the number of Failed/Succeeded pods to keep)';
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/inactive-pods-limit': '-1' }), [
        `metadata.annotations[cloneset-controller.io/inactive-pods-limit]: Invalid value: "-1": ${detail}`,
      ]);
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/inactive-pods-limit': 'five' }), [
        `metadata.annotations[cloneset-controller.io/inactive-pods-limit]: Invalid value: "five": ${detail}`,
      ]);
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/inactive-pods-limit': '2147483648' }), [
        'metadata.annotations[cloneset-controller.io/inactive-pods-limit]: Invalid value: "2147483648": must be at most 2147483647',
      ]);
    });

    test('progress-deadline-action accepts only pause and rollback (case matters)', () => {
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/progress-deadline-action': 'Abort' }), [
        'metadata.annotations[cloneset-controller.io/progress-deadline-action]: Invalid value: "Abort": supported values: "pause", "rollback"',
      ]);
    });

    test('the PVC retention knobs accept only Retain and Delete', () => {
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/pvc-retention-when-scaled': 'retain', 'cloneset-controller.io/pvc-retention-when-deleted': 'Keep' }), [
        'metadata.annotations[cloneset-controller.io/pvc-retention-when-scaled]: Invalid value: "retain": supported values: "Retain", "Delete"',
        'metadata.annotations[cloneset-controller.io/pvc-retention-when-deleted]: Invalid value: "Keep": supported values: "Retain", "Delete"',
      ]);
    });

    test('pvc-resize-policy accepts only InPlace', () => {
      assert.deepEqual(errorsWith(version, { 'cloneset-controller.io/pvc-resize-policy': 'Recreate' }), [
        'metadata.annotations[cloneset-controller.io/pvc-resize-policy]: Invalid value: "Recreate": supported values: "InPlace"',
      ]);
    });

    test('an unknown key under our prefix (a typo) is refused and the known keys are listed', () => {
      const [line] = errorsWith(version, { 'cloneset-controller.io/inactive-pod-limit': '3' });
      assert.match(
        line ?? '',
        /^metadata\.annotations\[cloneset-controller\.io\/inactive-pod-limit\]: Invalid value: "cloneset-controller\.io\/inactive-pod-limit": unknown cloneset-controller\.io annotation; known: cloneset-controller\.io\/inactive-pods-limit, /,
      );
    });

    test('a CloneSet without our annotations sees no new errors', () => {
      assert.deepEqual(errorsWith(version, { 'kruise.io/anything': 'x' }), []);
    });
  });
}
