// Kubeconfig files with embedded certificates: the admin's (<state>/kubeconfig) and one per component.
import { readFile, writeFile } from 'node:fs/promises';
import { stringify as toYaml } from 'yaml';
import type { TlsMaterial } from './http.ts';
import type { CertPair } from './pki.ts';

export interface Kubeconfig {
  readonly path: string;
  readonly tls: TlsMaterial;
}

export async function writeKubeconfig(path: string, server: string, ca: string, client: CertPair, user: string): Promise<Kubeconfig> {
  const [caPem, certPem, keyPem] = await Promise.all([readFile(ca), readFile(client.cert), readFile(client.key)]);
  const b64 = (b: Buffer): string => b.toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cloneset-local', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) } }],
    contexts: [{ name: 'cloneset-local', context: { cluster: 'cloneset-local', user, namespace: 'default' } }],
    'current-context': 'cloneset-local',
    preferences: {},
  };
  await writeFile(path, toYaml(doc), { mode: 0o600 });
  return { path, tls: { ca: caPem, cert: certPem, key: keyPem } };
}
