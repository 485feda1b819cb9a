import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonEqual } from './json-equal.ts';

test('two JSON values are equal whatever the order of their keys', () => {
  assert.equal(jsonEqual({ a: 1, b: { c: [1, 'x', null] } }, { b: { c: [1, 'x', null] }, a: 1 }), true);
});

test('a key whose value is undefined counts as absent, as JSON writes it', () => {
  assert.equal(jsonEqual({ a: 1, b: undefined }, { a: 1 }), true);
  assert.equal(jsonEqual({ a: 1 }, { a: 1, b: null }), false);
});

test('any difference in a value, an array length or a type makes them unequal', () => {
  assert.equal(jsonEqual({ a: [1, 2] }, { a: [1, 2, 3] }), false);
  assert.equal(jsonEqual({ a: { b: 'x' } }, { a: { b: 'y' } }), false);
  assert.equal(jsonEqual([1], { 0: 1 }), false);
  assert.equal(jsonEqual('1', 1), false);
  assert.equal(jsonEqual(null, {}), false);
});

test('a shared part is equal without being walked', () => {
  let walked = 0;
  const shared = new Proxy(
    { x: 1 },
    {
      ownKeys: (t) => {
        walked++;
        return Reflect.ownKeys(t);
      },
    },
  );
  assert.equal(jsonEqual({ s: shared, n: 1 }, { s: shared, n: 1 }), true);
  assert.equal(walked, 0);
});
