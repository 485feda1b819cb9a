import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { compareUtf8, fnv1_32, fnv1a_32, goFloat, GoJsonError, goMarshal, goQuote, goStructFieldNames, goTypedMarshal, goTypedMarshalStable, spewByteSlice } from './go-json.ts';
import { defaultPodTemplate } from './defaults.ts';
import type { PodTemplateSpec } from '../kube/types.ts';

interface Vectors {
  readonly typed: readonly { readonly input: unknown; readonly go: string }[];
  readonly defaulted: readonly { readonly input: unknown; readonly go: string }[];
  readonly initContainerPullPolicy: readonly (readonly [string, string])[];
  readonly quantities: readonly (readonly [string, string | null, string | null])[];
}

/** Outputs of the real Go code (k8s.io/api v0.32.10) for random inputs; see the note in the file. */
const GO_VECTORS = JSON.parse(readFileSync(resolve(import.meta.dirname, 'go-json.vectors.json'), 'utf8')) as Vectors;

describe('goQuote', () => {
  test('escapes like Go encoding/json with HTML escaping', () => {
    assert.equal(goQuote('x<y&z>'), '"x\\u003cy\\u0026z\\u003e"');
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('\n\r\t\b\f'), '"\\n\\r\\t\\b\\f"');
    assert.equal(goQuote('\u0001\u001f\u007f'), '"\\u0001\\u001f\u007f"');
    assert.equal(goQuote('\u2028\u2029'), '"\\u2028\\u2029"');
    assert.equal(goQuote('café 😀'), '"café 😀"');
  });
  test('an unpaired surrogate becomes \\ufffd', () => {
    assert.equal(goQuote('a\ud800b'), '"a\\ufffdb"');
    assert.equal(goQuote('\udc00'), '"\\ufffd"');
  });
});

describe('goMarshal (generic values)', () => {
  test('sorts keys by byte order at every level, no whitespace', () => {
    assert.equal(goMarshal({ b: 1, a: { d: [true, null], c: 'x' }, '10': 0, '9': 0 }), '{"10":0,"9":0,"a":{"c":"x","d":[true,null]},"b":1}');
  });
  test('orders keys by UTF-8 bytes, not UTF-16 code units', () => {
    assert.ok(compareUtf8('\uffff', '😀') < 0);
    assert.equal(goMarshal({ '😀': 1, '\uffff': 2 }), '{"\uffff":2,"😀":1}');
  });
  test('numbers print like a Go float64', () => {
    assert.equal(goFloat(30), '30');
    assert.equal(goFloat(1.5), '1.5');
    assert.equal(goFloat(1e21), '1e+21');
    assert.equal(goFloat(1e-7), '1e-7');
    assert.equal(goFloat(-0), '-0');
    assert.throws(() => goFloat(Number.NaN), GoJsonError);
  });
});

describe('goTypedMarshal (Go typed round-trip)', () => {
  test('drops unknown fields, keeps non-omitempty zero values', () => {
    const t = { metadata: { labels: { app: 'x' }, bogus: 1 }, spec: { containers: [{ name: 'c', Image: 'wrong-case' }] } };
    assert.equal(goTypedMarshal(t, 'PodTemplateSpec'), '{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","resources":{}}]}}');
  });
  test('canonicalises quantities and times', () => {
    const t = {
      metadata: { creationTimestamp: '2024-01-02T03:04:05.5+02:00' },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu: '1000m', memory: '1024Mi' }, requests: { cpu: 0.5 } } }] },
    };
    assert.equal(
      goTypedMarshal(t, 'PodTemplateSpec'),
      '{"metadata":{"creationTimestamp":"2024-01-02T01:04:05Z"},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}}}]}}',
    );
  });
  test('repeats the round-trip until stable (pointer to the zero time: null, then nil)', () => {
    const t = { metadata: { deletionTimestamp: '0001-01-01T00:00:00Z' }, spec: { containers: [] } };
    assert.equal(goTypedMarshal(t, 'PodTemplateSpec'), '{"metadata":{"creationTimestamp":null,"deletionTimestamp":null},"spec":{"containers":[]}}');
    assert.equal(goTypedMarshalStable(t, 'PodTemplateSpec'), '{"metadata":{"creationTimestamp":null},"spec":{"containers":[]}}');
  });
  test('fails where Go fails to decode', () => {
    assert.throws(() => goTypedMarshal({ spec: { terminationGracePeriodSeconds: '30' } }, 'PodTemplateSpec'), GoJsonError);
    assert.throws(() => goTypedMarshal({ spec: { priority: 2 ** 31 } }, 'PodTemplateSpec'), GoJsonError);
    assert.throws(() => goTypedMarshal({ spec: { containers: [{ name: 'c', ports: [{ containerPort: 1.5 }] }] } }, 'PodTemplateSpec'), GoJsonError);
    assert.throws(
      () => goTypedMarshal({ spec: { containers: [{ name: 'c', resources: { limits: { cpu: 'lots' } } }] } }, 'PodTemplateSpec'),
      /containers\[0\]\.resources\.limits\.cpu/,
    );
  });
  test(`reproduces Go byte for byte (${GO_VECTORS.typed.length} random templates)`, () => {
    for (const [i, v] of GO_VECTORS.typed.entries()) assert.equal(goTypedMarshal(v.input, 'PodTemplateSpec'), v.go, `case ${i}`);
  });
  test(`defaults + round-trip reproduce Kruise's webhook output (${GO_VECTORS.defaulted.length} random templates)`, () => {
    for (const [i, v] of GO_VECTORS.defaulted.entries()) {
      // The expected output went through two typed round-trips (webhook, then controller), like in Kruise.
      assert.equal(goTypedMarshalStable(defaultPodTemplate(v.input as PodTemplateSpec), 'PodTemplateSpec'), v.go, `case ${i}`);
    }
  });
  test('field tables follow k8s.io/api v0.32 (no later fields)', () => {
    assert.ok(goStructFieldNames('Container').includes('resizePolicy'));
    assert.ok(!goStructFieldNames('PodSpec').includes('hostnameOverride'));
    assert.equal(goStructFieldNames('Probe')[0], 'exec'); // embedded ProbeHandler flattened
  });
});

describe('hashes', () => {
  test('FNV-1 and FNV-1a 32-bit', () => {
    assert.equal(fnv1_32(''), 0x811c9dc5);
    assert.equal(fnv1a_32(''), 0x811c9dc5);
    assert.equal(fnv1_32('a'), 0x050c5d7e);
    assert.equal(fnv1a_32('a'), 0xe40c292c);
    assert.equal(fnv1a_32('foobar'), 0xbf9cf968);
    assert.equal(fnv1_32('foo', 'bar'), fnv1_32('foobar'));
  });
  test('go-spew %#v of a byte slice', () => {
    assert.equal(spewByteSlice('[{"'), '([]uint8)[91 123 34]');
    assert.equal(spewByteSlice('é'), '([]uint8)[195 169]');
  });
});
