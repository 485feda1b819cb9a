// Secure metrics: who gets /metrics (TokenReview, then SubjectAccessReview), and how often the API server is asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricsAuthorizer, type ReviewPort } from './metrics-auth.ts';

function reviews(): ReviewPort & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    tokenReview(token) {
      calls.push(`token ${token}`);
      if (token === 'prometheus' || token === 'nobody') return Promise.resolve({ authenticated: true, user: { username: `system:serviceaccount:monitoring:${token}` } });
      return Promise.resolve({ authenticated: false });
    },
    accessReview(user, verb, path) {
      calls.push(`access ${user.username ?? ''} ${verb} ${path}`);
      return Promise.resolve(user.username === 'system:serviceaccount:monitoring:prometheus');
    },
  };
}

test('no token or an unknown one is unauthenticated; a user without the permission is forbidden; the reader is allowed', async () => {
  const r = reviews();
  const auth = new MetricsAuthorizer(r, () => 0);
  assert.equal(await auth.authorize(undefined, '/metrics'), 'unauthenticated');
  assert.equal(await auth.authorize('Basic abc', '/metrics'), 'unauthenticated');
  assert.equal(await auth.authorize('Bearer forged', '/metrics'), 'unauthenticated');
  assert.equal(await auth.authorize('Bearer nobody', '/metrics'), 'forbidden');
  assert.equal(await auth.authorize('Bearer prometheus', '/metrics'), 'allowed');
  assert.ok(r.calls.includes('access system:serviceaccount:monitoring:prometheus get /metrics'));
});

test('a verdict is reused for a minute, then asked again', async () => {
  let now = 0;
  const r = reviews();
  const auth = new MetricsAuthorizer(r, () => now);
  await auth.authorize('Bearer prometheus', '/metrics');
  now = 59_000;
  await auth.authorize('Bearer prometheus', '/metrics');
  assert.equal(r.calls.length, 2, 'one TokenReview and one SubjectAccessReview for both scrapes');
  now = 61_000;
  await auth.authorize('Bearer prometheus', '/metrics');
  assert.equal(r.calls.length, 4);
});
