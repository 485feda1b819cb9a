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
  assert.deepEqual([c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs, c.requestTimeoutMs, c.watchIdleTimeoutMs], [15_000, 10_000, 2_000, 30_000, 90_000]);
});

test('the flags take Go durations; 0s turns the deadline and the idle detection off', () => {
  const c = parse(
    '--leader-election-lease-duration=30s',
    '--leader-election-renew-deadline=20s',
    '--leader-election-retry-period=4s',
    '--kube-api-request-timeout=0s',
    '--watch-idle-timeout=0s',
  );
  assert.deepEqual([c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs, c.requestTimeoutMs, c.watchIdleTimeoutMs], [30_000, 20_000, 4_000, 0, 0]);
});

test('lease timings that would let a standby take over from a live leader are refused, naming the flags', () => {
  assert.throws(
    () => parse('--leader-election-renew-deadline=20s'),
    (e: unknown) => e instanceof UsageError && /--leader-election-lease-duration \(15s\) > --leader-election-renew-deadline \(20s\)/.test(e.message),
  );
  assert.throws(() => parse('--leader-election-retry-period=9s'), UsageError);
});

test('--heap-growth-mib: 24 MiB by default, 0 leaves V8 alone, a negative budget is refused', () => {
  assert.equal(parse().heapGrowthMib, 24);
  assert.equal(parse('--heap-growth-mib=0').heapGrowthMib, 0);
  assert.equal(parse('--heap-growth-mib', '64').heapGrowthMib, 64);
  assert.throws(
    () => parse('--heap-growth-mib=-1'),
    (e: unknown) => e instanceof UsageError && /--heap-growth-mib must be a non-negative number/.test(e.message),
  );
});

test('log and metrics flags: format left to the terminal by default, klog verbosities map to levels, bad values refused', () => {
  const c = parse();
  assert.equal(c.logFormat, undefined);
  assert.deepEqual([c.logLevel, c.metricsSecure, c.metricsMaxCloneSets, c.rolloutBlockedWarningAfterMs], ['info', false, 2000, 600_000]);
  const d = parse('--log-format=text', '-v', '4', '--metrics-secure', '--metrics-cert-dir=/certs', '--metrics-max-clonesets=50', '--rollout-blocked-warning-after=2m');
  assert.deepEqual(
    [d.logFormat, d.logLevel, d.metricsSecure, d.metricsCertDir, d.metricsMaxCloneSets, d.rolloutBlockedWarningAfterMs],
    ['text', 'debug', true, '/certs', 50, 120_000],
  );
  assert.equal(parse('--log-level=0').logLevel, 'info');
  assert.equal((parseConfig([], { CLONESET_CONTROLLER_LOG_FORMAT: 'json' }) as ControllerConfig).logFormat, 'json', "the image's setting");
  assert.equal((parseConfig(['--log-format=text'], { CLONESET_CONTROLLER_LOG_FORMAT: 'json' }) as ControllerConfig).logFormat, 'text', 'the flag wins');
  assert.equal(parse('-v=6').logLevel, 'trace');
  assert.throws(
    () => parse('--log-format=yaml'),
    (e: unknown) => e instanceof UsageError && /--log-format must be "json" or "text"/.test(e.message),
  );
  assert.throws(
    () => parse('--log-level=loud'),
    (e: unknown) => e instanceof UsageError && /--log-level must be one of/.test(e.message),
  );
});

test("--sync-period defaults to Kruise's 10h and takes a Go duration or 0 (never)", () => {
  assert.equal(parse().syncPeriodMs, 36_000_000);
  assert.equal(parse('--sync-period=30m').syncPeriodMs, 1_800_000);
  assert.equal(parse('--sync-period=0').syncPeriodMs, 0);
});
