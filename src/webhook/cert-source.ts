// Where the serving certificate comes from.
// - SecretCertificates (default): self-managed, kept in Secret cloneset-controller-webhook-certs (keys ca.crt = the CA
//   bundle, ca.key, tls.crt, tls.key). The first replica creates it; a replica that loses the create race
//   (AlreadyExists) or a write race (409 on the resourceVersion precondition) re-reads and adopts what won, so any
//   number of replicas converge on one Secret. Rotation decisions: cert-plan.ts.
// - DirCertificates (--webhook-cert-dir): tls.crt/tls.key (and ca.crt, when present, for the caBundle) mounted by
//   cert-manager or from a Secret; re-read when the files change.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import type { ResourceRef } from '../kube/resources.ts';
import type { Clock } from '../runtime/clock.ts';
import { nextCheckDelay, newestCA, planCertificates, policyFor, type CertInfo, type CertState } from './cert-plan.ts';
import { keyMatchesCertificate, parseCertificates, splitPem, type CertAndKey } from './certificates.ts';

export const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
/** When the newest CA entered the bundle (RFC 3339); the serving certificate moves to it one propagation wait later. */
export const CA_ROTATED_AT_ANNOTATION = 'cloneset-controller.kruise.io/ca-rotated-at';

export interface CertificateSnapshot {
  readonly serving: CertAndKey;
  /** PEM bundle for the caBundle fields; undefined = leave them alone (e.g. cert-manager's cainjector owns them) */
  readonly caBundle?: string;
  /** ms until the source should be looked at again */
  readonly nextCheckMs: number;
}

export interface CertificateSource {
  sync(): Promise<CertificateSnapshot>;
  /** called when the source knows it changed before nextCheckMs (file watch) */
  onChange?(fn: () => void): void;
  close?(): void;
}

interface SecretObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

function decode(data: Record<string, string> | undefined, key: string): string {
  const v = data?.[key];
  return v === undefined ? '' : Buffer.from(v, 'base64').toString('utf8');
}

function safeParse(pem: string): CertInfo[] {
  try {
    return parseCertificates(pem);
  } catch {
    return [];
  }
}

export interface SecretCertificatesOptions {
  /** the webhook's client; only these three calls are made */
  readonly client: Pick<KubeClient, 'get' | 'create' | 'patch'>;
  readonly namespace: string;
  readonly secretName: string;
  readonly hosts: readonly string[];
  readonly validityMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class SecretCertificates implements CertificateSource {
  readonly #o: SecretCertificatesOptions;
  readonly #policy: ReturnType<typeof policyFor>;

  constructor(o: SecretCertificatesOptions) {
    this.#o = o;
    this.#policy = policyFor(o.validityMs);
  }

  async #read(): Promise<SecretObject | undefined> {
    try {
      return await this.#o.client.get<SecretObject>(SECRETS, this.#o.namespace, this.#o.secretName);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async #state(secret: SecretObject | undefined): Promise<{ state: CertState; caPem: string[]; caKey: string; serving?: CertAndKey }> {
    const caPem = splitPem(decode(secret?.data, 'ca.crt'));
    const bundle = caPem.map((b) => safeParse(b)[0]).filter((c): c is CertInfo => c !== undefined);
    const caKey = decode(secret?.data, 'ca.key');
    const newest = newestCA(bundle);
    const newestPem = newest === undefined ? undefined : caPem[bundle.indexOf(newest)];
    const newestCAKeyUsable = newestPem !== undefined && caKey !== '' && (await keyMatchesCertificate({ cert: newestPem, key: caKey }));
    const pair = { cert: decode(secret?.data, 'tls.crt'), key: decode(secret?.data, 'tls.key') };
    const servingInfo = pair.cert === '' ? undefined : safeParse(pair.cert)[0];
    const servingOk = servingInfo !== undefined && (await keyMatchesCertificate(pair));
    const rotatedAt = secret?.metadata.annotations?.[CA_ROTATED_AT_ANNOTATION];
    const rotatedAtMs = rotatedAt === undefined ? NaN : Date.parse(rotatedAt);
    return {
      state: {
        bundle,
        newestCAKeyUsable,
        ...(servingOk ? { serving: servingInfo } : {}),
        ...(Number.isFinite(rotatedAtMs) ? { caRotatedAt: rotatedAtMs } : {}),
      },
      caPem,
      caKey,
      ...(servingOk ? { serving: pair } : {}),
    };
  }

  async sync(): Promise<CertificateSnapshot> {
    const { client, namespace, secretName, hosts, logger, clock } = this.#o;
    for (let attempt = 1; ; attempt++) {
      const secret = await this.#read();
      const now = clock.now();
      const cur = await this.#state(secret);
      const plan = planCertificates(cur.state, hosts, now, this.#policy);
      if (!plan.newCA && !plan.newServing && plan.dropCAs.length === 0 && cur.serving !== undefined) {
        return { serving: cur.serving, caBundle: cur.caPem.join(''), nextCheckMs: nextCheckDelay(cur.state, now, this.#policy) };
      }
      const { validityMs, backdateMs } = this.#policy;
      // Only now: the issuing library costs memory that a replica reading valid certificates never needs.
      const { generateCA, issueServingCertificate } = await import('./cert-issuer.ts');
      let ca: CertAndKey;
      if (plan.newCA) {
        ca = await generateCA(now, validityMs, backdateMs);
      } else {
        const newest = newestCA(cur.state.bundle);
        const pem = newest === undefined ? undefined : cur.caPem[cur.state.bundle.indexOf(newest)];
        if (pem === undefined) throw new Error('internal: no CA to sign with');
        ca = { cert: pem, key: cur.caKey };
      }
      const kept = cur.caPem.filter((_, i) => {
        const info = cur.state.bundle[i];
        return info !== undefined && !plan.dropCAs.includes(info.subject);
      });
      const bundlePem = [...kept, ...(plan.newCA ? [ca.cert] : [])];
      const serving = plan.newServing || cur.serving === undefined ? await issueServingCertificate(ca, hosts, now, validityMs, backdateMs) : cur.serving;
      const data = {
        'ca.crt': Buffer.from(bundlePem.join('')).toString('base64'),
        'ca.key': Buffer.from(ca.key).toString('base64'),
        'tls.crt': Buffer.from(serving.cert).toString('base64'),
        'tls.key': Buffer.from(serving.key).toString('base64'),
      };
      const rotatedAt = plan.newCA ? new Date(now).toISOString() : secret?.metadata.annotations?.[CA_ROTATED_AT_ANNOTATION];
      const annotations = rotatedAt === undefined ? {} : { [CA_ROTATED_AT_ANNOTATION]: rotatedAt };
      try {
        if (secret === undefined) {
          await client.create(SECRETS, namespace, {
            apiVersion: 'v1',
            kind: 'Secret',
            type: 'Opaque',
            metadata: { name: secretName, namespace, annotations, labels: { 'app.kubernetes.io/name': 'cloneset-controller', 'app.kubernetes.io/component': 'webhook' } },
            data,
          });
        } else {
          // resourceVersion in a patch is a precondition: 409 if another replica wrote first
          await client.patch(SECRETS, namespace, secretName, { metadata: { resourceVersion: secret.metadata.resourceVersion, annotations }, data }, 'merge');
        }
      } catch (e) {
        if ((isAlreadyExists(e) || isConflict(e)) && attempt < 5) {
          logger.info({ secret: `${namespace}/${secretName}` }, 'another replica wrote the webhook certificates first; adopting them');
          continue;
        }
        if (isNotFound(e)) throw new Error(`namespace ${namespace} does not exist: create it (kubectl apply -f config/manager/namespace.yaml) or pass --webhook-namespace`);
        throw e;
      }
      logger.info(
        { secret: `${namespace}/${secretName}`, newCA: plan.newCA, newServing: plan.newServing, droppedCAs: plan.dropCAs.length, reasons: plan.reasons },
        secret === undefined ? 'webhook certificates created (new Secret)' : 'webhook certificates rotated',
      );
      // read back on the next round: the state to schedule from is what is stored now
    }
  }
}

/** --webhook-cert-dir: certificates provided by someone else; never written, re-read on change. */
export class DirCertificates implements CertificateSource {
  readonly #dir: string;
  readonly #resyncMs: number;
  #watcher: FSWatcher | undefined;

  constructor(dir: string, resyncMs = 60_000) {
    this.#dir = dir;
    this.#resyncMs = resyncMs;
  }

  async sync(): Promise<CertificateSnapshot> {
    const read = (f: string): string => readFileSync(path.join(this.#dir, f), 'utf8');
    let pair: CertAndKey;
    try {
      pair = { cert: read('tls.crt'), key: read('tls.key') };
    } catch (e) {
      throw new Error(`--webhook-cert-dir ${this.#dir}: cannot read tls.crt and tls.key (${e instanceof Error ? e.message : String(e)}); mount a kubernetes.io/tls Secret there`);
    }
    if (!(await keyMatchesCertificate(pair))) {
      throw new Error(`--webhook-cert-dir ${this.#dir}: tls.key does not belong to tls.crt (or either is not PEM); fix the mounted Secret`);
    }
    let caBundle: string | undefined;
    try {
      caBundle = read('ca.crt');
    } catch {
      caBundle = undefined; // e.g. cert-manager's cainjector fills the caBundle fields
    }
    return { serving: pair, ...(caBundle !== undefined && caBundle.trim() !== '' ? { caBundle } : {}), nextCheckMs: this.#resyncMs };
  }

  /** Secret volumes update by swapping a symlink in the directory: watch the directory, not the files. */
  onChange(fn: () => void): void {
    this.#watcher = watch(this.#dir, { persistent: false }, () => fn());
  }

  close(): void {
    this.#watcher?.close();
  }
}
