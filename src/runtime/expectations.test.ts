import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from './clock.ts';
import { isResourceVersionAtLeast, ResourceVersionExpectations, ScaleExpectations } from './expectations.ts';

const TTL = 5 * 60_000;

test('scale expectations with nothing expected are satisfied', () => {
  const e = new ScaleExpectations(new FakeClock(0), TTL);
  assert.deepEqual(e.check('ns/cs'), { satisfied: true });
});

test('scale expectations are unsatisfied until every expected name is observed', () => {
  const clock = new FakeClock(0);
  const e = new ScaleExpectations(clock, TTL);
  e.expect('ns/cs', 'create', 'pod-a');
  e.expect('ns/cs', 'create', 'pod-b');
  e.expect('ns/cs', 'delete', 'pod-c');
  assert.equal(e.check('ns/cs').satisfied, false);
  e.observe('ns/cs', 'create', 'pod-a');
  e.observe('ns/cs', 'create', 'pod-c'); // wrong action: does not count
  e.observe('ns/cs', 'delete', 'pod-b');
  assert.deepEqual(e.pending('ns/cs'), { create: ['pod/pod-b'], delete: ['pod/pod-c'] });
  e.observe('ns/cs', 'create', 'pod-b');
  e.observe('ns/cs', 'delete', 'pod-c');
  assert.deepEqual(e.check('ns/cs'), { satisfied: true });
  assert.equal(e.check('ns/other').satisfied, true, 'keys are independent');
});

test('a pod and a PVC of the same name are tracked separately', () => {
  const e = new ScaleExpectations(new FakeClock(0), TTL);
  e.expect('k', 'create', 'x', 'pvc');
  e.observe('k', 'create', 'x', 'pod');
  assert.equal(e.check('k').satisfied, false);
  e.observe('k', 'create', 'x', 'pvc');
  assert.equal(e.check('k').satisfied, true);
});

test('the pending time starts at the first unsatisfied check, and times out at the TTL', () => {
  const clock = new FakeClock(1_000);
  const e = new ScaleExpectations(clock, TTL);
  e.expect('k', 'create', 'p');
  clock.advance(60_000); // time before the first check does not count
  assert.deepEqual(e.check('k'), { satisfied: false, pendingForMs: 0, remainingMs: TTL, timedOut: false });
  clock.advance(TTL - 1);
  e.expect('k', 'create', 'q'); // a later expect does not reset the clock
  assert.deepEqual(e.check('k'), { satisfied: false, pendingForMs: TTL - 1, remainingMs: 1, timedOut: false });
  clock.advance(1);
  assert.deepEqual(e.check('k'), { satisfied: false, pendingForMs: TTL, remainingMs: 0, timedOut: true });
  e.forget('k'); // what the caller does on timeout
  assert.equal(e.check('k').satisfied, true);
});

test('an entry that becomes satisfied and is expected again starts a fresh pending time', () => {
  const clock = new FakeClock(0);
  const e = new ScaleExpectations(clock, TTL);
  e.expect('k', 'delete', 'p');
  e.check('k');
  clock.advance(TTL);
  e.observe('k', 'delete', 'p');
  e.expect('k', 'delete', 'q');
  const c = e.check('k');
  assert.equal(c.satisfied === false && c.pendingForMs, 0);
});

test('resourceVersions compare as unsigned 64-bit integers, not strings or doubles', () => {
  assert.equal(isResourceVersionAtLeast('10', '9'), true);
  assert.equal(isResourceVersionAtLeast('9', '10'), false);
  assert.equal(isResourceVersionAtLeast('10', '10'), true);
  assert.equal(isResourceVersionAtLeast('18446744073709551615', '18446744073709551614'), true);
  assert.equal(isResourceVersionAtLeast('9007199254740993', '9007199254740992'), true);
  assert.equal(isResourceVersionAtLeast('9007199254740992', '9007199254740993'), false);
});

test('non-numeric resourceVersions follow Kruise: a non-numeric reference is always reached, a non-numeric candidate never', () => {
  assert.equal(isResourceVersionAtLeast('5', ''), true);
  assert.equal(isResourceVersionAtLeast('5', 'abc'), true);
  assert.equal(isResourceVersionAtLeast('abc', 'xyz'), true);
  assert.equal(isResourceVersionAtLeast('abc', '5'), false);
  assert.equal(isResourceVersionAtLeast('', '5'), false);
  assert.equal(isResourceVersionAtLeast('-1', '5'), false);
  assert.equal(isResourceVersionAtLeast('+7', '5'), false);
  assert.equal(isResourceVersionAtLeast('18446744073709551616', '5'), false, 'overflows uint64');
  assert.equal(isResourceVersionAtLeast('5', '18446744073709551616'), true);
});

test('randomized: resourceVersion comparison agrees with BigInt order on uint64 values', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (a, b) => {
      assert.equal(isResourceVersionAtLeast(a.toString(), b.toString()), a >= b);
    }),
  );
});

test('resource-version expectations keep the max expected RV and are satisfied once the cache reaches it', () => {
  const clock = new FakeClock(0);
  const e = new ResourceVersionExpectations(clock, TTL);
  assert.deepEqual(e.isSatisfied('uid-1', '1'), { satisfied: true });
  e.expect('uid-1', '100');
  e.expect('uid-1', '90'); // older: ignored
  e.expect('uid-1', 'garbage'); // non-numeric never replaces a numeric one
  assert.equal(e.isSatisfied('uid-1', '99').satisfied, false);
  clock.advance(TTL - 1);
  assert.deepEqual(e.isSatisfied('uid-1', '95'), { satisfied: false, pendingForMs: TTL - 1, remainingMs: 1, timedOut: false });
  clock.advance(1);
  const c = e.isSatisfied('uid-1', '95');
  assert.equal(c.satisfied === false && c.timedOut, true);
  assert.deepEqual(e.isSatisfied('uid-1', '100'), { satisfied: true });
  assert.deepEqual(e.isSatisfied('uid-1', '1'), { satisfied: true }, 'the satisfied entry was forgotten');
});

test('observe drops a reached resource-version expectation; forget drops any', () => {
  const e = new ResourceVersionExpectations(new FakeClock(0), TTL);
  e.expect('u', '10');
  e.observe('u', '9');
  assert.equal(e.isSatisfied('u', '9').satisfied, false);
  e.observe('u', '11');
  assert.equal(e.isSatisfied('u', '1').satisfied, true);
  e.expect('u', '50');
  e.forget('u');
  assert.equal(e.isSatisfied('u', '1').satisfied, true);
});

test('a non-numeric stored RV is replaced by the next expect and an empty one is satisfied at once', () => {
  const e = new ResourceVersionExpectations(new FakeClock(0), TTL);
  e.expect('u', '');
  e.expect('u', '7');
  assert.equal(e.isSatisfied('u', '6').satisfied, false);
  e.forget('u');
  e.expect('u', 'opaque');
  assert.equal(e.isSatisfied('u', 'anything').satisfied, true);
});

test('a resource-version expectation times out one TTL after the write, however late it is first checked', () => {
  const clock = new FakeClock(0);
  const e = new ResourceVersionExpectations(clock, TTL);
  const timedOut = (rv: string): boolean => {
    const c = e.isSatisfied('uid-1', rv);
    return !c.satisfied && c.timedOut;
  };
  e.expect('uid-1', '20');
  // A pass held back by scale expectations checks no resourceVersion for a long while (an etcd restore).
  clock.advance(TTL - 1);
  assert.equal(timedOut('10'), false);
  clock.advance(1);
  assert.equal(timedOut('10'), true);
  // A newer write gives the expectation a fresh TTL.
  e.expect('uid-1', '30');
  clock.advance(TTL - 1);
  assert.equal(timedOut('10'), false);
});
