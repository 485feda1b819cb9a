// The webhook's composition: certificate source → HTTPS server (hot-swapped certificate) → webhook configurations
// and CRD conversion kept pointing at us with the current CA bundle. Runs in `cloneset-controller webhook` and,
// unless --webhook-port=0, inside the controller process too.
import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import type { FeatureGates } from '../api/well-known.ts';
import { errorText, isNotFound } from '../kube/api-error.ts';
import { PODS, type KubeClient } from '../kube/client.ts';
import type { Pod } from '../kube/types.ts';
import type { Clock, TimerHandle } from '../runtime/clock.ts';
import { DirCertificates, SecretCertificates, type CertificateSource } from './cert-source.ts';
import { DEFAULT_NAME_PREFIX, servingHosts, webhookNames, type WebhookEndpoint } from './configurations.ts';
import type { AdmissionHandlers } from './contracts.ts';
import { WebhookServer } from './server.ts';
import { ensureWebhookObjects } from './webhook-objects.ts';

function serialOf(pem: string): string {
  try {
    return new X509Certificate(pem).serialNumber;
  } catch {
    return '';
  }
}

export interface WebhookOptions {
  readonly port: number;
  /** URL mode: the API server calls https://<host>:<port>/…; undefined = Service mode */
  readonly host?: string;
  readonly namespace: string;
  /** --webhook-name-prefix: names the Service, the certificate Secret and the webhook configurations. */
  readonly namePrefix?: string;
  readonly certDir?: string;
  readonly certValidityMs: number;
}

export interface RunningWebhook {
  readonly server: WebhookServer;
  ready(): boolean;
  /** resolves once stopped (after the signal aborted) */
  readonly done: Promise<void>;
}

export function webhookEndpoint(o: WebhookOptions): WebhookEndpoint {
  return o.host !== undefined
    ? { mode: 'url', host: o.host, port: o.port }
    : { mode: 'service', namespace: o.namespace, service: webhookNames(o.namePrefix ?? DEFAULT_NAME_PREFIX).service };
}

/** GETs only the named pods (at most the podsToDelete entries a request adds), concurrently. */
export function podFetcher(client: KubeClient): (ns: string, names: readonly string[]) => Promise<ReadonlyMap<string, Pod>> {
  return async (ns, names) => {
    const found = await Promise.all(
      names.map(async (name) => {
        try {
          return await client.get<Pod>(PODS, ns, name);
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw new Error(`reading pod ${ns}/${name} for the podsToDelete check: ${errorText(e)}; retry the request`);
        }
      }),
    );
    return new Map(found.filter((p): p is Pod => p !== undefined).map((p) => [p.metadata.name ?? '', p]));
  };
}

export function startWebhook(
  o: WebhookOptions,
  deps: { client: KubeClient; handlers: AdmissionHandlers; gates: FeatureGates; clock: Clock; logger: Logger; signal: AbortSignal },
): RunningWebhook {
  const logger = deps.logger.child({ subsystem: 'webhook' });
  const ep = webhookEndpoint(o);
  const names = webhookNames(o.namePrefix ?? DEFAULT_NAME_PREFIX);
  let objectsInPlace = false;
  const server = new WebhookServer({ handlers: deps.handlers, gates: deps.gates, fetchPods: podFetcher(deps.client), logger, ready: () => objectsInPlace });
  const source: CertificateSource =
    o.certDir !== undefined
      ? new DirCertificates(o.certDir)
      : new SecretCertificates({
          client: deps.client,
          namespace: o.namespace,
          secretName: names.secret,
          hosts: servingHosts(ep, o.namespace),
          validityMs: o.certValidityMs,
          clock: deps.clock,
          logger,
        });
  let timer: TimerHandle | undefined;
  let running = false;
  let again = false;
  let servedCert = '';
  let failures = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const schedule = (ms: number): void => {
    timer?.cancel();
    if (!deps.signal.aborted) timer = deps.clock.setTimeout(() => void tick(), ms);
  };
  const tick = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const snap = await source.sync();
      if (snap.serving.cert !== servedCert) {
        const first = servedCert === '';
        await server.setCertificate(snap.serving, o.port, undefined);
        servedCert = snap.serving.cert;
        logger.info(
          { port: server.port, mode: ep.mode, url: ep.mode === 'url' ? `https://${ep.host}:${o.port}` : undefined, serial: serialOf(snap.serving.cert) },
          first ? 'webhook server listening' : 'webhook serving certificate reloaded',
        );
      }
      const crd = await ensureWebhookObjects(deps.client, ep, snap.caBundle, logger, names);
      if (!objectsInPlace) logger.info({ crdConversion: crd }, 'webhook ready');
      objectsInPlace = true;
      failures = 0;
      schedule(snap.nextCheckMs);
    } catch (e) {
      failures++;
      const ms = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
      logger.error(
        { err: errorText(e), retryInMs: ms },
        'webhook certificate/configuration sync failed (check RBAC: secrets in the webhook namespace, webhook configurations, the CRD)',
      );
      schedule(ms);
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule(0);
      }
    }
  };
  source.onChange?.(() => schedule(100));
  deps.signal.addEventListener(
    'abort',
    () => {
      timer?.cancel();
      source.close?.();
      void server.close().then(() => finish());
    },
    { once: true },
  );
  schedule(0);
  return { server, ready: () => server.isReady(), done };
}
