import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { nextCheckDelay, planCertificates, policyFor, type CertInfo, type CertState } from './cert-plan.ts';

const HOUR = 3_600_000;
const policy = { ...policyFor(90 * HOUR), propagationMs: 10_000 };
const hosts = ['svc.ns.svc'];
const ca = (name: string, from: number, to = from + 90 * HOUR): CertInfo => ({ subject: `CN=${name}`, issuer: `CN=${name}`, notBefore: from, notAfter: to, dnsNames: [], ips: [] });
const serving = (issuer: string, from: number, to = from + 90 * HOUR, dnsNames = hosts): CertInfo => ({
  subject: 'CN=svc',
  issuer: `CN=${issuer}`,
  notBefore: from,
  notAfter: to,
  dnsNames,
  ips: [],
});
const state = (over: Partial<CertState>): CertState => ({ bundle: [ca('ca1', 0)], newestCAKeyUsable: true, serving: serving('ca1', 0), ...over });

describe('planCertificates', () => {
  test('first start: a CA and a serving certificate', () => {
    const p = planCertificates({ bundle: [], newestCAKeyUsable: false }, hosts, 0, policy);
    assert.deepEqual([p.newCA, p.newServing], [true, true]);
  });

  test('fresh certificates are kept', () => {
    const p = planCertificates(state({}), hosts, 10 * HOUR, policy);
    assert.deepEqual([p.newCA, p.newServing, p.dropCAs.length], [false, false, 0]);
  });

  test('at 2/3 of the CA lifetime: a new CA joins the bundle, the serving certificate stays until the bundle propagated', () => {
    const p = planCertificates(state({}), hosts, 60 * HOUR, policy);
    assert.deepEqual([p.newCA, p.newServing], [true, false]);
  });

  test('after the propagation wait, the serving certificate moves to the new CA; not before', () => {
    const rotated = state({ bundle: [ca('ca1', 0), ca('ca2', 60 * HOUR)], serving: serving('ca1', 0), caRotatedAt: 60 * HOUR });
    assert.equal(planCertificates(rotated, hosts, 60 * HOUR + 5_000, policy).newServing, false);
    const p = planCertificates(rotated, hosts, 60 * HOUR + 10_000, policy);
    assert.deepEqual([p.newCA, p.newServing], [false, true]);
  });

  test('an old CA leaves the bundle only once expired', () => {
    const s = state({ bundle: [ca('ca1', 0), ca('ca2', 60 * HOUR)], serving: serving('ca2', 60 * HOUR), caRotatedAt: 60 * HOUR });
    assert.deepEqual(planCertificates(s, hosts, 89 * HOUR, policy).dropCAs, []);
    assert.deepEqual(planCertificates(s, hosts, 90 * HOUR, policy).dropCAs, ['CN=ca1']);
  });

  test('the serving certificate alone is re-issued at 2/3 of its lifetime, or when it misses a host name', () => {
    const s = state({ bundle: [ca('ca1', 0, 900 * HOUR)], serving: serving('ca1', 0) });
    assert.deepEqual(Object.values(planCertificates(s, hosts, 61 * HOUR, policy)).slice(0, 2), [false, true]);
    assert.equal(planCertificates(s, ['other.host', ...hosts], HOUR, policy).newServing, true);
  });

  test('a CA key that does not match, an expired serving certificate or one from an unknown CA: replaced at once', () => {
    assert.equal(planCertificates(state({ newestCAKeyUsable: false }), hosts, HOUR, policy).newCA, true);
    assert.equal(planCertificates(state({ serving: serving('ca1', 0, HOUR) }), hosts, 2 * HOUR, policy).newServing, true);
    assert.equal(planCertificates(state({ serving: serving('stranger', 0) }), hosts, HOUR, policy).newServing, true);
    assert.equal(planCertificates({ bundle: [ca('ca1', 0)], newestCAKeyUsable: true }, hosts, HOUR, policy).newServing, true);
  });
});

describe('nextCheckDelay', () => {
  const p = { ...policy, resyncMs: 60_000 };
  test('the resync interval when nothing is due sooner', () => {
    assert.equal(nextCheckDelay(state({}), HOUR, p), 60_000);
  });
  test('the 2/3 point when it comes first, the propagation end while a serving certificate waits for it', () => {
    assert.equal(nextCheckDelay(state({}), 60 * HOUR - 1000, p), 1000);
    const waiting = state({ bundle: [ca('ca1', 0), ca('ca2', 60 * HOUR)], serving: serving('ca1', 0), caRotatedAt: 60 * HOUR });
    assert.equal(nextCheckDelay(waiting, 60 * HOUR + 4000, p), 6000);
  });
  test('never below 200 ms', () => {
    assert.equal(nextCheckDelay(state({}), 60 * HOUR - 10, p), 200);
  });
});

describe('policyFor', () => {
  test('intervals scale with the validity, within bounds', () => {
    assert.deepEqual([policyFor(120_000).resyncMs, policyFor(120_000).propagationMs], [6000, 4000]);
    assert.deepEqual([policyFor(8760 * HOUR).resyncMs, policyFor(8760 * HOUR).propagationMs], [60_000, 10_000]);
  });
});
