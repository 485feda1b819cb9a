import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isEmptySelector, matchesLabelSelector, selectorToString, validateLabelKey, validateLabelSelector } from './selectors.ts';
import type { LabelSelector } from './types.ts';

describe('matchesLabelSelector', () => {
  test('matchLabels', () => {
    assert.ok(matchesLabelSelector({ matchLabels: { app: 'x' } }, { app: 'x', other: 'y' }));
    assert.ok(!matchesLabelSelector({ matchLabels: { app: 'x' } }, { app: 'y' }));
    assert.ok(!matchesLabelSelector({ matchLabels: { app: 'x' } }, {}));
  });
  test('operators', () => {
    const sel: LabelSelector = {
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    assert.ok(matchesLabelSelector(sel, { tier: 'a', team: 't' }));
    assert.ok(matchesLabelSelector(sel, { tier: 'b', team: '', env: 'dev' }));
    assert.ok(!matchesLabelSelector(sel, { tier: 'c', team: 't' }));
    assert.ok(!matchesLabelSelector(sel, { tier: 'a', team: 't', env: 'prod' }));
    assert.ok(!matchesLabelSelector(sel, { tier: 'a' }));
    assert.ok(!matchesLabelSelector(sel, { tier: 'a', team: 't', legacy: 'x' }));
  });
  test('nil selects nothing, empty selects everything, invalid selects nothing', () => {
    assert.ok(!matchesLabelSelector(undefined, { a: 'b' }));
    assert.ok(matchesLabelSelector({}, { a: 'b' }));
    assert.ok(matchesLabelSelector({ matchLabels: {}, matchExpressions: [] }, {}));
    assert.ok(!matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, { a: 'b' }));
    assert.ok(!matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Gt' as 'In', values: ['1'] }] }, { a: '2' }));
    assert.ok(!matchesLabelSelector({ matchLabels: { 'bad key!': 'x' } }, { 'bad key!': 'x' }));
  });
  test('labels may be missing', () => {
    assert.ok(matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, undefined));
  });
});

describe('selectorToString (status.labelSelector, docs/features.md#status-counters)', () => {
  test('canonical form', () => {
    assert.equal(selectorToString({ matchLabels: { app: 'sample' } }), 'app=sample');
    assert.equal(
      selectorToString({
        matchLabels: { z: '1', app: 'sample' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'env', operator: 'NotIn', values: ['prod', 'dev'] },
          { key: 'has', operator: 'Exists' },
          { key: 'gone', operator: 'DoesNotExist' },
          { key: 'one', operator: 'In', values: ['only'] },
        ],
      }),
      'app=sample,env notin (dev,prod),!gone,has,one in (only),tier in (a,b),z=1',
    );
  });
  test('same key: matchLabels first (stable by key)', () => {
    assert.equal(selectorToString({ matchLabels: { a: 'x' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] }), 'a=x,a');
  });
  test('empty selector', () => {
    assert.equal(selectorToString({}), '');
    assert.equal(selectorToString(undefined), '');
  });
});

describe('isEmptySelector / validation', () => {
  test('isEmptySelector', () => {
    assert.ok(isEmptySelector(undefined));
    assert.ok(isEmptySelector({}));
    assert.ok(isEmptySelector({ matchLabels: {}, matchExpressions: [] }));
    assert.ok(!isEmptySelector({ matchLabels: { a: 'b' } }));
    assert.ok(!isEmptySelector({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }));
  });
  test('label keys', () => {
    assert.deepEqual(validateLabelKey('app'), []);
    assert.deepEqual(validateLabelKey('apps.kruise.io/cloneset-instance-id'), []);
    assert.equal(validateLabelKey('/x').length, 1);
    assert.equal(validateLabelKey('Bad_Prefix/x').length, 1);
    assert.equal(validateLabelKey('a/b/c').length, 1);
    assert.equal(validateLabelKey('x'.repeat(64)).length, 1);
    assert.equal(validateLabelKey('-x').length, 1);
  });
  test('selectors', () => {
    assert.deepEqual(validateLabelSelector({ matchLabels: { app: 'sample' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }] }), []);
    assert.equal(validateLabelSelector({ matchLabels: { app: 'not valid' } }).length, 1);
    assert.equal(validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['b'] }] }).length, 1);
    assert.equal(validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }).length, 1);
    assert.equal(validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Lt' as 'In', values: ['1'] }] }).length, 1);
  });
});
