// The objects that route admission and conversion to us: the Mutating/ValidatingWebhookConfiguration and the CRD's
// conversion webhook. Pure builders; the same builders render config/webhook/*.yaml (Service mode), checked by a test.
// Kruise's objects: config/webhook/manifests.yaml and pkg/webhook/util/configuration in openkruise/kruise.
import { CLONESET_VERSIONS, type CloneSetVersion } from './contracts.ts';

export const WEBHOOK_NAMESPACE = 'cloneset-system';
export const SECRET_NAME = 'cloneset-controller-webhook-certs';
export const SERVICE_NAME = 'cloneset-controller-webhook-service';
export const MUTATING_CONFIGURATION = 'cloneset-controller-mutating-webhook-configuration';
export const VALIDATING_CONFIGURATION = 'cloneset-controller-validating-webhook-configuration';
/** The default of --webhook-name-prefix: the names above. */
export const DEFAULT_NAME_PREFIX = 'cloneset-controller';

/** The names of our webhook objects; a Helm release passes its own prefix, so two releases never share them. */
export interface WebhookNames {
  readonly service: string;
  readonly secret: string;
  readonly mutating: string;
  readonly validating: string;
}

export function webhookNames(prefix: string): WebhookNames {
  return {
    service: `${prefix}-webhook-service`,
    secret: `${prefix}-webhook-certs`,
    mutating: `${prefix}-mutating-webhook-configuration`,
    validating: `${prefix}-validating-webhook-configuration`,
  };
}
export const CRD_NAME = 'clonesets.apps.kruise.io';
export const CONVERT_PATH = '/convert';
/** The API server waits at most this long for an answer (also its default; the maximum is 30). */
export const TIMEOUT_SECONDS = 10;

export function mutatePath(v: CloneSetVersion): string {
  return `/mutate-apps-kruise-io-${v}-cloneset`;
}
export function validatePath(v: CloneSetVersion): string {
  return `/validate-apps-kruise-io-${v}-cloneset`;
}

/** How the API server reaches us: a Service in the cluster, or a URL (local control plane, --webhook-host). */
export type WebhookEndpoint =
  | { readonly mode: 'service'; readonly namespace: string; readonly service: string }
  | { readonly mode: 'url'; readonly host: string; readonly port: number };

/** The host names the serving certificate must cover. */
export function servingHosts(ep: WebhookEndpoint, namespace: string): string[] {
  const name = ep.mode === 'service' ? ep.service : SERVICE_NAME;
  const svc = [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`];
  return ep.mode === 'url' ? [...new Set([ep.host, 'localhost', ...svc])] : svc;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host; // IPv6 literal
}

export function clientConfig(ep: WebhookEndpoint, path: string, caBundle: string | undefined): Record<string, unknown> {
  const ca = caBundle === undefined ? {} : { caBundle: Buffer.from(caBundle).toString('base64') };
  if (ep.mode === 'url') return { url: `https://${urlHost(ep.host)}:${ep.port}${path}`, ...ca };
  return { service: { namespace: ep.namespace, name: ep.service, path, port: 443 }, ...ca };
}

function rules(v: CloneSetVersion, operations: readonly string[]): Record<string, unknown>[] {
  return [{ apiGroups: ['apps.kruise.io'], apiVersions: [v], operations: [...operations], resources: ['clonesets'], scope: '*' }];
}

/**
 * One webhook per served version with matchPolicy Exact: each request is admitted once, in the version it was sent
 * in (with Equivalent the API server would also convert it and call the other version's webhook).
 * failurePolicy Fail as Kruise: while no webhook process answers, CloneSet writes are refused rather than stored
 * unchecked and without defaults (the CRD's CEL rules would still run, but defaults and pod checks would not).
 * Every field the API server would default is set, so that an unchanged configuration is never rewritten.
 */
function webhook(name: string, ep: WebhookEndpoint, path: string, caBundle: string | undefined, v: CloneSetVersion, operations: readonly string[]): Record<string, unknown> {
  return {
    name,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(ep, path, caBundle),
    failurePolicy: 'Fail',
    matchPolicy: 'Exact',
    namespaceSelector: {},
    objectSelector: {},
    rules: rules(v, operations),
    sideEffects: 'None',
    timeoutSeconds: TIMEOUT_SECONDS,
  };
}

function suffix(v: CloneSetVersion): string {
  return v === 'v1alpha1' ? '' : `-${v}`;
}

export function mutatingWebhooks(ep: WebhookEndpoint, caBundle: string | undefined): Record<string, unknown>[] {
  return CLONESET_VERSIONS.map((v) => ({ ...webhook(`mcloneset${suffix(v)}.kb.io`, ep, mutatePath(v), caBundle, v, ['CREATE', 'UPDATE']), reinvocationPolicy: 'Never' }));
}

/** DELETE too, as Kruise, for its deletion protection (ResourcesDeletionProtection gate). */
export function validatingWebhooks(ep: WebhookEndpoint, caBundle: string | undefined): Record<string, unknown>[] {
  return CLONESET_VERSIONS.map((v) => webhook(`vcloneset${suffix(v)}.kb.io`, ep, validatePath(v), caBundle, v, ['CREATE', 'UPDATE', 'DELETE']));
}

const LABELS = { 'app.kubernetes.io/name': 'cloneset-controller', 'app.kubernetes.io/component': 'webhook' };

export function mutatingWebhookConfiguration(ep: WebhookEndpoint, caBundle: string | undefined, name = MUTATING_CONFIGURATION): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name, labels: LABELS },
    webhooks: mutatingWebhooks(ep, caBundle),
  };
}

export function validatingWebhookConfiguration(ep: WebhookEndpoint, caBundle: string | undefined, name = VALIDATING_CONFIGURATION): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels: LABELS },
    webhooks: validatingWebhooks(ep, caBundle),
  };
}

/** The CRD's `spec.conversion.webhook.clientConfig` we want (url in URL mode, service in Service mode). */
export function conversionClientConfig(ep: WebhookEndpoint, caBundle: string | undefined): Record<string, unknown> {
  return clientConfig(ep, CONVERT_PATH, caBundle);
}

/** The Service in front of the webhook port (Service mode). */
export function webhookService(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: SERVICE_NAME, namespace, labels: LABELS },
    spec: {
      selector: { 'app.kubernetes.io/name': 'cloneset-controller' },
      ports: [{ name: 'webhook', port: 443, targetPort: 9443, protocol: 'TCP' }],
    },
  };
}
