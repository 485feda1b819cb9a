// Reading X.509 for the webhook with node:crypto only: the certificates of a PEM bundle as the facts cert-plan.ts
// decides on, and whether a private key belongs to its certificate. Issuing is cert-issuer.ts, loaded only when a
// certificate must be issued, so a replica whose Secret holds valid certificates never loads @peculiar/x509.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { CertInfo } from './cert-plan.ts';

export interface CertAndKey {
  /** PEM certificate */
  readonly cert: string;
  /** PEM PKCS#8 private key */
  readonly key: string;
}

/**
 * IPv6 addresses in their RFC 5952 form ('::1'), as the hosts are written: OpenSSL prints a certificate's IPv6 SAN
 * uncompressed and upper-case ('0:0:0:0:0:0:0:1'); the WHATWG URL parser canonicalises it.
 */
function canonicalIP(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

/** One entry of OpenSSL's subjectAltName text; Node quotes (JSON) values with separators in them. */
function sanValue(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'string' ? v : raw;
  } catch {
    return raw;
  }
}

/** Splits OpenSSL's "DNS:a, IP Address:1.2.3.4" at the separators outside quoted values. */
function sanEntries(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '"' && text[i - 1] !== '\\') quoted = !quoted;
    if (!quoted && ch === ',' && text[i + 1] === ' ') {
      out.push(cur);
      cur = '';
      i++;
      continue;
    }
    cur += ch;
  }
  if (cur !== '') out.push(cur);
  return out;
}

function certInfo(pem: string): CertInfo {
  const c = new X509Certificate(pem);
  const dnsNames: string[] = [];
  const ips: string[] = [];
  for (const entry of sanEntries(c.subjectAltName ?? '')) {
    if (entry.startsWith('DNS:')) dnsNames.push(sanValue(entry.slice('DNS:'.length)));
    else if (entry.startsWith('IP Address:')) ips.push(canonicalIP(sanValue(entry.slice('IP Address:'.length))));
  }
  return {
    subject: c.subject,
    issuer: c.issuer,
    notBefore: c.validFromDate.getTime(),
    notAfter: c.validToDate.getTime(),
    dnsNames,
    ips,
  };
}

/** Every certificate of a PEM bundle, in order; throws on a malformed PEM. */
export function parseCertificates(pem: string): CertInfo[] {
  if (pem.trim() === '') return [];
  const blocks = splitPem(pem);
  if (blocks.length === 0) throw new Error('no PEM CERTIFICATE block');
  return blocks.map(certInfo);
}

/** Splits a PEM bundle into its certificates' PEM blocks (same order as parseCertificates). */
export function splitPem(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)?.map((b) => `${b}\n`) ?? [];
}

/** Does the private key belong to the certificate? (a torn Secret must not be served; any key algorithm) */
export async function keyMatchesCertificate(pair: CertAndKey): Promise<boolean> {
  try {
    return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key));
  } catch {
    return false;
  }
}
