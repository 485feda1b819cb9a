// Flags of leader election and of the request policy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, UsageError, type ControllerConfig } from './config.ts';

const parse = (...argv: string[]): ControllerConfig => {
  const c = parseConfig(argv, {});
  assert.notEqual(c, 'help');
  return c as ControllerConfig;
};

test('leader election and request policy flags default like controller-runtime and client-go', () => {
  const c = parse();
  assert.deepEqual(
    [c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs, c.requestTimeoutMs, c.watchIdleTimeoutMs],
    [15_000, 10_000, 2_000, 30_000, 90_000],
  );
});

test('the flags take Go durations; 0s turns the deadline and the idle detection off', () => {
  const c = parse('--leader-election-lease-duration=30s', '--leader-election-renew-deadline=20s', '--leader-election-retry-period=4s',
    '--kube-api-request-timeout=0s', '--watch-idle-timeout=0s');
  assert.deepEqual([c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs, c.requestTimeoutMs, c.watchIdleTimeoutMs], [30_000, 20_000, 4_000, 0, 0]);
});

test('lease timings that would let a standby take over from a live leader are refused, naming the flags', () => {
  assert.throws(() => parse('--leader-election-renew-deadline=20s'), (e: unknown) =>
    e instanceof UsageError && /--leader-election-lease-duration \(15s\) > --leader-election-renew-deadline \(20s\)/.test(e.message));
  assert.throws(() => parse('--leader-election-retry-period=9s'), UsageError);
});

test('--sync-period defaults to Kruise\'s 10h and takes a Go duration or 0 (never)', () => {
  assert.equal(parse().syncPeriodMs, 36_000_000);
  assert.equal(parse('--sync-period=30m').syncPeriodMs, 1_800_000);
  assert.equal(parse('--sync-period=0').syncPeriodMs, 0);
});
