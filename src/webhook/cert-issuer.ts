// Issuing X.509 for the webhook: a self-signed CA and a serving certificate signed by it (ECDSA P-256, SHA-256),
// generated in-process with @peculiar/x509 over Node's WebCrypto (the image has no openssl, and node:crypto can
// read certificates but not create them). Kruise's equivalent is pkg/webhook/util/generator/selfsigned.go
// (RSA-2048, 10 years); we keep validity short and rotate instead.
//
// Loaded only when a certificate must be issued (cert-source.ts imports it dynamically): @peculiar/x509 brings
// reflect-metadata, tsyringe and its ASN.1 schemas, several MiB of resident memory that a replica whose Secret
// already holds valid certificates never needs. Reading and checking certificates is certificates.ts (node:crypto).
import 'reflect-metadata'; // @peculiar/x509 resolves its ASN.1 providers through tsyringe, which needs it
import * as x509 from '@peculiar/x509';
import { isIP } from 'node:net';
import { randomBytes, webcrypto } from 'node:crypto';
import type { CertAndKey } from './certificates.ts';

type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A positive 128-bit serial number (RFC 5280 §4.1.2.2). */
function serialNumber(): string {
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString('hex');
}

/**
 * PEM text ending in a newline, as PEM files do: @peculiar/x509 ends at the END line, while bundles are split and
 * joined block by block with one (certificates.ts splitPem), so the Secret's ca.crt and the caBundle the webhook
 * installs from it are the same bytes from the first write.
 */
const pemText = (pem: string): string => (pem.endsWith('\n') ? pem : `${pem}\n`);

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return pemText(x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY'));
}

/** The CA's common name carries its creation time, so that a serving certificate's issuer names the CA generation. */
export function caCommonName(notBeforeMs: number): string {
  return `cloneset-controller-webhook-ca@${Math.floor(notBeforeMs / 1000)}`;
}

export async function generateCA(nowMs: number, validityMs: number, backdateMs = 60_000): Promise<CertAndKey> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${caCommonName(nowMs)}`,
    // backdated a little for clocks that disagree (the API server checks notBefore too)
    notBefore: new Date(nowMs - backdateMs),
    notAfter: new Date(nowMs + validityMs),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: pemText(cert.toString('pem')), key: await exportKey(keys.privateKey) };
}

export async function issueServingCertificate(ca: CertAndKey, hosts: readonly string[], nowMs: number, validityMs: number, backdateMs = 60_000): Promise<CertAndKey> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.key), ALG, false, ['sign']);
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const first = hosts[0] ?? 'localhost';
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${first}`,
    issuer: caCert.subject,
    notBefore: new Date(nowMs - backdateMs),
    // never beyond the CA: a chain is only as valid as its CA
    notAfter: new Date(Math.min(nowMs + validityMs, caCert.notAfter.getTime())),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => (isIP(h) !== 0 ? { type: 'ip', value: h } : { type: 'dns', value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: pemText(cert.toString('pem')), key: await exportKey(keys.privateKey) };
}
