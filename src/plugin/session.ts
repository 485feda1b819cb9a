// The connection of one kubectl-cloneset invocation: kubeconfig and context chosen as kubectl chooses them, the
// namespace (flag, else the context's, else "default"), a client, and errors worded like kubectl's with a hint
// of what to do next.
import type { KubeConfig } from '@kubernetes/client-node';
import pkg from '../../package.json' with { type: 'json' };
import { PLURAL, GROUP, type CloneSet } from '../api/cloneset.ts';
import { ApiError, ConnectionError } from '../kube/api-error.ts';
import { KubeClient, loadKubeConfig } from '../kube/client.ts';
import { discoverCloneSetApi, type CloneSetApi } from './cloneset-api.ts';
import { KubeConfigError } from '../kube/kubeconfig.ts';
import type { Flags } from './flags.ts';

export const VERSION = `v${pkg.version}`;
export const USER_AGENT = `kubectl-cloneset/${pkg.version}`;
/** As kubectl names the resource in errors ("clonesets.apps.kruise.io \"web\" not found"). */
export const RESOURCE = `${PLURAL}.${GROUP}`;
/** As kubectl names an object it acted on ("cloneset.apps.kruise.io/web scaled"). */
export const OBJECT_PREFIX = `cloneset.${GROUP}`;

/** An error whose message is complete and actionable: printed as `error: <message>`, exit code 1. */
export class PluginError extends Error {
  override readonly name = 'PluginError';
}

export interface Session {
  readonly client: KubeClient;
  readonly namespace: string;
  /** e.g. "https://127.0.0.1:6443" (for error messages). */
  readonly server: string;
  readonly contextName: string;
  /** The apps.kruise.io version the API server prefers, and the mapping to and from the internal model. */
  readonly api: CloneSetApi;
}

export function selectContext(kc: KubeConfig, context: string | undefined): void {
  if (context === undefined) return;
  if (kc.getContextObject(context) === null) {
    const known = kc.getContexts().map((c) => c.name);
    throw new PluginError(`context "${context}" does not exist in the kubeconfig (contexts: ${known.join(', ') || 'none'}); list them with: kubectl config get-contexts`);
  }
  kc.setCurrentContext(context);
}

export async function openSession(flags: Flags): Promise<Session> {
  let kc: KubeConfig;
  try {
    kc = loadKubeConfig(flags.kubeconfig);
  } catch (e) {
    if (e instanceof KubeConfigError) throw new PluginError(e.message);
    throw e;
  }
  selectContext(kc, flags.context);
  const contextName = kc.getCurrentContext();
  const ctxNamespace = kc.getContextObject(contextName)?.namespace;
  const namespace = flags.namespace ?? (ctxNamespace !== undefined && ctxNamespace !== '' ? ctxNamespace : 'default');
  // A command line tool reports an unreachable server at once (kubectl does not retry a refused connection):
  // two quick retries, and a request that gets no answer gives up after 10 s instead of the controller's 30 s.
  const client = await KubeClient.fromKubeConfig(kc, {
    qps: 50,
    burst: 100,
    userAgent: USER_AGENT,
    policy: { maxRetries: 2, backoffBaseMs: 100, backoffMaxMs: 1000, requestTimeoutMs: 10_000 },
  });
  try {
    const api = await discoverCloneSetApi(client);
    return { client, namespace, server: client.server, contextName, api };
  } catch (e) {
    client.close();
    throw new PluginError(describeError(e, { contextName }));
  }
}

/** kubectl's wording for API errors, plus a next step where there is an obvious one. */
export function describeError(e: unknown, session?: Pick<Session, 'contextName'>): string {
  if (e instanceof PluginError || e instanceof KubeConfigError) return e.message;
  if (e instanceof ConnectionError) {
    const cause = e.cause instanceof Error ? e.cause.message : String(e.cause);
    const ctx = session === undefined ? '' : ` (context "${session.contextName}")`;
    return (
      `the connection to the server ${e.server}${ctx} failed: ${cause}\n` +
      'Check that the cluster is running and that the kubeconfig points at it: kubectl cluster-info, kubectl config current-context'
    );
  }
  if (e instanceof ApiError) {
    const message = e.status?.message ?? e.message;
    if (e.reason === 'Unauthorized') return `error from server (Unauthorized): ${message}; check the credentials of the kubeconfig context`;
    if (e.reason === 'Forbidden') return `error from server (Forbidden): ${message}`;
    return `error from server (${e.reason}): ${message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

export async function getCloneSet(s: Session, name: string): Promise<CloneSet> {
  try {
    return s.api.toInternal(await s.client.get<CloneSet>(s.api.resource, s.namespace, name));
  } catch (e) {
    if (e instanceof ApiError && e.reason === 'NotFound') {
      // A 404 without details is the path itself: the CRD (the resource type) is not served.
      if (e.status?.details?.name === undefined) {
        throw new PluginError(
          `the server doesn't have a resource type "${RESOURCE}" (apps.kruise.io): install the CRD with kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml`,
        );
      }
      throw new PluginError(`${RESOURCE} "${name}" not found in namespace "${s.namespace}"; list them with: kubectl get clonesets -n ${s.namespace}`);
    }
    throw e;
  }
}

/** The type prefixes kubectl accepts for a CloneSet in TYPE/NAME (kind, plural, short name, with the group). */
const TYPE_NAMES = new Set(['cloneset', 'clonesets', 'clone', 'cloneset.apps.kruise.io', 'clonesets.apps.kruise.io', 'clone.apps.kruise.io']);

/** NAME from `NAME` or `TYPE/NAME` (`cloneset/web`, `clonesets.apps.kruise.io/web`), as kubectl takes it. */
export function objectName(arg: string): string {
  const slash = arg.indexOf('/');
  if (slash < 0) return arg;
  const type = arg.slice(0, slash).toLowerCase();
  const name = arg.slice(slash + 1);
  if (!TYPE_NAMES.has(type)) throw new PluginError(`"${arg}": kubectl cloneset works on CloneSets only; write NAME or cloneset/NAME`);
  if (name === '' || name.includes('/')) throw new PluginError(`"${arg}": write NAME or cloneset/NAME`);
  return name;
}

/** The one positional NAME (or TYPE/NAME) of a command, or a usage error that says which command wanted it. */
export function nameArg(positionals: readonly string[], index: number, usage: string): string {
  const name = positionals[index];
  if (name === undefined || name === '') throw new PluginError(`NAME is required\nUsage: ${usage}`);
  if (positionals.length > index + 1) throw new PluginError(`unexpected arguments: ${positionals.slice(index + 1).join(' ')}\nUsage: ${usage}`);
  return objectName(name);
}
