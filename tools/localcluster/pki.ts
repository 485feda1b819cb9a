// Throw-away PKI for the local control plane, made with the openssl CLI (ECDSA P-256: fast to generate).
//   ca.crt/.key             signs everything below; also the --client-ca-file of kube-apiserver
//   apiserver.crt/.key      serving certificate (localhost, 127.0.0.1, kubernetes.default.svc…, 10.96.0.1)
//   <client>.crt/.key       client certificates: the identity is CN (user) and O (groups)
//   sa.key/sa.pub           service-account token signing key pair
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ClientIdentity {
  /** file base name */
  readonly name: string;
  readonly user: string;
  readonly groups: readonly string[];
}

export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

export interface Pki {
  readonly dir: string;
  readonly ca: CertPair;
  readonly apiserver: CertPair;
  readonly clients: Readonly<Record<string, CertPair>>;
  readonly serviceAccount: { readonly privateKey: string; readonly publicKey: string };
}

/** The service ClusterIP of `kubernetes.default` for --service-cluster-ip-range=10.96.0.0/16. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

function openssl(args: readonly string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd }, (err, _stdout, stderr) => {
      if (err !== null) reject(new Error(`openssl ${args[0] ?? ''} failed: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = '3650';

function subject(user: string, groups: readonly string[]): string {
  const esc = (s: string): string => s.replaceAll('\\', '\\\\').replaceAll('/', '\\/').replaceAll('=', '\\=');
  return groups.map((g) => `/O=${esc(g)}`).join('') + `/CN=${esc(user)}`;
}

async function signedLeaf(dir: string, name: string, subj: string, extensions: string): Promise<CertPair> {
  const ext = `${name}.ext`;
  await writeFile(join(dir, ext), extensions);
  await openssl(['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-out',
      `${name}.crt`,
      '-days',
      DAYS,
      '-extfile',
      ext,
    ],
    dir,
  );
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

export async function generatePki(dir: string, clients: readonly ClientIdentity[]): Promise<Pki> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await openssl(
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      DAYS,
      '-subj',
      '/CN=cloneset-local-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const sans = [
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
    'IP:127.0.0.1',
    `IP:${KUBERNETES_SERVICE_IP}`,
  ].join(',');
  const serverExt = `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`;
  const clientExt = 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n';
  const serviceAccount = (async () => {
    await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'sa.key'], dir);
    await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  })();
  const server = signedLeaf(dir, 'apiserver', '/CN=kube-apiserver', serverExt);
  const signed = Promise.all(clients.map(async (c) => [c.name, await signedLeaf(dir, c.name, subject(c.user, c.groups), clientExt)] as const));
  const [apiserver, clientPairs] = await Promise.all([server, signed, serviceAccount]);
  const clientMap: Record<string, CertPair> = Object.fromEntries(clientPairs);
  return {
    dir,
    ca: { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') },
    apiserver,
    clients: clientMap,
    serviceAccount: { privateKey: join(dir, 'sa.key'), publicKey: join(dir, 'sa.pub') },
  };
}
