import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createJsonPatch, escapePointerToken } from './json-patch.ts';
import { applyJsonPatch } from './testing/json-patch.ts';

describe('createJsonPatch', () => {
  test('equal documents give no operation', () => {
    assert.deepEqual(createJsonPatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), []);
  });

  test('added, changed and removed keys become add, replace and remove at their pointer', () => {
    const ops = createJsonPatch({ spec: { a: 1, gone: true } }, { spec: { a: 2, added: 'x' } });
    assert.deepEqual(ops, [
      { op: 'remove', path: '/spec/gone' },
      { op: 'replace', path: '/spec/a', value: 2 },
      { op: 'add', path: '/spec/added', value: 'x' },
    ]);
  });

  test('keys with / and ~ are escaped (label keys such as app.kubernetes.io/name)', () => {
    assert.equal(escapePointerToken('a/b~c'), 'a~1b~0c');
    assert.deepEqual(createJsonPatch({ labels: {} }, { labels: { 'app.kubernetes.io/name': 'x' } }), [{ op: 'add', path: '/labels/app.kubernetes.io~1name', value: 'x' }]);
  });

  test('arrays of another length are replaced whole; of the same length, element by element', () => {
    assert.deepEqual(createJsonPatch({ c: [1, 2] }, { c: [1, 2, 3] }), [{ op: 'replace', path: '/c', value: [1, 2, 3] }]);
    assert.deepEqual(createJsonPatch({ c: [{ n: 'a' }] }, { c: [{ n: 'a', p: 'Always' }] }), [{ op: 'add', path: '/c/0/p', value: 'Always' }]);
  });

  test('property: applying the patch to the source gives the target', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    fc.assert(
      fc.property(json, json, (a, b) => {
        // compared as JSON text: what goes over the wire (-0 and 0 are both 0 there)
        assert.deepEqual(JSON.parse(JSON.stringify(applyJsonPatch(a, createJsonPatch(a, b)))), JSON.parse(JSON.stringify(b)));
      }),
      { numRuns: 500 },
    );
  });
});
