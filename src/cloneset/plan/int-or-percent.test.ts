import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { partitionAbs, scaledValue } from './int-or-percent.ts';

describe('scaledValue (legacy GetValueFromIntOrPercent)', () => {
  test('an integer is taken as is, whatever the total', () => {
    assert.equal(scaledValue(3, 10, true), 3);
    assert.equal(scaledValue(0, 10, false), 0);
    assert.equal(scaledValue(2147483647, 5, true), 2147483647);
  });

  test('undefined resolves to 0', () => {
    assert.equal(scaledValue(undefined, 10, true), 0);
  });

  test('a percentage rounds up or down as asked', () => {
    assert.equal(scaledValue('30%', 5, true), 2);
    assert.equal(scaledValue('30%', 5, false), 1);
    assert.equal(scaledValue('40%', 5, false), 2);
    assert.equal(scaledValue('20%', 3, true), 1);
    assert.equal(scaledValue('20%', 3, false), 0);
  });

  test('"12.5%" is not an integer percentage and resolves to 0', () => {
    assert.equal(scaledValue('12.5%', 100, true), 0);
  });

  test('a string without "%" is still a percentage: "5" is 5 %', () => {
    assert.equal(scaledValue('5', 100, true), 5);
    assert.equal(scaledValue('50', 10, true), 5);
  });

  test('every "%" is stripped, signs are accepted, junk is 0', () => {
    assert.equal(scaledValue('%50%', 10, true), 5);
    assert.equal(scaledValue('+50%', 10, true), 5);
    assert.equal(scaledValue('abc', 10, true), 0);
    assert.equal(scaledValue('', 10, true), 0);
    assert.equal(scaledValue(' 5%', 10, true), 0);
  });

  test('a negative percentage never yields negative zero', () => {
    assert.equal(scaledValue('-10%', 5, true), 0);
    assert.equal(scaledValue('-10%', 5, false), -1);
  });
});

describe('partitionAbs (Kruise CalculatePartitionReplicas)', () => {
  test('undefined is 0, an integer is itself (clamped to [0, replicas])', () => {
    assert.equal(partitionAbs(undefined, 5), 0);
    assert.equal(partitionAbs(3, 5), 3);
    assert.equal(partitionAbs(9, 5), 5);
    assert.equal(partitionAbs(-1, 5), 0);
  });

  test('an integer equal to replicas keeps every pod old (the at-least-one rule is for strings only)', () => {
    assert.equal(partitionAbs(5, 5), 5);
  });

  test('"99%" of 5 rounds up to 5 and then gives one pod back to the update', () => {
    assert.equal(partitionAbs('99%', 5), 4);
  });

  test('the literal "100%" keeps every pod old, "100.0%" does not', () => {
    assert.equal(partitionAbs('100%', 5), 5);
    assert.equal(partitionAbs('100.0%', 5), 4);
  });

  test('decimals are allowed and round up', () => {
    assert.equal(partitionAbs('12.5%', 10), 2);
    assert.equal(partitionAbs('90%', 4), 3); // ceil(3.6) = 4 = replicas → 3
    assert.equal(partitionAbs('50%', 5), 3);
  });

  test('with one replica the at-least-one rule does not apply', () => {
    assert.equal(partitionAbs('99%', 1), 1);
  });

  test('over 100 % clamps to replicas', () => {
    assert.equal(partitionAbs('150%', 5), 5);
  });

  test('a string without "%" or with junk is an error and resolves to 0', () => {
    assert.equal(partitionAbs('3', 5), 0);
    assert.equal(partitionAbs('x%', 5), 0);
    assert.equal(partitionAbs('%', 5), 0);
  });

  test('replicas 0 always gives 0', () => {
    assert.equal(partitionAbs('50%', 0), 0);
    assert.equal(partitionAbs(3, 0), 0);
  });
});
