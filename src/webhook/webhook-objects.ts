// Keeps the objects that route requests to us in place: creates the Mutating/ValidatingWebhookConfiguration when
// missing, rewrites their webhooks when they differ (another mode, a new CA bundle), and points the CRD's conversion
// webhook at us (caBundle, and url or service). Writes only when something differs, so replicas agree quietly.
// Kruise: pkg/webhook/util/configuration/configuration.go and pkg/webhook/util/crd/crd.go in openkruise/kruise.
import type { Logger } from 'pino';
import { isAlreadyExists, isNotFound } from '../kube/api-error.ts';
import { CRDS, type KubeClient } from '../kube/client.ts';
import type { ResourceRef } from '../kube/resources.ts';
import {
  CRD_NAME,
  MUTATING_CONFIGURATION,
  VALIDATING_CONFIGURATION,
  conversionClientConfig,
  mutatingWebhookConfiguration,
  validatingWebhookConfiguration,
  type WebhookEndpoint,
} from './configurations.ts';
import { jsonEqual } from '../api/json-equal.ts';

export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceRef = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'mutatingwebhookconfigurations', namespaced: false };
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

interface Configuration {
  metadata: { name: string; resourceVersion?: string };
  webhooks?: unknown[];
}

interface Crd {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown> } } };
}

export type CrdOutcome = 'unchanged' | 'patched' | 'no-conversion-webhook' | 'crd-missing';

/**
 * When caBundle is undefined (a mounted certificate without ca.crt), the caBundle already in the objects is kept
 * (cert-manager's cainjector writes it).
 */
async function ensureConfiguration(
  client: KubeClient,
  r: ResourceRef,
  desired: Record<string, unknown> & { webhooks: Record<string, unknown>[] },
  keepCA: boolean,
  logger: Logger,
): Promise<void> {
  const name = (desired.metadata as { name: string }).name;
  let existing: Configuration | undefined;
  try {
    existing = await client.get<Configuration>(r, undefined, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (existing === undefined) {
    try {
      await client.create(r, undefined, desired);
      logger.info({ name }, 'webhook configuration created');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e; // another replica created it; the next sync compares
    }
    return;
  }
  let webhooks = desired.webhooks;
  if (keepCA) {
    const old = new Map((existing.webhooks ?? []).map((w) => [(w as { name?: string }).name, w as { clientConfig?: { caBundle?: string } }]));
    webhooks = webhooks.map((w) => {
      const ca = old.get(w.name as string)?.clientConfig?.caBundle;
      return ca === undefined ? w : { ...w, clientConfig: { ...(w.clientConfig as Record<string, unknown>), caBundle: ca } };
    });
  }
  if (jsonEqual(existing.webhooks ?? [], webhooks)) return;
  await client.patch(r, undefined, name, { metadata: { labels: (desired.metadata as { labels: unknown }).labels }, webhooks }, 'merge');
  logger.info({ name }, 'webhook configuration updated');
}

export async function ensureCrdConversion(client: KubeClient, ep: WebhookEndpoint, caBundle: string | undefined, logger: Logger): Promise<CrdOutcome> {
  let crd: Crd;
  try {
    crd = await client.get<Crd>(CRDS, undefined, CRD_NAME);
  } catch (e) {
    if (isNotFound(e)) return 'crd-missing';
    throw e;
  }
  const conversion = crd.spec?.conversion;
  // A CRD that serves one version (strategy None) needs no conversion webhook.
  if (conversion?.strategy !== 'Webhook') return 'no-conversion-webhook';
  const existing = conversion.webhook?.clientConfig ?? {};
  let desired = conversionClientConfig(ep, caBundle);
  if (caBundle === undefined && typeof existing.caBundle === 'string') desired = { ...desired, caBundle: existing.caBundle };
  if (jsonEqual(existing, desired)) return 'unchanged';
  // merge patch: null removes the other mode's field (url and service are mutually exclusive)
  const clear = ep.mode === 'url' ? { service: null } : { url: null };
  await client.patch(CRDS, undefined, CRD_NAME, { spec: { conversion: { webhook: { clientConfig: { ...clear, ...desired } } } } }, 'merge');
  logger.info({ crd: CRD_NAME }, 'CRD conversion webhook updated');
  return 'patched';
}

export async function ensureWebhookObjects(
  client: KubeClient,
  ep: WebhookEndpoint,
  caBundle: string | undefined,
  logger: Logger,
  names: { readonly mutating: string; readonly validating: string } = { mutating: MUTATING_CONFIGURATION, validating: VALIDATING_CONFIGURATION },
): Promise<CrdOutcome> {
  const keepCA = caBundle === undefined;
  const mutating = mutatingWebhookConfiguration(ep, caBundle, names.mutating) as Record<string, unknown> & { webhooks: Record<string, unknown>[] };
  const validating = validatingWebhookConfiguration(ep, caBundle, names.validating) as Record<string, unknown> & { webhooks: Record<string, unknown>[] };
  await ensureConfiguration(client, MUTATING_WEBHOOK_CONFIGURATIONS, mutating, keepCA, logger);
  await ensureConfiguration(client, VALIDATING_WEBHOOK_CONFIGURATIONS, validating, keepCA, logger);
  return ensureCrdConversion(client, ep, caBundle, logger);
}

export { MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION };
