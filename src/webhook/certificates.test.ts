import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { caCommonName, generateCA, issueServingCertificate } from './cert-issuer.ts';
import { keyMatchesCertificate, parseCertificates, splitPem } from './certificates.ts';

describe('certificates', () => {
  test('a self-signed CA signs a serving certificate for DNS names and IPs that Node verifies', async () => {
    const now = Date.UTC(2026, 0, 1);
    const ca = await generateCA(now, 3_600_000, 1000);
    const srv = await issueServingCertificate(ca, ['127.0.0.1', 'fd00::a:1', 'svc.ns.svc'], now, 7_200_000, 1000);
    const caX = new X509Certificate(ca.cert);
    const srvX = new X509Certificate(srv.cert);
    assert.ok(caX.ca);
    assert.ok(srvX.verify(caX.publicKey), 'signed by the CA');
    assert.ok(srvX.checkIssued(caX));
    assert.equal(srvX.checkHost('svc.ns.svc'), 'svc.ns.svc');
    assert.equal(srvX.checkIP('127.0.0.1'), '127.0.0.1');
    const [info] = parseCertificates(srv.cert);
    assert.deepEqual(info?.dnsNames, ['svc.ns.svc']);
    assert.deepEqual(info?.ips, ['127.0.0.1', 'fd00::a:1'], 'IPv6 as the hosts are written (OpenSSL prints FD00:0:0:0:0:0:A:1)');
    assert.equal(info?.issuer, `CN=${caCommonName(now)}`);
    assert.equal(info?.notBefore, now - 1000);
    assert.equal(info?.notAfter, now + 3_600_000, 'never beyond the CA');
  });

  test('keys are checked against their certificate; bundles split and parse in order', async () => {
    const a = await generateCA(0, 60_000);
    const b = await generateCA(1000, 60_000);
    assert.equal(await keyMatchesCertificate(a), true);
    assert.equal(await keyMatchesCertificate({ cert: a.cert, key: b.key }), false);
    assert.equal(await keyMatchesCertificate({ cert: 'garbage', key: a.key }), false);
    assert.equal(splitPem(a.cert + b.cert).length, 2);
    assert.deepEqual(
      parseCertificates(a.cert + b.cert).map((c) => c.subject),
      [`CN=${caCommonName(0)}`, `CN=${caCommonName(1000)}`],
    );
  });
});
