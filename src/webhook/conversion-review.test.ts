import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from './admission-review.ts';
import { convertReview } from './conversion-review.ts';

const review = (objects: unknown[], desiredAPIVersion = 'apps.kruise.io/v1beta1'): unknown => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'u1', desiredAPIVersion, objects },
});
const convert = (obj: Record<string, unknown>, v: string): Record<string, unknown> => {
  if (v !== 'apps.kruise.io/v1beta1' && v !== 'apps.kruise.io/v1alpha1') throw new Error(`unknown version ${v}`);
  return { ...obj, apiVersion: v, converted: true };
};
const cs = (name: string, apiVersion = 'apps.kruise.io/v1alpha1'): Record<string, unknown> => ({ apiVersion, kind: 'CloneSet', metadata: { name, namespace: 'ns' } });

describe('convertReview (ConversionReview v1)', () => {
  test('converts every object, keeps their order and echoes the uid', () => {
    const r = convertReview(review([cs('a'), cs('b')]), convert);
    assert.equal(r.response.uid, 'u1');
    assert.deepEqual(r.response.result, { status: 'Success' });
    assert.deepEqual(
      r.response.convertedObjects.map((o) => [(o.metadata as { name: string }).name, o.apiVersion, o.converted]),
      [
        ['a', 'apps.kruise.io/v1beta1', true],
        ['b', 'apps.kruise.io/v1beta1', true],
      ],
    );
  });

  test('an object already in the desired version passes unchanged', () => {
    const r = convertReview(review([cs('a', 'apps.kruise.io/v1beta1')]), convert);
    assert.equal(r.response.convertedObjects[0]?.converted, undefined);
  });

  test('one failing object fails the review with a message naming it, and returns no objects', () => {
    const r = convertReview(review([cs('a'), cs('b')], 'apps.kruise.io/v2'), convert);
    assert.deepEqual(r.response.convertedObjects, []);
    assert.equal(r.response.result.status, 'Failure');
    assert.match(r.response.result.status === 'Failure' ? r.response.result.message : '', /CloneSet ns\/a from apps.kruise.io\/v1alpha1 to apps.kruise.io\/v2: unknown version/);
  });

  test('a body that is not a ConversionReview v1 is a bad request saying what to set', () => {
    assert.throws(
      () => convertReview({ apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview' }, convert),
      (e: unknown) => e instanceof BadRequestError && /conversionReviewVersions: \[v1\]/.test(e.message),
    );
    assert.throws(
      () => convertReview({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'x', desiredAPIVersion: 'v' } }, convert),
      /request.objects: Required value/,
    );
  });
});
