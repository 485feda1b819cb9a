// OpenKruise's own manager as the controller under benchmark (`bench:scale --kruise`), so that both controllers
// are measured the same way, on the same control plane, by the same commands (docs/performance.md "Side by side
// with Kruise"). hack/build-kruise.sh builds it from the Go module proxy; the cluster gets Kruise's own CRDs of
// that version instead of ours.
//
// The manager runs outside the cluster, as ours does in the benchmarks: its metrics and probes on free local ports,
// no leader election. Its informers watch the whole cluster: with --namespace its Advanced DaemonSet controller
// panics at setup (v1.8.2: a namespaced cache's informer is not a SharedIndexInformer), and the benchmark's
// control plane holds nothing else of note (the run's namespace, the kwok nodes). Its webhook controller
// must find its two webhook configurations before it starts any controller (pkg/webhook/util/configuration); they
// are created empty, so the API server calls no Kruise webhook: like ours (whose webhook is a separate process),
// the figures are the controllers' alone. Its certificates are written to a directory of the run (WEBHOOK_HOST set
// selects Kruise's file cert writer).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isAlreadyExists } from '../src/kube/api-error.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { NAMESPACES, type ResourceRef } from '../src/kube/resources.ts';
import { freePort } from '../tools/localcluster/free-port.ts';
import { spawnLogged } from './child-process.ts';
import type { ControllerProcess } from './controller-process.ts';
import { ROOT, log, until } from './harness.ts';

const MUTATING: ResourceRef = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'mutatingwebhookconfigurations', namespaced: false };
const VALIDATING: ResourceRef = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', namespaced: false };
/** Kruise's default namespace (pkg/webhook/util): of its webhook certificates' Secret and its leader election. */
const KRUISE_NAMESPACE = 'kruise-system';

/** The directory with Kruise's manager and its CRDs, built once (hack/build-kruise.sh; $KRUISE_DIR overrides). */
export function kruiseDir(): string {
  log('Kruise manager: hack/build-kruise.sh (builds it from the Go module proxy the first time, 5 to 10 minutes)…');
  return execFileSync('bash', [path.join(ROOT, 'hack/build-kruise.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/**
 * Kruise's CRD files of the build in `dir`, all of them: its manager registers field indexes on several kinds
 * (ImagePullJob among them) before it starts, and exits when one is missing. Its other controllers find no
 * object of their kinds and stay idle.
 */
export const kruiseCrdFiles = (dir: string): string[] =>
  readdirSync(path.join(dir, 'crds'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => path.join(dir, 'crds', f));

async function createIfAbsent(client: KubeClient, r: ResourceRef, body: object): Promise<void> {
  try {
    await client.create(r, undefined, body);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/**
 * Starts Kruise's manager and resolves once its CloneSet controller is set up (its active-workers gauge exists),
 * which happens after the webhook controller's first sync.
 * `extraArgs` go to the manager as given (e.g. `--rest-config-qps=100000 --rest-config-burst=100000`).
 */
export async function startKruiseManager(client: KubeClient, dir: string, kubeconfig: string, ns: string, extraArgs: readonly string[]): Promise<ControllerProcess> {
  await createIfAbsent(client, NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KRUISE_NAMESPACE } });
  // Kruise's defaults (pkg/webhook/util/configuration): the configurations its webhook controller fills in.
  for (const [r, kind, name] of [
    [MUTATING, 'MutatingWebhookConfiguration', 'kruise-mutating-webhook-configuration'],
    [VALIDATING, 'ValidatingWebhookConfiguration', 'kruise-validating-webhook-configuration'],
  ] as const) {
    await createIfAbsent(client, r, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks: [] });
  }
  const logDir = path.join(ROOT, '.cluster', 'bench-logs');
  const certDir = path.join(logDir, `kruise-certs-${ns}`);
  rmSync(certDir, { recursive: true, force: true });
  mkdirSync(certDir, { recursive: true });
  const logFile = path.join(logDir, `kruise-manager-${ns}.log`);
  const [metricsPort, probePort, webhookPort] = [await freePort(), await freePort(), await freePort()];
  const { proc, stop } = spawnLogged(
    [`--metrics-addr=127.0.0.1:${metricsPort}`, `--health-probe-addr=127.0.0.1:${probePort}`, '--enable-leader-election=false', '--enable-pprof=false', ...extraArgs],
    logFile,
    {
      command: path.join(dir, 'kruise-manager'),
      env: { ...process.env, KUBECONFIG: kubeconfig, WEBHOOK_HOST: '127.0.0.1', WEBHOOK_PORT: String(webhookPort), WEBHOOK_CERT_DIR: certDir },
    },
  );
  if (proc.pid === undefined) throw new Error('the Kruise manager did not start');
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  try {
    await until(
      `the Kruise manager's CloneSet controller to start (log ${path.relative(ROOT, logFile)})`,
      async () => {
        if (proc.exitCode !== null) throw new Error(`the Kruise manager exited with ${String(proc.exitCode)}; see ${logFile}`);
        // one plain attempt per poll: scrape() retries for a second, and the server is not up at first
        const body = await fetch(metricsUrl).then(
          (r) => r.text(),
          () => '',
        );
        // (v1.8.2 exports no workqueue metrics; this gauge exists once the controller is set up)
        return /^controller_runtime_active_workers\{controller="cloneset-controller"\}/m.test(body) ? true : undefined;
      },
      300_000,
      250,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { pid: proc.pid, metricsUrl, logFile, stop };
}
