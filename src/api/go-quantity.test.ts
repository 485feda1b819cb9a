import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, defaultedQuantity, parseQuantity, QuantityParseError } from './go-quantity.ts';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Outputs of Go's resource.ParseQuantity + MarshalJSON (and after RoundUp(-3)); null = Go rejects it. */
const GO_VECTORS = JSON.parse(readFileSync(resolve(import.meta.dirname, 'go-json.vectors.json'), 'utf8')) as {
  readonly quantities: readonly (readonly [string, string | null, string | null])[];
};

describe('Kubernetes quantities as Go prints them', () => {
  test('canonical forms', () => {
    const cases: [string, string][] = [
      ['1000', '1k'],
      ['1024Mi', '1Gi'],
      ['0.5Gi', '512Mi'],
      ['1.5', '1500m'],
      ['2000m', '2'],
      ['100m', '100m'],
      ['1Gi', '1Gi'],
      ['+1', '+1'],
      ['01', '01'],
      ['010', '010'],
      ['0100m', '0100m'],
      ['0.100', '100m'],
      ['1e3', '1e3'],
      ['12e2', '1200'],
      ['0.1', '100m'],
      ['1.5Ki', '1536'],
      ['0', '0'],
      ['0Gi', '0'],
      ['123456789012345678', '123456789012345678'],
      ['9Ei', '9223372036854775807'],
    ];
    for (const [input, want] of cases) assert.equal(canonicalQuantity(input), want, input);
  });
  test('SetDefaults_ResourceList rounds up to milli units', () => {
    assert.equal(defaultedQuantity('0.0001'), '1m');
    assert.equal(defaultedQuantity('1n'), '1m');
    assert.equal(defaultedQuantity('1.0001'), '1001m');
    assert.equal(defaultedQuantity('-1u'), '-1m');
    assert.equal(defaultedQuantity('100m'), '100m');
  });
  test('rejects what Go rejects', () => {
    for (const bad of ['', 'abc', '1x', '1Gb', '1e', '--1']) assert.throws(() => parseQuantity(bad), QuantityParseError, bad);
  });
  test(`matches Go for ${GO_VECTORS.quantities.length} vectors`, () => {
    for (const [input, canonical, rounded] of GO_VECTORS.quantities) {
      if (canonical === null) {
        assert.throws(() => parseQuantity(input), QuantityParseError, input);
        continue;
      }
      assert.equal(canonicalQuantity(input), canonical, input);
      assert.equal(defaultedQuantity(input), rounded, input);
    }
  });
});
