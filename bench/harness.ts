// What every benchmark command shares: the common flags, the local control plane (started unless --kubeconfig
// names a cluster) with the CloneSet CRD installed, a fresh namespace per run, polling with a deadline, and the
// process exit. The scenarios live in bench/scale.ts, bench/rollout.ts and bench/inplace.ts.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { isAlreadyExists, isNotFound } from '../src/kube/api-error.ts';
import { KubeClient } from '../src/kube/client.ts';
import { loadKubeConfig } from '../src/kube/kubeconfig.ts';
import { CRDS, NAMESPACES, PODS, type ResourceRef } from '../src/kube/resources.ts';
import { runBounded } from '../src/runtime/bounded-parallel.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { kubeconfigPathOf, startLocalCluster, stopLocalCluster, type ClusterProfile } from '../tools/localcluster/cluster.ts';
import { stopRunningChildren } from './child-process.ts';
import { startWebhookProcess, type WebhookProcess } from './webhook-process.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CRD_FILE = path.join(ROOT, 'config/crd/apps.kruise.io_clonesets.yaml');
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true };
/** The controller's client defaults, printed when no controller flags are given. */
export const DEFAULT_CONTROLLER_FLAGS = 'defaults: --kube-api-qps=30 --kube-api-burst=50';

export const log = (msg: string): void => void process.stderr.write(`${msg}\n`);
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Polls `probe` until it returns a value that is not undefined; throws after `timeoutMs`. */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${secs(timeoutMs)} waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The flags every benchmark takes (spread into its `parseArgs` options). */
export const CLUSTER_OPTIONS = {
  pods: { type: 'string' },
  clonesets: { type: 'string' },
  kubeconfig: { type: 'string' },
  'state-dir': { type: 'string' },
  'keep-cluster': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface ClusterArgs {
  readonly pods: number;
  /** --clonesets: the pods are spread over this many CloneSets (default 1). */
  readonly cloneSets: number;
  readonly kubeconfig: string | undefined;
  readonly stateDir: string;
  readonly keepCluster: boolean;
  /** Everything after `--`: passed to the controller. */
  readonly controllerArgs: readonly string[];
}

interface ClusterValues {
  readonly pods?: string | undefined;
  readonly clonesets?: string | undefined;
  readonly kubeconfig?: string | undefined;
  readonly 'state-dir'?: string | undefined;
  readonly 'keep-cluster'?: boolean | undefined;
  readonly help?: boolean | undefined;
}

/** The common flags of `parseArgs` output; prints `usage` and exits on --help. The state dir defaults to .cluster/<stateDirName>. */
export function clusterArgs(values: ClusterValues, positionals: readonly string[], usage: string, stateDirName: string): ClusterArgs {
  if (values.help === true) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const pods = Number(values.pods ?? '1000');
  if (!Number.isInteger(pods) || pods <= 0) throw new Error(`--pods: not a positive count: ${values.pods ?? ''}`);
  const cloneSets = Number(values.clonesets ?? '1');
  if (!Number.isInteger(cloneSets) || cloneSets <= 0 || cloneSets > pods) throw new Error(`--clonesets: not a count between 1 and --pods (${pods}): ${values.clonesets ?? ''}`);
  return {
    pods,
    cloneSets,
    kubeconfig: values.kubeconfig,
    stateDir: path.resolve(values['state-dir'] ?? path.join(ROOT, '.cluster', stateDirName)),
    keepCluster: values['keep-cluster'] === true,
    controllerArgs: positionals,
  };
}

/**
 * Runs `fn` against the cluster of --kubeconfig, or against a local control plane started in the state dir (and
 * stopped afterwards unless --keep-cluster), with the CloneSet CRD installed.
 */
export async function withCluster(
  args: ClusterArgs,
  fn: (client: KubeClient, kubeconfig: string) => Promise<void>,
  opts: { auditLog?: boolean; profile?: ClusterProfile; kruiseCrds?: readonly string[] | undefined } = {},
): Promise<void> {
  let kubeconfig = args.kubeconfig;
  const ownCluster = kubeconfig === undefined;
  if (kubeconfig === undefined) {
    const profile = opts.profile ?? 'default';
    log(`starting a local control plane${profile === 'default' ? '' : ` (profile ${profile})`} in ${args.stateDir}…`);
    await stopLocalCluster(args.stateDir).catch(() => undefined);
    await startLocalCluster({ stateDir: args.stateDir, auditLog: opts.auditLog === true, profile });
    kubeconfig = kubeconfigPathOf(args.stateDir);
  }
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { qps: 1000, burst: 2000 });
  let webhook: WebhookProcess | undefined;
  const stopCluster = ownCluster && !args.keepCluster;
  // Interrupted, the benchmark stops what it started (the controller, the webhook, the control plane) before it
  // exits, as the `finally` below does when it ends. A benchmark with a handler of its own (bench:chaos ends after
  // its current round) is left to unwind through the `finally`, a second signal to this handler. A signal during the
  // clean-up exits at once, saying what may still run.
  let cleaningUp = false;
  const interrupted = (signal: NodeJS.Signals): void => {
    if (process.listenerCount(signal) > 1) return;
    const exitCode = signal === 'SIGINT' ? 130 : 143;
    if (cleaningUp) {
      log(`${signal} again: exiting${stopCluster ? `; \`npm run cluster -- down --state-dir ${args.stateDir}\` stops the control plane` : ''}`);
      process.exit(exitCode);
    }
    cleaningUp = true;
    log(`${signal}: stopping the benchmark's processes${stopCluster ? ' and the local control plane' : ''}…`);
    void stopRunningChildren()
      .then(() => (stopCluster ? stopLocalCluster(args.stateDir) : undefined))
      .catch((e: unknown) => log(`clean-up after ${signal} failed: ${String(e)}; stop the control plane with \`npm run cluster -- down --state-dir ${args.stateDir}\``))
      .finally(() => process.exit(exitCode));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  try {
    if (opts.kruiseCrds === undefined) await installCrd(client, undefined);
    else for (const file of opts.kruiseCrds) await installCrd(client, file);
    // Our own cluster gets our webhook (the CRD converts through it); a cluster named by --kubeconfig is expected
    // to run one already (npm run demo, hack/test.sh or the Helm chart). Kruise's own CRDs (bench:scale --kruise)
    // serve v1alpha1 CloneSets alone and convert nothing.
    if (ownCluster && opts.kruiseCrds === undefined) webhook = await startWebhookProcess(client, kubeconfig, path.join(args.stateDir, 'logs'));
    await fn(client, kubeconfig);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await webhook?.stop();
    client.close();
    if (stopCluster) {
      log('stopping the local control plane…');
      await stopLocalCluster(args.stateDir);
    }
  }
}

/** Our CloneSet CRD, or one of Kruise's build, `kruiseCrdFile` (Kruise's CloneSet CRD replaces ours whole, conversion included). */
async function installCrd(client: KubeClient, kruiseCrdFile: string | undefined): Promise<void> {
  const crd = parseYaml(readFileSync(kruiseCrdFile ?? CRD_FILE, 'utf8')) as KubeObject & { spec?: Record<string, unknown> };
  const name = crd.metadata?.name ?? '';
  try {
    await client.create(CRDS, undefined, crd);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const live = await client.get<KubeObject & { spec?: { conversion?: unknown } }>(CRDS, undefined, name);
    // Keep the live conversion settings: on a cluster named by --kubeconfig the running webhook (URL mode, as
    // hack/test.sh and `npm run demo` run it) wrote its own URL and CA bundle there, and the file's Service
    // reference would cut every CloneSet read off from it.
    const keepConversion = kruiseCrdFile === undefined && live.spec?.conversion !== undefined;
    const spec = { ...crd.spec, ...(keepConversion ? { conversion: live.spec?.conversion } : {}) };
    await client.update(CRDS, undefined, name, { ...crd, spec, metadata: { ...crd.metadata, resourceVersion: live.metadata?.resourceVersion } });
  }
  await until(
    'the CRD to be established',
    async () => {
      const live = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(CRDS, undefined, name);
      return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true ? true : undefined;
    },
    60_000,
  );
}

/** A fresh namespace name: `<prefix>-<6 hex digits>`. */
export const namespaceName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

/** Creates the namespace and waits for its default ServiceAccount (pod admission rejects pods until it exists). */
export async function createNamespace(client: KubeClient, ns: string): Promise<void> {
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await until('the default ServiceAccount', () => client.get(SERVICE_ACCOUNTS, ns, 'default').catch(() => undefined), 60_000);
}

/**
 * Deletes the namespace; with `waitUntilGone`, a next run does not share the API server with the deletion of N pods.
 * The wait is `goneWithinMs` long (10 min by default); past it the run goes on, the log says so, and the answer is
 * false. Session 34's 100 000-pod limit, left to its namespace's deletion, still had 40 000 pods after 30 min,
 * kwok playing each pod's deletion beside the fleet that scaled up meanwhile: delete the pods at once first
 * (`deletePodsAtOnce`) when nothing recreates them.
 */
export async function deleteNamespace(client: KubeClient, ns: string, waitUntilGone: boolean, goneWithinMs = 600_000): Promise<boolean> {
  await client.delete(NAMESPACES, undefined, ns).catch((e: unknown) => (isNotFound(e) ? undefined : log(`namespace ${ns} not deleted: ${String(e)}`)));
  if (!waitUntilGone) return true;
  return until(
    `namespace ${ns} to be gone`,
    () =>
      client.get(NAMESPACES, undefined, ns).then(
        () => undefined,
        (e: unknown) => (isNotFound(e) ? true : undefined),
      ),
    goneWithinMs,
    500,
  ).catch((e: unknown) => {
    log(`${String(e)}: the next phase shares the API server with the deletion`);
    return false;
  });
}

/**
 * Deletes every pod of the namespace at once (grace period 0), 64 in flight, before the namespace itself: a
 * namespace's graceful deletion costs two writes per pod (the namespace controller marks each pod, then kwok, as
 * a kubelet, removes it): 200 000 writes at 100 000 pods, still going on while the next phase measures. With grace
 * period 0 the API server removes each pod at once (5 000 pods in 34.7 s on the 2-core machine).
 * Only for a namespace whose controller has been stopped: nothing recreates the pods.
 */
export async function deletePodsAtOnce(client: KubeClient, ns: string): Promise<void> {
  const { items } = await client.listAll<KubeObject>(PODS, ns);
  const names = items.flatMap((p) => (p.metadata?.name === undefined ? [] : [p.metadata.name]));
  if (names.length === 0) return;
  log(`deleting the ${names.length} pods of ${ns} (grace period 0)…`);
  const t0 = Date.now();
  const { error } = await runBounded(
    names.map(
      (name) => () =>
        client.delete(PODS, ns, name, { gracePeriodSeconds: 0 }).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        }),
    ),
    64,
  );
  if (error !== undefined) log(`not every pod of ${ns} was deleted (the namespace's deletion does the rest): ${String(error)}`);
  else log(`deleted ${names.length} pods in ${secs(Date.now() - t0)}`);
}

/** Runs a benchmark's main and exits: 0 when it resolves, 1 with the error on stderr otherwise. */
export function runBenchmark(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
